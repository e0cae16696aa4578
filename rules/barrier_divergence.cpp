#include "rules/barrier_divergence.h"

#include <clang/AST/ParentMapContext.h>
#include <fmt/format.h>

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
    std::string msg = fmt::format("{} is reached by only {} of {} threads of the block ({} arrives, {} does not): "
                                  "threads that skip a block-wide barrier leave the others waiting (deadlock or "
                                  "undefined behaviour)",
                                  b.name, arrive, alive, m.threadName(firstArriving), m.threadName(firstMissing));
    msg += atContext(b.context);
    if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
    Diagnostic d = rc.make(kInfo, rc.span(b.call), msg);
    if (const clang::Expr* g = guardOf(m.ast(), b.call))
      d.notes.push_back({rc.span(g), fmt::format("the threads split on '{}'", rc.text(g))});
    d.fixHint = "move the barrier out of the thread-dependent branch so every thread of the block reaches it "
                "(keep only the work inside the branch)";
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
