#include "rules/global_memory_race.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "analyzer/rule/rule_context.h"
#include "rules/impact.h"
#include "rules/rule_util.h"

namespace gpuopt {

namespace {
std::string blockName(int dx, int dy, bool twoD) {
  auto off = [](const char* v, int d) { return d == 0 ? std::string(v) : fmt::format("{}+{}", v, d); };
  if (!twoD) return "block " + off("b", dx);
  return fmt::format("block ({},{})", off("bx", dx), off("by", dy));
}
}  // namespace

void GlobalMemoryRaceRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  // Within a block first (a barrier can fix those), then across blocks (none can).
  struct Finding {
    const Race* in = nullptr;
    const CrossBlockRace* across = nullptr;
  };
  std::map<const clang::Expr*, Finding> byExpr;
  std::vector<const clang::Expr*> order;
  auto slot = [&](const Access& a) -> Finding& {
    auto [it, fresh] = byExpr.try_emplace(a.expr);
    if (fresh) order.push_back(a.expr);
    return it->second;
  };
  // Only races the model decides: not one under a data-dependent condition (unless the option
  // `possible` asks for them), not one whose addresses depend on a parameter's stand-in value (a
  // pitch `ime - ims + 1` would be 1, a chunk `gid * n * n` overflows), not one recorded by threads
  // a guard over stand-in values let in. On real code such findings were nearly all false alarms.
  const bool wantPossible = rc.option(kInfo, "possible", 0) != 0;
  auto decided = [&](const Access& a, const Access& b, bool possible) {
    return (wantPossible || !possible) && !a.paramAddr && !b.paramAddr && !a.approxMask && !b.approxMask;
  };
  // A race between lanes of one warp only (one warp's lanes exchange values through global
  // memory) needs a __syncwarp(), not a __syncthreads(): unsafe-warp-reduce reports it, as it does
  // for shared memory. An expression that also races between warps stays here.
  std::set<const clang::Expr*> blockLevel;
  for (const auto& r : m.globalRaces())
    if (!warpExchange(r)) blockLevel.insert(r.second->expr);
  for (const auto& r : m.globalRaces()) {
    if (!decided(*r.first, *r.second, r.possible)) continue;
    if (warpExchange(r) && !blockLevel.count(r.second->expr)) continue;
    Finding& f = slot(*r.second);
    // Named with a pair from two warps when there is one (lanes of one warp need only a __syncwarp).
    if (!f.in || (f.in->sameWarp && !r.sameWarp)) f.in = &r;
  }
  const bool launchedHere = m.blockSource().rfind("launch", 0) == 0;
  // Which blocks meet depends on the block shape: with an assumed one (no launch seen, say one
  // under an #ifdef that is off) a kernel written for 128-thread blocks overlaps its neighbour.
  // Races inside a block hardly depend on it (two threads of any block big enough) and stay.
  if (m.gridBlocks() != 1 && !m.blockAssumed()) {
    for (const auto& r : m.crossBlockRaces()) {
      // Every block touching one address is a race only for more than one block: said only when
      // a launch in the file shows the grid (a kernel written for <<<1, N>>> is common).
      if (r.blockIndependent && !launchedHere) continue;
      if (!decided(*r.first, *r.second, r.possible)) continue;
      const Access& later = r.first->seq > r.second->seq ? *r.first : *r.second;
      Finding& f = slot(later);
      if (!f.across) f.across = &r;
    }
  }
  const bool twoD = m.blockY() > 1 || m.blockZ() > 1;
  for (const auto* e : order) {
    const Finding& f = byExpr[e];
    if (!rc.inLintedFile(e->getBeginLoc())) continue;
    std::string msg, fix;
    bool possible = false;
    Diagnostic d;
    if (f.in) {
      const Race& r = *f.in;
      const Access& a = *r.first;
      const Access& b = *r.second;
      std::string kind = b.isWrite ? (a.isWrite ? "write-after-write" : "write-after-read") : "read-after-write";
      msg = fmt::format("{}{} race on global memory '{}': {} of a block {} '{}' and {} of the same block {} '{}', the "
                        "same element ({}), with no __syncthreads() between",
                        r.possible ? "possible " : "", kind, b.baseName, m.threadName(r.t2), b.isWrite ? "writes" : "reads",
                        rc.text(b.expr), m.threadName(r.t1), a.isWrite ? "writes" : "reads", rc.text(a.expr),
                        elementName(b, r.byteAddr));
      possible = r.possible;
      if (r.possible) msg += possibleGuardsText(a, b);
      msg += atContext(b.context);
      if (kind == "write-after-read")
        fix = "read the neighbour's value into a register, __syncthreads(), then write";
      else if (kind == "write-after-write" && a.expr == b.expr)
        // One statement every thread runs: no barrier can come between its writes (precision
        // sample s5: GPUVerify's fail tests, HeCBench simpleSpmv's per-lane partial sums).
        fix = "one statement writes it from several threads, so no barrier can order the writes: let one thread "
              "write (if (threadIdx.x == 0), or lane 0 after a warp reduction), combine the values first, or use "
              "an atomic";
      else
        fix = "order the two with __syncthreads() between the write and the other access";
      if (f.across) {
        const CrossBlockRace& x = *f.across;
        msg += fmt::format("; the same pattern also races across blocks ({} of {} and {} of {}), which no "
                                 "__syncthreads() orders",
                                 m.threadName(x.t1), blockName(x.b1, x.by1, twoD), m.threadName(x.t2),
                                 blockName(x.b2, x.by2, twoD));
        fix += "; across blocks no barrier helps: write the results to a second array (or run the dependent step "
               "as a second kernel)";
      }
      if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
      d = rc.make(kInfo, rc.span(b.expr), msg);
      d.shapeKey = raceShapeKey(kind, r.possible, a, b);
      addCallSiteNote(b, rc, d);
      d.notes.push_back({rc.span(a.expr), fmt::format("{} {} it here{}", m.threadName(r.t1), a.isWrite ? "writes" : "reads",
                                                      atContext(a.context))});
    } else {
      const CrossBlockRace& x = *f.across;
      const Access& w = *x.first;
      const Access& o = *x.second;
      const Access& later = w.seq > o.seq ? w : o;
      const Access& other = &later == &w ? o : w;
      possible = x.possible;
      if (x.blockIndependent) {
        msg = fmt::format("{}race between blocks on global memory '{}': '{}' does not depend on blockIdx, so {} of "
                          "every block {} the same element that {} of every other block {}{}",
                          x.possible ? "possible " : "", w.baseName, rc.text(later.expr), m.threadName(&later == &w ? x.t1 : x.t2),
                          later.isWrite ? "writes" : "reads", m.threadName(&later == &w ? x.t2 : x.t1),
                          other.isWrite ? (&other == &later ? "also writes" : "writes") : "reads",
                          m.gridBlocks() > 1 ? fmt::format(" ({} blocks in the {})", m.gridBlocks(), m.blockSource()) : "");
        fix = "index global memory by block too (blockIdx.x * blockDim.x + threadIdx.x), let one block do it "
              "(if (blockIdx.x == 0)), or use an atomic";
      } else {
        const bool laterIsWrite = &later == &w;
        unsigned tl = laterIsWrite ? x.t1 : x.t2, to = laterIsWrite ? x.t2 : x.t1;
        int bl = laterIsWrite ? x.b1 : x.b2, bo = laterIsWrite ? x.b2 : x.b1;
        int byl = laterIsWrite ? x.by1 : x.by2, byo = laterIsWrite ? x.by2 : x.by1;
        int base = std::min(bl, bo), baseY = std::min(byl, byo);
        msg = fmt::format("{}race between blocks on global memory '{}': {} of {} {} '{}', the element {} of {} {} at "
                          "'{}'; threads of different blocks are not ordered and no __syncthreads() can fix this",
                          x.possible ? "possible " : "", w.baseName, m.threadName(tl), blockName(bl - base, byl - baseY, twoD),
                          later.isWrite ? "writes" : "reads", rc.text(later.expr), m.threadName(to),
                          blockName(bo - base, byo - baseY, twoD), other.isWrite ? "writes" : "reads", rc.text(other.expr));
        fix = "write the results to a second array (out[i] = c[i] + c[i-1]) or run the dependent step as a second "
              "kernel; a grid-wide sync (cooperative launch) also orders blocks";
      }
      if (x.possible && (!x.laterIterLine || !w.guards.empty() || !o.guards.empty())) msg += possibleGuardsText(w, o);
      if (x.laterIterLine)
        msg += fmt::format(" (only when the loop at line {} runs more than once, a trip count known only at run time: "
                           "in its first iteration the two do not meet)",
                           x.laterIterLine);
      msg += atContext(later.context);
      if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
      d = rc.make(kInfo, rc.span(later.expr), msg);
      d.shapeKey = raceShapeKey(x.blockIndependent ? "blocks-all" : "blocks", x.possible, w, o);
      addCallSiteNote(later, rc, d);
      if (&other != &later || x.blockIndependent)
        d.notes.push_back({rc.span(other.expr), fmt::format("the other access{}", atContext(other.context))});
    }
    if (possible) d.severity = Severity::Warning;
    // The demo's measurement only where the pattern is the demo's: a neighbour's element (its
    // barrier fix fails across blocks only, so its failure is quoted only there).
    RaceShape shape = RaceShape::Other;
    if (f.across && !f.across->blockIndependent) shape = RaceShape::NeighbourAcrossBlocks;
    else if (f.in && !f.across && (f.in->t1 == f.in->t2 + 1 || f.in->t2 == f.in->t1 + 1)) shape = RaceShape::NeighbourInBlock;
    d.measuredTag = globalRaceImpact(shape);
    d.fixHint = fix;
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
