// Which SASS instructions of a profiled line belong to a finding's access, and the verdict on them.
//
// A source line can compile to many memory instructions: `tmp[i] += A[i * n + j] * x[j]` is three
// global loads and a store, each with its own counters, an unrolled loop repeats every access, and
// the compiler may keep a value in a register (no instruction at all) or move a load to another
// line. A finding is judged on its own access's instructions only: the rules say where the access
// stands among the line's accesses of its kind (memory space, load or store, width; rule_util.h:
// addLineInventory), and matchAccess picks the instructions of that kind and width from the
// export's SASS rows, a global access among several by its useful sectors per request (the SASS
// order does not follow the source's). Loads and stores are compared by the same excess factor
// (sectors / ideal sectors, wavefronts / ideal wavefronts). Where the instructions cannot be told
// apart, the finding is judged only when every candidate gives the same answer.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "analyzer/profile/profile.h"

namespace gpuopt::profile {

// What a finding says about the access it is about (Diagnostic::predicted).
struct AccessKey {
  bool shared = false;  // shared memory (else global)
  bool store = false;   // judged on the line's stores (else its loads)
  unsigned width = 0;   // bytes per lane; 0 unknown
  int count = 0;        // static accesses of this space and direction on the line; 0 unknown
  int countSameWidth = 0;         // the same among those of `width` bytes
  double usefulPerRequest = 0;    // global: the useful sectors a warp's request needs; 0 unknown
};
AccessKey accessKeyOf(const std::map<std::string, double>& predicted, bool shared);

// An instruction's memory kind, from the export (space "Shared"/"Global"/"Generic", operation).
bool isSharedAccess(const Instruction& in);
bool isGlobalAccess(const Instruction& in);  // global, or generic with global sector counts
bool isStore(const Instruction& in);
bool isLoad(const Instruction& in);

struct AccessMatch {
  enum Kind {
    Own,            // the only access of its kind on the line: `own` are its instructions
    BySignature,    // `candidates`: the instructions with this global access's useful sectors per request
    Ambiguous,      // several accesses of the kind: `candidates` are all their instructions
    NoSignature,    // several accesses, and no instruction has this access's useful sectors per request
    NoInstruction,  // no instruction of the access's kind ran on the line
  } kind = NoInstruction;
  std::vector<const Instruction*> candidates;  // the instructions the access may be
  std::vector<const Instruction*> own;         // Own: the access's
  unsigned copies = 0;  // instructions per access (unrolled copies, duplicated paths)
  std::string how;      // "the line's only global load", ...
};
// `lines`: the line in each profiled instance of the kernel (template instances, launches).
AccessMatch matchAccess(const std::vector<const Line*>& lines, const AccessKey& key);

// Excess of memory instructions: sectors (global) or wavefronts (shared) over the ideal.
struct Excess {
  double amount = 0, ideal = 0, requests = 0, executed = 0;
  bool any = false;
  double factor() const { return ideal > 0 ? amount / ideal : 0; }
  double perRequest() const { return requests > 0 ? amount / requests : 0; }
  double idealPerRequest() const { return requests > 0 ? ideal / requests : 0; }
};
Excess excessOf(const std::vector<const Instruction*>& ins, bool shared);

// The verdict of a bank-conflict or uncoalesced-access finding on its own instructions.
struct MemoryVerdict {
  std::string verdict;  // confirmed, differs, not compared
  std::string text;     // the figures (after "this line: N% of K's stall samples; ")
  std::vector<std::pair<std::string, double>> values;
  std::vector<MeasuredInstruction> instructions;  // the line's candidates, own ones marked
  std::vector<const Instruction*> covered;        // instructions the finding speaks for
};
// shared: bank-conflict (predicted "ways"), else uncoalesced-access ("sectors", "usefulSectors",
// "random"). tolerance: confirmed within +-tolerance; excessRatio: a data-dependent access is
// confirmed by an excess of at least this, and an access without a finding is predicted below it.
// others: the predicted factors of the line's other findings of the same kind (same kernel).
MemoryVerdict judgeMemoryFinding(const std::vector<const Line*>& lines, const std::map<std::string, double>& predicted,
                                 bool shared, double tolerance, double excessRatio, const std::vector<double>& others = {});
// Why a figure the finding names for one loop iteration ("perIteration" in Diagnostic::predicted)
// is not compared with fewer measured: the counters average every iteration.
extern const std::string kIterationNote;

// A finding's predicted excess factor (ways, or sectors / useful sectors); 0 when it has none.
double predictedFactor(const std::map<std::string, double>& predicted, bool shared);

// Rounds a figure for text: 32.0 -> "32", 3.92 -> "3.9".
std::string num(double v);
// "1st", "2nd", ...
std::string ordinal(int n);

// Whether a measured figure is within a relative tolerance of the predicted one (both <= 0: equal).
bool within(double measured, double predicted, double tol);

}  // namespace gpuopt::profile
