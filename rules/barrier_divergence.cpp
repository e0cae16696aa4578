#include "rules/barrier_divergence.h"

#include <clang/AST/ParentMapContext.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "analyzer/rule/rule_context.h"
#include "rules/rule_util.h"

namespace gpuopt {

namespace {
// The condition of the innermost if/loop/?: around `s`.
const clang::Expr* guardOf(clang::ASTContext& ctx, const clang::Stmt* s) {
  auto parents = ctx.getParents(*s);
  while (!parents.empty()) {
    const clang::Stmt* p = parents[0].get<clang::Stmt>();
    if (!p) break;
    if (auto* i = llvm::dyn_cast<clang::IfStmt>(p)) return i->getCond();
    if (auto* f = llvm::dyn_cast<clang::ForStmt>(p)) return f->getCond();
    if (auto* w = llvm::dyn_cast<clang::WhileStmt>(p)) return w->getCond();
    if (auto* c = llvm::dyn_cast<clang::ConditionalOperator>(p)) return c->getCond();
    parents = ctx.getParents(*p);
  }
  return nullptr;
}
}  // namespace

void BarrierDivergenceRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  std::set<const clang::Expr*> reported;
  for (const auto& b : m.barriers()) {
    if (!b.blockLevel || !rc.inLintedFile(b.call->getBeginLoc())) continue;
    unsigned alive = 0, arrive = 0;
    int firstMissing = -1, firstArriving = -1;
    for (unsigned t = 0; t < b.active.size(); ++t) {
      if (!b.alive[t]) continue;
      ++alive;
      if (b.active[t]) {
        ++arrive;
        if (firstArriving < 0) firstArriving = static_cast<int>(t);
      } else if (firstMissing < 0) {
        firstMissing = static_cast<int>(t);
      }
    }
    if (arrive == alive || !reported.insert(b.call).second) continue;
    // The threads that skip it reach another block-level barrier in the same round instead, whole
    // warps on each side (a warp-specialised pipeline: producer warps sync in the if, consumer warps
    // in the else): the barriers pair up by count. That works on today's GPUs, not in the
    // programming model (measured on the H100: right results, but synccheck aborts the kernel).
    const Barrier* pair = nullptr;
    auto wholeWarps = [&](const Mask& in) {
      for (unsigned w = 0; w * 32 < in.size(); ++w) {
        int side = -1;
        for (unsigned t = w * 32; t < std::min<size_t>(in.size(), w * 32 + 32); ++t) {
          if (!b.alive[t]) continue;
          if (side < 0) side = in[t];
          else if (side != in[t]) return false;
        }
      }
      return true;
    };
    // The k-th barrier of one arm pairs with the k-th of the other: the run of barriers with b's
    // threads, then the run with the others', in walk order.
    if (wholeWarps(b.active)) {
      const auto& all = m.barriers();
      auto same = [&](const Barrier& x, const Barrier& y, bool complement) {
        if (!x.blockLevel || !y.blockLevel || x.active.size() != y.active.size()) return false;
        for (unsigned t = 0; t < x.active.size(); ++t)
          if (b.alive[t] && ((x.active[t] != 0) != (y.active[t] != 0)) != complement) return false;
        return true;
      };
      size_t i = static_cast<size_t>(&b - all.data());
      size_t rank = 0;
      while (rank < i && same(all[i - rank - 1], b, false)) ++rank;
      size_t j = i + 1;
      while (j < all.size() && same(all[j], b, false)) ++j;
      for (size_t k = 0; j < all.size() && same(all[j], b, true); ++j, ++k)
        if (k == rank) {
          pair = &all[j];
          break;
        }
    }
    std::string msg;
    if (pair) {
      reported.insert(pair->call);  // one finding per pair
      msg = fmt::format("{} is reached by only {} of {} threads of the block ({} arrives, {} does not); the other {} "
                        "reach another {} in the other branch instead: the two pair up by count, which runs on "
                        "today's GPUs but breaks the programming model (every thread must reach the same barrier: "
                        "compute-sanitizer --tool synccheck aborts such a kernel, checked on the H100)",
                        b.name, arrive, alive, m.threadName(firstArriving), m.threadName(firstMissing), alive - arrive,
                        pair->name);
    } else {
      msg = fmt::format("{} is reached by only {} of {} threads of the block ({} arrives, {} does not): "
                        "threads that skip a block-wide barrier leave the others waiting (deadlock or "
                        "undefined behaviour)",
                        b.name, arrive, alive, m.threadName(firstArriving), m.threadName(firstMissing));
    }
    msg += atContext(b.context);
    if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
    Diagnostic d = rc.make(kInfo, rc.span(b.call), msg);
    if (const clang::Expr* g = guardOf(m.ast(), b.call))
      d.notes.push_back({rc.span(g), fmt::format("the threads split on '{}'", rc.text(g))});
    if (pair) d.notes.push_back({rc.span(pair->call), "the other threads' barrier"});
    d.fixHint = pair ? "for warp-specialised stages, synchronise each group with a named barrier of its own "
                       "(PTX bar.sync id, count, or cuda::barrier / cuda::pipeline), or move one __syncthreads() out of "
                       "both branches"
                     : "move the barrier out of the thread-dependent branch so every thread of the block reaches it "
                       "(keep only the work inside the branch)";
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
