// Measured-only findings: lines whose counters show a cost no finding explains. One per line and
// kernel (its launches and template instances summed), on instructions no finding was matched to,
// and not where the launch shape explains the counters (a 16-thread block runs 16 of 32 lanes).
#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "analyzer/profile/join_detail.h"
#include "analyzer/profile/match.h"
#include "analyzer/profile/profile.h"

namespace gpuopt::profile::detail {

namespace {

// Lanes a warp of the kernel can have at most, on average over its warps, in the smallest block
// shape profiled: 32, 16 for a 16-thread block, 1 for one thread per block.
double laneCapacity(const Profile& p, const std::string& kernel) {
  double cap = 32;
  for (const auto& k : p.kernels)
    if (k.name == kernel)
      for (const auto& b : k.blocks) {
        double t = double(b[0]) * b[1] * b[2];
        if (t > 0) cap = std::min(cap, t / std::ceil(t / 32));
      }
  return cap;
}

struct Place {
  std::vector<const Line*> lines;  // the line in each instance of the kernel
  double samples = 0, executed = 0, threadExecuted = 0;
};

}  // namespace

void addMeasuredOnly(const Profile& p, std::vector<FileResult>& results, const Covered& covered, const JoinOptions& o) {
  // (file, line, kernel) -> the line's instances; kernel samples summed per kernel name.
  std::map<std::tuple<std::string, unsigned, std::string>, Place> places;
  std::map<std::string, double> kernelSamples;
  for (const auto& k : p.kernels) {
    kernelSamples[k.name] += k.samples;
    for (const auto& l : k.lines) {
      Place& pl = places[{l.file, l.line, k.name}];
      pl.lines.push_back(&l);
      pl.samples += l.samples;
      pl.executed += l.executed;
      pl.threadExecuted += l.threadExecuted;
    }
  }
  // A profiled file's result here: the linted file (or a file its findings are in) with the
  // longest common path suffix.
  std::map<std::string, std::pair<FileResult*, std::string>> linted;
  auto lintedFor = [&](const std::string& profiled) {
    auto it = linted.find(profiled);
    if (it != linted.end()) return it->second;
    auto comps = components(profiled);
    FileResult* best = nullptr;
    std::string bestFile;
    size_t bestN = 0;
    for (auto& r : results) {
      std::set<std::string> files = {r.file};
      for (const auto& d : r.diags) files.insert(d.span.begin.file);
      for (const auto& f : files) {
        size_t n = commonSuffix(comps, components(canonical(f)));
        if (n > bestN) best = &r, bestN = n, bestFile = f;
      }
    }
    return linted[profiled] = {best, bestFile};
  };

  for (const auto& [key, pl] : places) {
    const auto& [profiledFile, lineNo, kernel] = key;
    double ks = kernelSamples[kernel];
    double share = ks > 0 ? pl.samples / ks : 0;
    if (share < o.minShare) continue;
    auto [res, file] = lintedFor(profiledFile);
    if (!res) continue;  // a line of a file that was not linted (toolkit headers)
    // The line as it is here (ncu's copy of the source has its indentation stripped).
    std::string text = pl.lines.front()->source;
    {
      std::ifstream in(file);
      std::string s;
      for (unsigned n = 1; std::getline(in, s); ++n)
        if (n == lineNo) {
          text = s;
          break;
        }
    }
    unsigned col = 1;
    while (col <= text.size() && std::isspace(static_cast<unsigned char>(text[col - 1]))) ++col;
    auto isCovered = [&](const char* kind) {
      return std::any_of(pl.lines.begin(), pl.lines.end(), [&](const Line* l) { return covered.lines.count({l, kind}) > 0; });
    };
    // The uncovered memory instructions of a kind, loads and stores apart; the worse speaks.
    auto worst = [&](bool shared, std::vector<MeasuredInstruction>& list) {
      Excess best;
      for (int store = 0; store < 2; ++store) {
        std::vector<const Instruction*> ins;
        for (const Line* l : pl.lines)
          for (const auto& in : l->instructions)
            if ((shared ? isSharedAccess(in) : isGlobalAccess(in)) && (store ? isStore(in) : isLoad(in)) &&
                in.executed > 0 && !covered.instructions.count(&in))
              ins.push_back(&in);
        Excess e = excessOf(ins, shared);
        if (e.any && e.ideal > 0 && (!best.any || e.factor() > best.factor())) {
          best = e;
          list.clear();
          for (const auto* in : ins)
            list.push_back({in->address, in->sass, in->executed, shared ? in->sharedWavefronts : in->sectors,
                            shared ? in->sharedIdeal : in->sectorsIdeal, true});
        }
      }
      return best;
    };
    Diagnostic d;
    d.severity = Severity::Warning;
    d.span.begin = {file, lineNo, col};
    d.span.endLine = lineNo;
    d.span.endCol = static_cast<unsigned>(std::max<size_t>(col, text.size()));
    d.function = kernel;
    Measurement m;
    m.verdict = "measured only";
    m.kernel = kernel;
    m.stallShare = share;
    m.values = {{"stallShare", share}, {"stallSamples", pl.samples}, {"kernelStallSamples", ks},
                {"instructionsExecuted", pl.executed}};
    m.text = fmt::format("this line: {} of {}'s stall samples", pct(share), kernel);
    std::vector<MeasuredInstruction> list;
    Excess sh = worst(true, list);
    std::vector<MeasuredInstruction> glist;
    Excess gl = worst(false, glist);
    double lanes = pl.executed > 0 ? pl.threadExecuted / pl.executed : 32;
    double capacity = laneCapacity(p, kernel);
    if (sh.any && sh.factor() >= o.excessRatio) {
      d.ruleId = "measured-bank-conflict";
      d.message = fmt::format("measured: shared-memory accesses on this line need {} wavefronts for {} ideal ({}x, an "
                              "average {}-way bank conflict) in '{}'; the static analysis did not predict it (the "
                              "addresses depend on data or on values it could not follow)",
                              num(sh.amount), num(sh.ideal), num(sh.factor()), num(sh.factor()), kernel);
      d.fixHint = "make the lanes of a warp access consecutive 4-byte words, or pad/permute the shared array so that "
                  "their addresses spread over all 32 banks";
      m.values.push_back({"measuredWays", sh.factor()});
      m.values.push_back({"sharedWavefronts", sh.amount});
      m.values.push_back({"sharedWavefrontsIdeal", sh.ideal});
      m.text += fmt::format("; {}-way measured", num(sh.factor()));
      m.instructions = list;
    } else if (gl.any && gl.factor() >= o.excessRatio) {
      d.ruleId = "measured-uncoalesced";
      d.message = fmt::format("measured: global accesses on this line touch {} sectors per request for {} ideal ({}x "
                              "the necessary traffic) in '{}'; the static analysis did not predict it (the addresses "
                              "depend on data or on values it could not follow)",
                              num(gl.perRequest()), num(gl.idealPerRequest()), num(gl.factor()), kernel);
      d.fixHint = "let consecutive lanes access consecutive addresses (structure of arrays, swapped index roles), or "
                  "stage the data through shared memory";
      m.values.push_back({"measuredSectorsPerRequest", gl.perRequest()});
      m.values.push_back({"measuredIdealSectorsPerRequest", gl.idealPerRequest()});
      m.text += fmt::format("; {} sectors per request ({} ideal)", num(gl.perRequest()), num(gl.idealPerRequest()));
      m.instructions = glist;
    } else if (pl.executed > 0 && share >= o.hotShare && !isCovered("lanes") && lanes <= 1.5) {
      // One lane does the work: a serial loop, not a branch the warp splits on.
      d.ruleId = "measured-divergence";
      d.message = capacity <= 1.5
                      ? fmt::format("measured: '{}' runs one thread per block, so this hot line ({} of its stall "
                                    "samples) runs on 1 of 32 lanes; a candidate for a parallel loop",
                                    kernel, pct(share))
                      : fmt::format("measured: one lane of each warp does the work on this hot line of '{}' ({} of 32 "
                                    "lanes active, {} of its stall samples): a serial loop inside a kernel, a "
                                    "candidate for a parallel loop",
                                    kernel, num(lanes), pct(share));
      d.fixHint = "spread the iterations over the threads of the block (a block-stride loop, with a parallel "
                  "reduction if they accumulate), or launch one thread per iteration";
      m.values.push_back({"measuredActiveLanes", lanes});
      m.text += fmt::format("; {} of 32 lanes active", num(lanes));
    } else if (pl.executed > 0 && share >= o.hotShare && !isCovered("lanes") && lanes < o.minLanes &&
               lanes < 0.75 * capacity) {
      // Active lanes: threads executing the line's instructions per warp-level instruction. Lanes
      // switched off by a predicate are not counted as idle here: a predicated `if (tid < s)` whose
      // warps are all on or all off is not divergence. A block of fewer than 32 threads (the
      // capacity) explains its own idle lanes: partial-warp-block says so.
      d.ruleId = "measured-divergence";
      d.message = fmt::format("measured: only {} of 32 lanes are active on average on this hot line of '{}' ({} of "
                              "its stall samples); the static analysis did not predict it (the branch depends on data "
                              "or on values it could not follow)",
                              num(lanes), kernel, pct(share));
      d.fixHint = "group the work so that whole warps take the same path (sort or bin the data by the condition, or "
                  "assign work per warp)";
      m.values.push_back({"measuredActiveLanes", lanes});
      m.text += fmt::format("; {} of 32 lanes active", num(lanes));
    } else {
      continue;
    }
    d.measured = std::move(m);
    res->diags.push_back(std::move(d));
  }
}

}  // namespace gpuopt::profile::detail
