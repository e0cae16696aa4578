#include "rules/divergent_branch.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <map>
#include <set>

#include "rules/cost.h"
#include "analyzer/rule/rule_context.h"
#include "rules/rule_util.h"

namespace gpuopt {

namespace {
struct Split {
  const Branch* b = nullptr;
  unsigned divergentWarps = 0, activeWarps = 0;
  unsigned firstWarp = 0;
  unsigned taken = 0, total = 0;  // summed over the divergent warps: lanes on path 1, active lanes
  unsigned paths = 0;             // most distinct paths in one warp
  std::map<std::pair<unsigned, unsigned>, unsigned> dist;  // (taken, active) in a warp -> warps
  bool singleLane = true;         // every divergent warp has exactly one lane taking the branch
};

// A loop that repeats: one every thread runs at most once (`for (n = first(tid); n < last(tid); ++n)`
// over fewer items than threads) is a guard, judged as an if.
bool repeats(const Branch& b) { return b.isLoop && b.maxTrips != 1; }

Split analyse(const Branch& b, unsigned warps) {
  Split s;
  s.b = &b;
  bool first = true;
  for (unsigned w = 0; w < warps; ++w) {
    auto lanes = warpLanes(b.active, w);
    if (lanes.empty()) continue;
    ++s.activeWarps;
    // Lanes per path, ordered by path (a handful of paths: a sorted small vector, not a map: this
    // runs for every branch record and warp).
    llvm::SmallVector<std::pair<int, unsigned>, 4> count;
    for (unsigned t : lanes) {
      int p = b.path[t];
      auto at = std::lower_bound(count.begin(), count.end(), p, [](const auto& e, int v) { return e.first < v; });
      if (at != count.end() && at->first == p) ++at->second;
      else count.insert(at, {p, 1u});
    }
    if (count.size() < 2) continue;
    ++s.divergentWarps;
    auto one = std::find_if(count.begin(), count.end(), [](const auto& e) { return e.first == 1; });
    bool hasOne = one != count.end();
    unsigned taken = hasOne ? one->second : repeats(b) ? 0u : static_cast<unsigned>(lanes.size()) - count.front().second;
    // A repeating loop counts the path "continues" even when no lane of this warp takes it.
    size_t paths = count.size() + (repeats(b) && !hasOne ? 1 : 0);
    if (taken != 1) s.singleLane = false;
    if (first) {
      s.firstWarp = w;
      first = false;
    }
    // Every divergent warp counts: the split of the first one is not the split of the others.
    s.taken += taken;
    s.total += static_cast<unsigned>(lanes.size());
    s.paths = std::max(s.paths, static_cast<unsigned>(paths));
    ++s.dist[{taken, static_cast<unsigned>(lanes.size())}];
  }
  return s;
}
// A two-path branch whose minority path (at most a quarter of the block's active lanes) holds only
// lanes at an edge of the block: the first or last index in an axis of several threads (`if (y ==
// 0)`, `if (j == 0 || j == ny - 1)` with j from threadIdx.y). A boundary case: the fix is no warp-wise reassignment but clamped
// indices or a halo, and only the warps holding edge lanes pay (precision sample s5: HeCBench
// reaction, tridiagonal, rodinia srad). `takenSide`: whether the minority is the taken path.
bool edgeCase(const Branch& b, const KernelModel& m, bool& takenSide) {
  if (repeats(b)) return false;
  const unsigned bx = std::max(1u, m.blockX()), by = std::max(1u, m.blockY()), bz = std::max(1u, m.blockZ());
  unsigned taken = 0, active = 0, firstActive = UINT32_MAX, lastActive = 0;
  for (unsigned t = 0; t < b.active.size() && t < b.path.size(); ++t) {
    if (!b.active[t]) continue;
    if (b.path[t] > 1) return false;  // a switch
    ++active;
    taken += b.path[t] == 1;
    firstActive = std::min(firstActive, t), lastActive = t;
  }
  if (active == 0) return false;
  if (taken * 4 <= active) takenSide = true;
  else if ((active - taken) * 4 <= active) takenSide = false;
  else return false;
  unsigned count = 0;
  bool allEdges = true;
  for (unsigned t = firstActive; t <= lastActive; ++t) {
    if (!b.active[t] || (b.path[t] == 1) != takenSide) continue;
    const unsigned x = t % bx, y = (t / bx) % by, z = t / (bx * by);
    allEdges = allEdges && ((bx > 1 && (x == 0 || x == bx - 1)) || (by > 1 && (y == 0 || y == by - 1)) ||
                            (bz > 1 && (z == 0 || z == bz - 1)));
    ++count;
  }
  return count > 0 && allEdges;
}
// Sequential addressing inside groups of lanes: in every divergent warp the lanes taking the branch
// are the first k of each aligned group of G lanes (`if (tid % 4 < s)` for a 4-lane row reduction,
// `if (threadIdx.x < s)` in a 16-wide block). Returns the smallest such G (the same in every
// divergent warp), or 0. The caller asks for one G in every iteration of the loop: with sequential
// addressing the group stays and k halves; with interleaved addressing (`tid % (2 * s) == 0`) the
// period doubles, so it is still reported.
unsigned groupedPrefix(const Branch& b) {
  unsigned found = 0;
  for (unsigned w = 0; w * 32 < b.active.size(); ++w) {
    const unsigned first = w * 32, last = std::min<unsigned>(static_cast<unsigned>(std::min(b.active.size(), b.path.size())), w * 32 + 32);
    int side = -1;
    bool uniform = true;
    for (unsigned t = first; t < last; ++t)
      if (b.active[t]) {
        if (side < 0) side = b.path[t];
        else uniform = uniform && static_cast<int>(b.path[t]) == side;
      }
    if (uniform) continue;  // no lane active, or all on one side
    unsigned fitG = 0;
    for (unsigned g = 2; g <= 32 && !fitG; g *= 2)
      for (unsigned k = 1; k < g && !fitG; ++k) {
        bool fits = true;
        for (unsigned t = first; t < last && fits; ++t)
          if (b.active[t]) fits = (b.path[t] == 1) == ((t - first) % g < k);
        if (fits) fitG = g;
      }
    if (!fitG || (found && fitG != found)) return 0;
    found = fitG;
  }
  return found;
}
}  // namespace

void DivergentBranchRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  std::map<const clang::Stmt*, std::vector<Split>> byStmt;
  std::vector<const clang::Stmt*> order;
  std::set<const clang::Stmt*> unknown;
  for (const auto& b : m.branches()) {
    if (!rc.inLintedFile(b.stmt->getBeginLoc())) continue;
    if (!b.known || b.data || b.param) {
      unknown.insert(b.stmt);  // data- or parameter-dependent: not judged (bounds guards, data branches)
      continue;
    }
    if (!byStmt.count(b.stmt)) order.push_back(b.stmt);
    byStmt[b.stmt].push_back(analyse(b, m.warps()));
  }
  for (const auto* st : order) {
    if (unknown.count(st)) continue;
    const auto& splits = byStmt[st];
    const Split* best = nullptr;
    unsigned maxDiv = 0;
    bool allSingle = true;
    for (const auto& s : splits) {
      if (s.divergentWarps == 0) continue;
      maxDiv = std::max(maxDiv, s.divergentWarps);
      allSingle = allSingle && s.singleLane;
      auto balance = [](const Split& x) { return std::min(x.taken, x.total - x.taken); };
      if (!best || s.divergentWarps > best->divergentWarps ||
          (s.divergentWarps == best->divergentWarps && balance(s) > balance(*best)))
        best = &s;
    }
    if (!best) continue;
    const Branch& b = *best->b;
    if (!b.thenWork && !b.elseWork) continue;  // cheap paths: predicated, no serialisation worth reporting
    // One lane per warp on its own path (tid == 0, lane == 0, a corner or boundary fix-up): the
    // usual pattern, and the other path is not slowed by more than that one lane's work.
    if (!repeats(b) && allSingle) continue;
    // A few lanes per warp (one leader per tile) doing work nobody else waits on the other path for.
    if (!repeats(b) && !b.elseWork && best->paths <= 2 && best->taken * 8 <= best->total) continue;
    // An if without else work where most lanes take it (a guard such as 'i > 1 && i < n') costs the
    // idle lanes nothing extra; report it only when at most half the lanes work in several warps.
    if (!repeats(b) && !b.elseWork && best->paths <= 2 &&
        (best->taken * 2 > best->total || (maxDiv <= 1 && best->activeWarps > 1)))
      continue;
    // Inside a loop, divergence confined to one warp in the last iterations is the usual reduction tail.
    if ((b.inLoop || repeats(b)) && maxDiv <= 1 && !b.elseWork) continue;
    // ... and so is one inside groups of lanes (a row per group), in every warp.
    if (b.inLoop && !repeats(b) && !b.elseWork && best->paths <= 2) {
      unsigned group = 0;
      bool same = true;
      for (const Split& x : splits) {
        if (x.divergentWarps == 0) continue;
        const unsigned g = groupedPrefix(*x.b);
        same = same && g && (!group || g == group);
        group = g;
      }
      if (same && group) continue;
    }
    std::string where;
    if (best->divergentWarps == best->activeWarps && best->activeWarps > 1) where = "in every warp";
    else if (best->divergentWarps == 1) where = fmt::format("in warp {}", best->firstWarp);
    else where = fmt::format("in {} of {} warps", best->divergentWarps, best->activeWarps);
    // "14 of 32 lanes ... in every warp" when every divergent warp splits the same way; otherwise
    // the distribution: "28 of 32 lanes in 6 warps, 14 of 32 in 2 warps".
    std::string split;
    unsigned perWarpTaken = 0, perWarpTotal = 0;
    if (best->dist.size() == 1) {
      perWarpTaken = best->dist.begin()->first.first;
      perWarpTotal = best->dist.begin()->first.second;
      split = fmt::format("{} of {} lanes", perWarpTaken, perWarpTotal);
    } else {
      std::vector<std::pair<unsigned, std::pair<unsigned, unsigned>>> byCount;
      for (const auto& [k, n] : best->dist) byCount.push_back({n, k});
      std::stable_sort(byCount.begin(), byCount.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
      for (size_t i = 0; i < byCount.size() && i < 3; ++i)
        split += fmt::format("{}{} of {}{} in {} warp{}", i ? ", " : "", byCount[i].second.first, byCount[i].second.second,
                             i ? "" : " lanes", byCount[i].first, byCount[i].first == 1 ? "" : "s");
      if (byCount.size() > 3) split += fmt::format(" and {} other splits", byCount.size() - 3);
    }
    std::string cond = b.cond ? rc.text(b.cond) : std::string("the condition");
    std::string msg;
    if (repeats(b)) {
      msg = fmt::format("divergent loop: lanes of a warp leave the loop at different iterations (condition '{}'; "
                        "{} continue {}); the warp runs until its slowest lane is done",
                        cond, split, best->dist.size() == 1 ? where : fmt::format("({} divergent warps)", best->divergentWarps));
    } else if (best->paths > 2) {
      msg = fmt::format("divergent switch on '{}': lanes of a warp take up to {} different cases {}; the cases run one "
                        "after the other", cond, best->paths, where);
    } else if (best->dist.size() == 1) {
      msg = fmt::format("divergent branch '{}': {} take the branch {}; {}", cond, split, where,
                        b.elseWork ? "both paths run one after the other"
                                   : fmt::format("the other {} lanes idle while it runs", perWarpTotal - perWarpTaken));
    } else {
      msg = fmt::format("divergent branch '{}': lanes taking the branch: {} ({} of {} warps diverge); {}", cond, split,
                        best->divergentWarps, best->activeWarps,
                        b.elseWork ? "both paths run one after the other" : "the other lanes idle while it runs");
    }
    bool takenSide = true;
    const bool edge = best->paths <= 2 && edgeCase(b, m, takenSide);
    if (edge)
      msg += fmt::format("; the lanes {} are at the edge of the block: a boundary case, {}", takenSide ? "taking it" : "not taking it",
                         best->divergentWarps < best->activeWarps ? "only the warps holding them split"
                                                                  : "but every warp holds some of them");
    msg += atContext(b.context);
    if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
    Diagnostic d = rc.make(kInfo, rc.span(b.cond ? static_cast<const clang::Stmt*>(b.cond) : st), msg);
    // A boundary case in at most a quarter of the warps costs little: a note.
    if (edge && best->divergentWarps * 4 <= best->activeWarps) d.severity = Severity::Note;
    {
      // Lanes per divergent warp on the taken path, and the statement's lines (the profile judges
      // the active lanes of the instructions there).
      SourceSpan whole = rc.span(st);
      d.predicted = {{"lanes", best->divergentWarps ? static_cast<double>(best->taken) / best->divergentWarps : 0},
                     {"firstLine", whole.begin.line}, {"lastLine", std::max(whole.endLine, whole.begin.line)},
                     {"perIteration", b.context.empty() ? 0 : 1}};
    }
    d.fixHint = edge ? "a boundary case, not a work assignment: clamp the indices (min/max) or pad the data with a halo "
                       "(ghost cells) so the edge lanes run the interior code without a branch; worth it only when the "
                       "edge warps are a large share of the work"
                     : "make the condition uniform per warp: assign work by warp (threadIdx.x / 32) or use sequential "
                       "addressing ('if (tid < s)') so whole warps take the same path";
    setFrequencyImpact(m, st, nullptr, d);
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
