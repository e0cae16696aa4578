// The one diagnostic model every output format is fed from.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuopt {

enum class Severity { Note, Warning, Error };
std::string_view severityName(Severity s);
bool parseSeverity(std::string_view text, Severity& out);

struct SourcePos {
  std::string file;  // as given on the command line (or as the compiler saw it)
  unsigned line = 0;
  unsigned col = 0;  // 1-based, in bytes
};

struct SourceSpan {
  SourcePos begin;
  unsigned endLine = 0;  // inclusive end (same file)
  unsigned endCol = 0;   // 1-based column of the last character
};

struct Note {
  SourceSpan span;
  std::string message;
};

// A textual replacement that fixes the finding (used by --fix).
struct FixIt {
  SourceSpan span;  // replaced range [begin, end] (end inclusive)
  std::string replacement;
};

// One SASS instruction behind a measurement (`profile`: text with --verbose, JSON "instructions").
struct MeasuredInstruction {
  std::string address, sass;
  double executed = 0;             // warp-level instructions executed (= requests)
  double amount = -1, ideal = -1;  // sectors (global) or wavefronts (shared), and the ideal; -1 none
  bool own = false;                // the finding's own access (else another access of its line)
};

// What Nsight Compute measured on a finding's line (`gpuopt-lint profile`, analyzer/profile/profile.*).
struct Measurement {
  // "confirmed" (the counters of the access's own instructions agree with the prediction),
  // "differs" (both numbers in `text`), "not compared" (the access has no instruction of its own
  // on the line: the compiler removed, merged or moved it, or its instructions cannot be told from
  // other accesses' that disagree), "not executed in this run", "executed" (the counters cannot
  // judge this kind of finding), or "measured only" for a measured-only finding.
  std::string verdict;
  std::string text;    // the figures in one sentence, for text output
  std::string kernel;  // the profiled kernel the line belongs to
  double stallShare = -1;  // the line's share of the kernel's warp-stall samples (0..1); -1 unknown
  // Every figure, for JSON fields and SARIF properties (camelCase keys, in a stable order).
  std::vector<std::pair<std::string, double>> values;
  // The SASS instructions of the line the verdict looked at (the finding's own marked).
  std::vector<MeasuredInstruction> instructions;
};

struct Diagnostic {
  std::string ruleId;
  Severity severity = Severity::Warning;
  SourceSpan span;
  std::string message;
  std::vector<Note> notes;
  std::string fixHint;        // "how to fix it", one sentence
  std::vector<FixIt> fixIts;  // mechanical fixes, if provably right
  std::string demo;           // `gpuopt-lint --demo <demo>` measures it
  std::string function;       // the kernel (or function) it was found in, if any
  // Further places of the same pattern in the same kernel, folded into this finding
  // (groupRepeats); SARIF relatedLocations.
  std::vector<SourceSpan> related;
  // Stable across edits that move lines: rule, kernel, normalised source text (SARIF
  // partialFingerprints), set by assignFingerprints.
  std::string fingerprint;
  // What the rule predicts, in the units a profiler measures (read by `profile` to judge it):
  // "ways" (shared wavefronts per request), "sectors" and "usefulSectors" (global sectors per
  // request), "lanes" (active lanes on the branch's path), "store" (1 for a store), "random" (1
  // for a data-dependent address), "firstLine"/"lastLine" (the lines of a branch statement).
  std::map<std::string, double> predicted;
  std::optional<Measurement> measured;  // set by `profile`
  // What must be the same for two runs of a kernel under different guessed block shapes to count
  // as the same finding (analyzer/model/shapes.h); empty: the message without its assumption. Race
  // rules set the kind of race and the two expressions (the threads named differ by shape). Not
  // written to any output.
  std::string shapeKey;
  // The template instantiations the finding was made for when not every one of its template's
  // (the message names the first few: instantiationSuffix), in full for JSON and SARIF.
  std::vector<std::string> instantiations;
  // The inputs (translation units) a finding in a shared header was reached from, when more than
  // one (mergeAcrossInputs): the message names the first few, JSON and SARIF list them all.
  std::vector<std::string> units;
  // The penalty the pattern showed when measured (rules/impact.cpp), for the cause found: said
  // once per run in text, per finding in JSON ("measuredImpact") and SARIF properties, and in the
  // rule's SARIF help. Empty: nothing measured.
  std::string measuredTag;
  // Static cost (rules/cost.h): 0..1, the place's share of its kernel's estimated global traffic
  // or its frequency relative to the kernel's hottest access (host code: 1 in a loop with device
  // work, low for setup and verification); -1 not estimated. `impactText`: the short text tag.
  double impact = -1;
  std::string impactText;
  // The message in full when `message` was cut to kMaxMessageBytes (capMessages): JSON and SARIF.
  std::string fullMessage;
};

// Problems with an input (not findings): the file could not be analysed.
struct InputError {
  std::string file;
  std::string message;
};

}  // namespace gpuopt
