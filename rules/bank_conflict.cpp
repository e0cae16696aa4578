#include "rules/bank_conflict.h"

#include <clang/AST/TypeLoc.h>
#include <fmt/format.h>

#include <map>
#include <set>

#include "rules/cost.h"
#include "analyzer/rule/rule_context.h"
#include "rules/bank_layout.h"
#include "rules/impact.h"
#include "rules/rule_util.h"

namespace gpuopt {

namespace {
struct Conflict {
  const Access* a = nullptr;
  unsigned ways = 1, bank = 0;
  std::vector<unsigned> lanes;  // lanes hitting the worst bank at distinct words
  int64_t rowStrideWords = 0;   // word distance between colliding lanes
};

// Degree of the worst bank conflict of one warp's access (flat arrays: this runs for every access
// of every warp).
Conflict conflictOf(const Access& a, llvm::ArrayRef<unsigned> lanes) {
  Conflict best;
  best.a = &a;
  unsigned phase = a.elemSize <= 4 ? 32 : a.elemSize == 8 ? 16 : 8;  // lanes served per shared-memory wavefront
  struct BW {
    unsigned bank;
    int64_t word;
    unsigned lane;
  };
  static thread_local std::vector<BW> v;  // reused: this runs for every access of every warp
  for (size_t p0 = 0; p0 < lanes.size();) {
    unsigned group = lanes[p0] % 32 / phase;
    v.clear();
    size_t p = p0;
    for (; p < lanes.size() && lanes[p] % 32 / phase == group; ++p) {
      unsigned t = lanes[p];
      int64_t w0 = floorDiv(a.addr[t], 4), w1 = floorDiv(a.addr[t] + a.elemSize - 1, 4);
      for (int64_t w = w0; w <= w1; ++w) v.push_back({static_cast<unsigned>(((w % 32) + 32) % 32), w, t % 32});
    }
    std::sort(v.begin(), v.end(), [](const BW& x, const BW& y) {
      return x.bank != y.bank ? x.bank < y.bank : x.word != y.word ? x.word < y.word : x.lane < y.lane;
    });
    for (size_t i = 0; i < v.size();) {
      size_t j = i;
      unsigned distinct = 0;
      for (; j < v.size() && v[j].bank == v[i].bank; ++j)
        if (j == i || v[j].word != v[j - 1].word) ++distinct;
      if (distinct > best.ways) {
        best.ways = distinct;
        best.bank = v[i].bank;
        best.lanes.clear();
        for (size_t k = i; k < j; ++k)
          if (k == i || v[k].word != v[k - 1].word) best.lanes.push_back(v[k].lane);
        std::sort(best.lanes.begin(), best.lanes.end());
        best.rowStrideWords = distinct >= 2 ? v[i + 1 < j ? i + 1 : i].word - v[i].word : 0;
        for (size_t k = i + 1; k < j; ++k)
          if (v[k].word != v[i].word) { best.rowStrideWords = v[k].word - v[i].word; break; }
      }
      i = j;
    }
    p0 = p;
  }
  return best;
}

}  // namespace

void BankConflictRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  const unsigned minWays = static_cast<unsigned>(rc.option(kInfo, "min-ways", 2));
  std::map<const clang::Expr*, Conflict> worst;
  std::map<const clang::VarDecl*, LayoutChange> layouts;
  std::vector<const clang::Expr*> order;
  for (const auto& a : m.accesses()) {
    if (a.space != MemSpace::Shared || !a.known || a.data || !a.strideSym.empty() || a.isAtomic) continue;
    // An address that depends on a value known only at run time (a seed hashed into the index, a
    // size): the banks the lanes hit are those of the stand-in value, not known.
    if (a.paramAddr) continue;
    if (a.elemSize == 0 || a.elemSize > 16) continue;
    if (!rc.inLintedFile(a.expr->getBeginLoc())) continue;
    // All fields of a record of at most 16 bytes written or read together (v.x, v.y, v.z, v.w):
    // the compiler emits one vector access, served in conflict-free quarter- or half-warp phases.
    int64_t recStride = 0;
    if (recordCoverage(m, a, &recStride) >= 1.0 && recStride <= 16) continue;
    for (unsigned w = 0; w < m.warps(); ++w) {
      auto lanes = warpLanes(a.mask, w);
      if (lanes.size() < 2) continue;
      Conflict c = conflictOf(a, lanes);
      auto it = worst.find(a.expr);
      if (it == worst.end()) {
        order.push_back(a.expr);
        worst[a.expr] = c;
      } else if (c.ways > it->second.ways) {
        it->second = c;
      }
    }
  }
  for (const auto* e : order) {
    const Conflict& c = worst[e];
    if (c.ways < minWays) continue;
    const Access& a = *c.a;
    std::string msg = fmt::format("{}-way bank conflict on shared {} '{}': {} of a warp hit bank {} at {} different "
                                  "addresses, so the access is replayed {} times",
                                  c.ways, accessKind(a), rc.text(a.expr), laneList(c.lanes), c.bank, c.ways, c.ways);
    msg += atContext(a.context);
    if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
    Diagnostic d = rc.make(kInfo, rc.span(e), msg);
    d.measuredTag = bankConflictImpact(c.ways);  // the factor measured for this n, not the 32-way one
    d.predicted = {{"ways", c.ways}, {"store", a.isWrite && !a.isRead ? 1 : 0}};
    // The fix: a layout of the array judged over all its accesses (rules/bank_layout.h).
    addLineInventory(m, a, a.isWrite && !a.isRead, rc, d.predicted);
    const auto* vd = llvm::dyn_cast_or_null<clang::VarDecl>(a.base);
    auto lit = layouts.find(vd);
    if (lit == layouts.end()) lit = layouts.emplace(vd, chooseSharedLayout(m, vd, rc)).first;
    const LayoutChange& layout = lit->second;
    if (vd && rc.inLintedFile(vd->getLocation()) && !layout.hint.empty())
      d.notes.push_back({rc.span(vd), fmt::format("'{}' declared here", vd->getName().str())});
    d.fixHint = !layout.hint.empty() ? layout.hint
                                     : "make consecutive lanes access consecutive 4-byte words (sequential addressing), or "
                                       "use an odd stride / padding so that the lanes spread over all 32 banks";
    d.fixIts = layout.edits;
    addCallSiteNote(a, rc, d);
    setFrequencyImpact(m, a.expr, a.callSite, d);
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
