#include "analyzer/profile/match.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace gpuopt::profile {

std::string num(double v) {
  if (std::fabs(v - std::round(v)) < 0.05) return fmt::format("{:.0f}", v);
  if (std::fabs(v) < 0.095) return fmt::format("{:.2f}", v);
  return fmt::format("{:.1f}", v);
}

std::string ordinal(int n) {
  const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

AccessKey accessKeyOf(const std::map<std::string, double>& predicted, bool shared) {
  auto get = [&](const char* k, double def) {
    auto it = predicted.find(k);
    return it == predicted.end() ? def : it->second;
  };
  AccessKey key;
  key.shared = shared;
  key.store = get("store", 0) > 0;
  key.width = static_cast<unsigned>(std::max(0.0, get("width", 0)));
  key.count = static_cast<int>(get("lineCount", 0));
  key.countSameWidth = static_cast<int>(get("lineCountSameWidth", 0));
  if (!shared && get("random", 0) <= 0) key.usefulPerRequest = get("usefulSectors", 0);
  return key;
}

bool isSharedAccess(const Instruction& in) { return in.space == "Shared"; }
bool isGlobalAccess(const Instruction& in) {
  return in.space == "Global" || (in.space == "Generic" && in.sectors >= 0 && in.sectorsIdeal > 0);
}
bool isStore(const Instruction& in) { return in.op == "Store"; }
bool isLoad(const Instruction& in) { return in.op == "Load"; }

namespace {

bool ofKind(const Instruction& in, const AccessKey& key) {
  if (key.shared ? !isSharedAccess(in) : !isGlobalAccess(in)) return false;
  return key.store ? isStore(in) : isLoad(in);
}

struct InstanceMatch {
  AccessMatch::Kind kind = AccessMatch::NoInstruction;
  std::vector<const Instruction*> candidates, own;
  unsigned copies = 0;
  std::string how;
};

InstanceMatch matchInstance(const Line& line, const AccessKey& key) {
  InstanceMatch r;
  for (const auto& in : line.instructions)
    if (ofKind(in, key) && in.executed > 0) r.candidates.push_back(&in);  // copies that never ran carry no counts
  if (r.candidates.empty()) return r;
  std::string what = fmt::format("{} {}", key.shared ? "shared" : "global", key.store ? "store" : "load");
  // Accesses of another width are other accesses: match among those of the finding's width when
  // the export has instructions of it (a vectorised pair of loads has the pair's width: then all).
  std::vector<const Instruction*> set;
  int n = key.count;
  if (key.width && key.countSameWidth > 0) {
    for (const auto* in : r.candidates)
      if (in->width == key.width) set.push_back(in);
    if (!set.empty()) {
      n = key.countSameWidth;
      if (set.size() < r.candidates.size()) what += fmt::format(" of {} bytes", key.width);
    }
  }
  if (set.empty()) set = r.candidates;
  r.candidates = set;
  auto copies = [&](size_t k) { return k > 1 ? fmt::format(" ({} copies: unrolled or duplicated)", k) : std::string(); };
  if (n <= 1) {
    r.kind = AccessMatch::Own;
    r.own = set;
    r.copies = static_cast<unsigned>(set.size());
    r.how = fmt::format("the line's only {}{}", what, copies(set.size()));
    return r;
  }
  // Several accesses of the kind. SASS order does not follow the source (nvcc 13 loads `x[j]`
  // before `A[i * n + j]` in `tmp[i] += A[i * n + j] * x[j]`, and the four neighbours of a stencil
  // in its own order), so a global access is told from the others by what it touches: its useful
  // sectors per request (ncu's ideal: 1 for a word the whole warp reads, 4 for 32 lanes' floats).
  if (!key.shared && key.usefulPerRequest > 0) {
    std::vector<const Instruction*> sig;
    for (const auto* in : set) {
      double ideal = in->sectorsIdeal / in->executed;
      if (std::fabs(ideal - key.usefulPerRequest) <= 0.15 * key.usefulPerRequest) sig.push_back(in);
    }
    if (sig.empty()) {
      r.kind = AccessMatch::NoSignature;
      r.how = fmt::format("{} {}s on the line, and none of their instructions touches {} useful sectors per request "
                          "as this access does: the compiler may have kept it in a register or moved it to another line",
                          n, what, num(key.usefulPerRequest));
      return r;
    }
    if (sig.size() < set.size()) {
      r.kind = AccessMatch::BySignature;
      r.candidates = sig;
      r.how = fmt::format("the {} of the line's {} {}s that touch {} useful sectors per request as this access does{}",
                          sig.size() == 1 ? "instruction" : "instructions", n, what, num(key.usefulPerRequest),
                          copies(sig.size()));
      return r;
    }
  }
  r.kind = AccessMatch::Ambiguous;
  r.how = fmt::format("{} {}s on the line, {} such instructions", n, what, set.size());
  return r;
}

}  // namespace

AccessMatch matchAccess(const std::vector<const Line*>& lines, const AccessKey& key) {
  // Each profiled instance of the line (template instances) on its own; the weakest match speaks.
  AccessMatch m;
  m.kind = AccessMatch::Own;
  bool any = false;
  for (const Line* l : lines) {
    InstanceMatch im = matchInstance(*l, key);
    if (im.kind == AccessMatch::NoInstruction) continue;
    any = true;
    m.candidates.insert(m.candidates.end(), im.candidates.begin(), im.candidates.end());
    m.own.insert(m.own.end(), im.own.begin(), im.own.end());
    m.copies = std::max(m.copies, im.copies);
    if (im.kind > m.kind || m.how.empty()) m.how = im.how;
    m.kind = std::max(m.kind, im.kind);
  }
  if (!any) m.kind = AccessMatch::NoInstruction;
  if (m.kind != AccessMatch::Own) m.own.clear();
  return m;
}

Excess excessOf(const std::vector<const Instruction*>& ins, bool shared) {
  Excess e;
  for (const auto* in : ins) {
    double a = shared ? in->sharedWavefronts : in->sectors, id = shared ? in->sharedIdeal : in->sectorsIdeal;
    if (a < 0 || id <= 0) continue;  // not in the export, or no full request ran
    e.any = true;
    e.amount += a;
    e.ideal += id;
    e.executed += in->executed;
    // Requests: warp-level instructions executed. For shared accesses the ideal wavefronts (one
    // per request of up to 4 bytes per lane): a warp whose lanes are all predicated off issues none.
    e.requests += shared ? id / std::max(1.0, std::ceil(in->width / 4.0)) : in->executed;
  }
  return e;
}

bool within(double measured, double predicted, double tol) {
  if (predicted <= 0) return measured <= 0;
  return std::fabs(measured / predicted - 1.0) <= tol;
}

namespace {
// One direction of a finding's access (its loads, or its stores: Diagnostic::predicted "store").
MemoryVerdict judgeDirection(const std::vector<const Line*>& lines, const std::map<std::string, double>& predicted,
                             bool shared, double tolerance, double excessRatio, const std::vector<double>& others) {
  MemoryVerdict v;
  auto pr = [&](const char* k, double def = -1) {
    auto it = predicted.find(k);
    return it == predicted.end() ? def : it->second;
  };
  AccessKey key = accessKeyOf(predicted, shared);
  AccessMatch m = matchAccess(lines, key);
  bool random = !shared && pr("random", 0) > 0;
  double useful = pr("usefulSectors", 0);
  double predictedFactor = shared ? pr("ways") : (useful > 0 ? pr("sectors") / useful : 0);
  std::string kind = fmt::format("{} {}", shared ? "shared" : "global", key.store ? "store" : "load");
  // The line's instructions of the kind, the access's own (or its candidates) marked.
  const auto& mine = m.kind == AccessMatch::Own ? m.own : m.candidates;
  for (const Line* l : lines)
    for (const auto& in : l->instructions) {
      if (in.executed <= 0 || (shared ? !isSharedAccess(in) : !isGlobalAccess(in)) || (key.store ? !isStore(in) : !isLoad(in)))
        continue;
      MeasuredInstruction mi;
      mi.address = in.address;
      mi.sass = in.sass;
      mi.executed = in.executed;
      mi.amount = shared ? in.sharedWavefronts : in.sectors;
      mi.ideal = shared ? in.sharedIdeal : in.sectorsIdeal;
      mi.own = m.kind != AccessMatch::NoSignature && std::find(mine.begin(), mine.end(), &in) != mine.end();
      v.instructions.push_back(std::move(mi));
    }
  v.values.push_back({"instructionsMatched", m.kind == AccessMatch::NoSignature ? 0.0 : static_cast<double>(mine.size())});
  v.values.push_back({"instructionsOfKind", static_cast<double>(v.instructions.size())});
  auto agrees = [&](const Excess& e) {
    return random ? e.factor() >= excessRatio : within(e.factor(), predictedFactor, tolerance);
  };
  // A figure the finding names for one loop iteration (or one of several contexts) is its worst
  // case; the counters average every execution of the instruction, so fewer is no disagreement.
  bool perIteration = pr("perIteration", 0) > 0;
  auto averagedBelow = [&](const Excess& e) { return perIteration && !random && e.factor() < predictedFactor; };
  auto describe = [&](const Excess& e) {
    if (shared)
      return fmt::format("{} shared wavefronts for {} ideal: {}-way measured, {}-way predicted", num(e.amount),
                         num(e.ideal), num(e.factor()), num(predictedFactor));
    return fmt::format("{} sectors per request measured ({} ideal: {}x), {}{} for {} predicted ({}x)", num(e.perRequest()),
                       num(e.idealPerRequest()), num(e.factor()), random ? "up to " : "", num(pr("sectors")),
                       num(useful), num(predictedFactor));
  };
  auto addFigures = [&](const Excess& e) {
    if (shared) {
      v.values.push_back({"predictedWays", predictedFactor});
      v.values.push_back({"measuredWays", e.factor()});
      v.values.push_back({"sharedWavefronts", e.amount});
      v.values.push_back({"sharedWavefrontsIdeal", e.ideal});
    } else {
      v.values.push_back({"predictedSectorsPerRequest", pr("sectors")});
      v.values.push_back({"predictedUsefulSectors", useful});
      v.values.push_back({"predictedExcess", predictedFactor});
      v.values.push_back({"measuredSectorsPerRequest", e.perRequest()});
      v.values.push_back({"measuredIdealSectorsPerRequest", e.idealPerRequest()});
      v.values.push_back({"measuredExcess", e.factor()});
      v.values.push_back({"sectors", e.amount});
      v.values.push_back({"sectorsIdeal", e.ideal});
    }
    v.values.push_back({"requests", e.executed});
  };
  double lineMax = 0;  // the line's most executed instruction (the loop body, if it is in one)
  for (const Line* l : lines)
    for (const auto& in : l->instructions) lineMax = std::max(lineMax, in.executed);
  if (m.kind == AccessMatch::NoInstruction) {
    v.verdict = "not compared";
    v.text = fmt::format("the line has no {} instruction that ran: the compiler kept the value in a register, merged "
                         "the access with another or moved it to another line (out of a loop), so there is nothing of "
                         "its own to measure",
                         kind);
    return v;
  }
  if (m.kind == AccessMatch::Own) {
    Excess e = excessOf(m.own, shared);
    v.covered = m.own;
    if (!e.any) {
      v.verdict = "not compared";
      v.text = fmt::format("its instructions ({}) made no full request in the profiled launches", m.how);
      return v;
    }
    addFigures(e);
    v.verdict = agrees(e) ? "confirmed" : "differs";
    v.text = describe(e) + "; " + m.how;
    if (v.verdict == "differs" && averagedBelow(e)) {
      v.verdict = "not compared";
      v.text += "; " + kIterationNote;
      return v;
    }
    // Kept in a register across the loop around it: the access runs far less often than its line.
    if (e.executed * 4 < lineMax)
      v.text += fmt::format("; it ran {} times, the line's busiest instruction {}: the compiler moved it out of the loop",
                            num(e.executed), num(lineMax));
    if (v.verdict == "differs" && e.factor() < predictedFactor)
      v.text += " (the counters average every execution of the instruction, e.g. every loop iteration; the finding "
                "names the worst case it found)";
    return v;
  }
  // Several accesses of the kind: judged when every candidate gives the same answer.
  std::vector<Excess> each;
  for (const auto* in : m.candidates) {
    Excess e = excessOf({in}, shared);
    if (e.any) each.push_back(e);
  }
  if (m.kind != AccessMatch::NoSignature) v.covered = m.candidates;
  if (each.empty()) {
    v.verdict = "not compared";
    v.text = m.how;
    return v;
  }
  bool all = std::all_of(each.begin(), each.end(), agrees), none = std::none_of(each.begin(), each.end(), agrees);
  double lo = 1e300, hi = 0;
  for (const auto& e : each) lo = std::min(lo, e.factor()), hi = std::max(hi, e.factor());
  Excess total = excessOf(m.candidates, shared);
  // Without the access's own signature, only "all agree" is safe: its instructions may be elsewhere.
  // Every candidate disagreeing says the access disagrees only when each of the line's accesses of
  // the kind can have instructions among them: 8 loads on a line of 3 (4 unrolled copies of 2) means
  // one access has none (a `+=` whose load the compiler kept in a register after the last store).
  bool accounted = m.kind != AccessMatch::Ambiguous || key.count <= 0 ||
                   m.candidates.size() % static_cast<size_t>(key.count) == 0;
  if (all || (none && m.kind != AccessMatch::NoSignature && accounted)) {
    addFigures(total);
    v.verdict = all ? "confirmed" : "differs";
    v.text = describe(total) + "; " + m.how +
             (m.candidates.size() > 1 ? fmt::format(", every one {}", all ? "agreeing" : "disagreeing") : std::string());
    if (v.verdict == "differs" && averagedBelow(total)) {
      v.verdict = "not compared";
      v.text += "; " + kIterationNote;
    }
    return v;
  }
  if (none && !accounted) {
    v.verdict = "not compared";
    v.text = fmt::format("{}: not a multiple of the {} accesses, so one of them may have no instruction of its own (the "
                         "compiler kept it in a register); they measure {}x to {}x the ideal {}, {}x predicted",
                         m.how, key.count, num(lo), num(hi), shared ? "wavefronts" : "sectors", num(predictedFactor));
    return v;
  }
  // By elimination: every instruction that disagrees is one of the line's other accesses of the
  // kind, as the model predicts them (another finding's factor, or below the threshold for the
  // accesses it did not flag), and some agree.
  int unflagged = key.count - 1 - static_cast<int>(others.size());
  if (m.kind != AccessMatch::NoSignature && !none) {
    std::vector<const Instruction*> agreeing;
    bool explained = true;
    for (const auto* in : m.candidates) {
      Excess e = excessOf({in}, shared);
      if (!e.any) continue;
      if (agrees(e)) {
        agreeing.push_back(in);
        continue;
      }
      bool other = std::any_of(others.begin(), others.end(), [&](double f) { return within(e.factor(), f, tolerance); });
      if (!other && !(unflagged > 0 && e.factor() < excessRatio)) explained = false;
    }
    if (explained && !agreeing.empty()) {
      Excess own = excessOf(agreeing, shared);
      addFigures(own);
      v.verdict = "confirmed";
      v.covered = agreeing;
      for (auto& mi : v.instructions)
        mi.own = std::any_of(agreeing.begin(), agreeing.end(), [&](const Instruction* in) { return in->address == mi.address; });
      v.text = describe(own) + "; " + m.how +
               fmt::format(": the {} that agree{} are this access's, the others measure what the line's other {}s are "
                           "predicted to ({}x to {}x)",
                           agreeing.size() == 1 ? "instruction" : "instructions", agreeing.size() == 1 ? "s" : "", kind,
                           num(lo), num(hi));
      return v;
    }
  }
  v.verdict = "not compared";
  v.text = fmt::format("{}; {} measure{} {}x the ideal {}, {}x predicted", m.how,
                       m.kind == AccessMatch::NoSignature ? "the line's instructions of its kind" : "they",
                       m.candidates.size() == 1 ? "s" : "", lo == hi ? num(lo) : num(lo) + "x to " + num(hi),
                       shared ? "wavefronts" : "sectors", num(predictedFactor));
  return v;
}

}  // namespace

const std::string kIterationNote =
    "the finding's figure is for the loop iteration it names, the counters average every iteration of the "
    "instruction: fewer measured is no disagreement";

MemoryVerdict judgeMemoryFinding(const std::vector<const Line*>& lines, const std::map<std::string, double>& predicted,
                                 bool shared, double tolerance, double excessRatio, const std::vector<double>& others) {
  MemoryVerdict v = judgeDirection(lines, predicted, shared, tolerance, excessRatio, others);
  // A read-modify-write access (`a[i] += x`) is a load and a store: when its loads cannot be judged
  // (the compiler kept the value in a register and stores every iteration) it is judged on its
  // stores, and its store instructions are its own either way (no measured-only finding repeats it).
  auto get = [&](const char* k) {
    auto it = predicted.find(k);
    return it == predicted.end() ? 0.0 : it->second;
  };
  if (get("store") > 0 || get("storeLineCount") <= 0) return v;
  auto asStore = predicted;
  asStore["store"] = 1;
  asStore["lineCount"] = get("storeLineCount");
  asStore["lineCountSameWidth"] = get("storeLineCountSameWidth");
  MemoryVerdict st = judgeDirection(lines, asStore, shared, tolerance, excessRatio, {});
  if (st.verdict == "not compared") return v;
  if (v.verdict == "not compared") {
    st.text = "judged on its store (" + st.text + "); its load: " + v.text;
    st.covered.insert(st.covered.end(), v.covered.begin(), v.covered.end());
    return st;
  }
  v.covered.insert(v.covered.end(), st.covered.begin(), st.covered.end());
  return v;
}

double predictedFactor(const std::map<std::string, double>& predicted, bool shared) {
  auto get = [&](const char* k) {
    auto it = predicted.find(k);
    return it == predicted.end() ? 0.0 : it->second;
  };
  if (shared) return get("ways");
  return get("usefulSectors") > 0 ? get("sectors") / get("usefulSectors") : 0;
}

}  // namespace gpuopt::profile
