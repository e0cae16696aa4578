#include "rules/rule_util.h"

#include "analyzer/rule/rule_context.h"

#include <fmt/format.h>

#include <set>

namespace gpuopt {

std::string laneList(llvm::ArrayRef<unsigned> lanes, size_t max) {
  std::string s = lanes.size() == 1 ? "lane " : "lanes ";
  for (size_t i = 0; i < lanes.size() && i < max; ++i) s += (i ? ", " : "") + std::to_string(lanes[i]);
  if (lanes.size() > max) s += fmt::format(", ... {}", lanes.back());
  return s;
}

std::string atContext(const std::string& ctx) { return ctx.empty() ? std::string() : " (at " + ctx + ")"; }

llvm::SmallVector<unsigned, 32> warpLanes(const Mask& mask, unsigned w) {
  llvm::SmallVector<unsigned, 32> out;
  for (unsigned t = w * 32; t < mask.size() && t < (w + 1) * 32; ++t)
    if (mask[t]) out.push_back(t);
  return out;
}

std::string accessKind(const Access& a) {
  const std::string kind = a.isRead && a.isWrite ? "load/store" : a.isWrite ? "store" : "load";
  return a.instruction.empty() ? kind : fmt::format("{} (inline PTX '{}')", kind, a.instruction);
}

void addCallSiteNote(const Access& a, const RuleContext& rc, Diagnostic& d) {
  if (!a.callSite || !a.function) return;
  std::string name;
  llvm::raw_string_ostream os(name);
  a.function->getNameForDiagnostic(os, clang::PrintingPolicy(rc.ast().getLangOpts()), /*Qualified=*/false);
  os.flush();
  d.notes.push_back({rc.span(a.callSite), fmt::format("'{}' is called here{}", name,
                                                      d.function.empty() ? std::string() : " from '" + d.function + "'")});
}

double recordCoverage(const KernelModel& m, const Access& a, int64_t* strideOut, bool acrossIterations) {
  llvm::SmallVector<unsigned, 32> lanes;
  for (unsigned w = 0; w < m.warps() && lanes.size() < 2; ++w) lanes = warpLanes(a.mask, w);
  if (lanes.size() < 2 || !a.known) return 0;
  int64_t stride = a.addr[lanes[1]] - a.addr[lanes[0]];
  if (m.ty(lanes[1]) != m.ty(lanes[0]) || stride <= static_cast<int64_t>(a.elemSize) || stride > 256) return 0;
  std::set<std::pair<int64_t, unsigned>> fields;
  for (const auto& b : m.accesses()) {
    if (b.base != a.base || !b.known || b.space != a.space || b.epoch != a.epoch || b.isWrite != a.isWrite) continue;
    // The same expression in another iteration of a loop the compiler unrolls, with records within
    // one sector: the lane's loads run back to back and the later ones hit the sectors the first
    // fetched (global memory only: shared-memory instructions do not share wavefronts). Inside a
    // run-time loop (a grid-stride loop around the unrolled one) only within one of its iterations:
    // iterations of the run-time loop itself are not back to back.
    const bool sameRunIteration = (!a.inRuntimeLoop && !b.inRuntimeLoop) ||
                                  (a.inRuntimeLoop && b.inRuntimeLoop && a.runtimeIter == b.runtimeIter);
    if (b.context != a.context && !(acrossIterations && b.expr == a.expr && stride <= 32 && sameRunIteration))
      continue;
    int64_t d = b.addr[lanes[0]] - a.addr[lanes[0]];
    bool same = true;
    for (unsigned t : lanes)
      if (!b.mask[t] || b.addr[t] - a.addr[t] != d) {
        same = false;
        break;
      }
    if (same && d > -stride && d < stride) fields.insert({((d % stride) + stride) % stride, b.elemSize});
  }
  int64_t bytes = 0;
  for (auto& [off, size] : fields) bytes += size;
  if (strideOut) *strideOut = stride;
  return static_cast<double>(bytes) / static_cast<double>(stride);
}

bool warpExchange(const KernelModel::Race& r) {
  return r.warpSynchronous && !(r.first->expr == r.second->expr && r.first->isWrite && r.second->isWrite &&
                                !r.first->isRead && !r.second->isRead);
}

std::string possibleGuardsText(const Access& a, const Access& b) {
  std::set<unsigned> lines(a.guards.begin(), a.guards.end());
  lines.insert(b.guards.begin(), b.guards.end());
  std::string list;
  for (unsigned l : lines) list += (list.empty() ? "" : ", ") + std::to_string(l);
  if (lines.empty()) {  // no guard: an address from a parameter's stand-in value
    const Access& dep = b.paramAddr || !a.paramAddr ? b : a;
    std::string what = dep.paramSrc ? fmt::format("'{}'", dep.paramSrc->getNameAsString()) : std::string("a parameter");
    return fmt::format(" (the address depends on {}, a value known only at run time: for other values the two may "
                       "not meet)",
                       what);
  }
  bool one = lines.size() == 1;
  return fmt::format(" (under the condition{} at line{} {}, which depend{} on data: if {} never hold{} for both "
                     "threads at once, there is no race)",
                     one ? "" : "s", one ? "" : "s", list, one ? "s" : "", one ? "it" : "they", one ? "s" : "");
}

}  // namespace gpuopt

namespace gpuopt {
std::string raceShapeKey(const std::string& kind, bool possible, const Access& a, const Access& b) {
  return fmt::format("{}|{}|{}|{}", kind, possible, static_cast<const void*>(a.expr), static_cast<const void*>(b.expr));
}

void addLineInventory(const KernelModel& m, const Access& a, bool store, const RuleContext& rc,
                      std::map<std::string, double>& predicted) {
  const auto& sm = rc.sm();
  auto where = [&](const clang::Expr* e) { return sm.getDecomposedExpansionLoc(e->getBeginLoc()); };
  auto [file, offset] = where(a.expr);
  unsigned line = sm.getLineNumber(file, offset);
  // The figure is the one of the loop iteration (or context) the message names: the profile does
  // not call fewer measured, averaged over every iteration, a disagreement.
  predicted["perIteration"] = a.context.empty() ? 0 : 1;
  // The line's distinct accesses of the space and direction, by position in the source.
  auto inventory = [&](bool stores, int& order, int& count, int& orderW, int& countW) {
    std::vector<std::pair<unsigned, const Access*>> same;
    std::set<const clang::Expr*> seen;
    for (const auto& b : m.accesses()) {
      if (b.space != a.space || b.isAtomic || !(stores ? b.isWrite : b.isRead)) continue;
      if (!seen.insert(b.expr).second) continue;
      auto [f, o] = where(b.expr);
      if (f != file || sm.getLineNumber(f, o) != line) continue;
      same.push_back({o, &b});
    }
    std::stable_sort(same.begin(), same.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    order = -1, count = 0, orderW = -1, countW = 0;
    for (const auto& [o, b] : same) {
      if (b->expr == a.expr) order = count, orderW = countW;
      ++count;
      if (b->elemSize == a.elemSize) ++countW;
    }
  };
  int order, count, orderW, countW;
  inventory(store, order, count, orderW, countW);
  if (order < 0) return;
  predicted["width"] = a.elemSize;
  predicted["lineOrder"] = order;
  predicted["lineCount"] = count;
  predicted["lineOrderSameWidth"] = orderW;
  predicted["lineCountSameWidth"] = countW;
  // A read-modify-write (`a[i] += x`: one record read and written, or a load and a store record of
  // one expression) is judged on its loads, and on its stores when the compiler kept the loaded
  // value in a register: the line's stores too.
  if (!store) {
    inventory(true, order, count, orderW, countW);
    if (order < 0) return;
    predicted["storeLineCount"] = count;
    predicted["storeLineCountSameWidth"] = countW;
  }
}

}  // namespace gpuopt
