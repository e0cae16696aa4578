// Values of host expressions around a launch (launch_eval.h), continued: which kernels a callee
// expression names, whether a condition the constants decide keeps a launch from running, and
// whether an assignment reaches a launch through the arms of ifs (armExcludes).
#include "analyzer/model/launch_eval.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/StmtCXX.h>

#include <algorithm>
#include <optional>
#include <set>

#include "analyzer/model/ast_util.h"

namespace gpuopt {
namespace {
// The if statements around `s` up to its function, innermost first, with whether `s` is in the
// then-arm.
std::vector<std::pair<const clang::IfStmt*, bool>> enclosingArms(const clang::Stmt* s, clang::ASTContext& ctx) {
  std::vector<std::pair<const clang::IfStmt*, bool>> out;
  const clang::Stmt* prev = s;
  clang::DynTypedNodeList ps = ctx.getParents(*s);
  for (int hops = 0; hops < 256 && !ps.empty(); ++hops) {
    const clang::Stmt* p = ps[0].get<clang::Stmt>();
    if (!p || llvm::isa<clang::LambdaExpr>(p)) break;
    if (auto* is = llvm::dyn_cast<clang::IfStmt>(p); is && !is->getInit() && !is->getConditionVariable()) {
      if (prev == is->getThen()) out.push_back({is, true});
      else if (prev == is->getElse()) out.push_back({is, false});
    }
    prev = p;
    ps = ctx.getParents(*p);
  }
  return out;
}

// A condition whose value cannot change within `fn`: integer literals, operators and local
// variables or parameters never assigned in it (no call, no member, no memory).
bool stableCondition(const clang::Expr* e, const std::set<const clang::VarDecl*>& assigned) {
  e = e->IgnoreParenImpCasts();
  if (llvm::isa<clang::IntegerLiteral, clang::CXXBoolLiteralExpr, clang::CharacterLiteral>(e)) return true;
  if (auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (llvm::isa<clang::EnumConstantDecl>(d->getDecl())) return true;
    auto* vd = llvm::dyn_cast<clang::VarDecl>(d->getDecl());
    return vd && (vd->hasLocalStorage() || vd->getType().isConstQualified()) && !vd->getType()->isReferenceType() &&
           !assigned.count(vd);
  }
  if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e))
    return !b->isAssignmentOp() && stableCondition(b->getLHS(), assigned) && stableCondition(b->getRHS(), assigned);
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e))
    return !u->isIncrementDecrementOp() && u->getOpcode() != clang::UO_AddrOf && u->getOpcode() != clang::UO_Deref &&
           stableCondition(u->getSubExpr(), assigned);
  return false;
}

}  // namespace

// A set in one arm of `if (c)` does not reach a use in the other arm of that if, nor in the other
// arm of a later `if (c)` with the same condition when nothing in the function can change it
// (HeCBench wmma: `if (impl == 0) block.x = 32; else { block.x = 64; block.y = 4; }`, then `if
// (impl == 0) k0<<<grid, block>>>(...); else k1<<<grid, block>>>(...)`: k0 gets 32 x 1).
bool armExcludes(const clang::Stmt* set, const clang::Expr* use, clang::ASTContext& ctx) {
  auto setArms = enclosingArms(set, ctx);
  if (setArms.empty()) return false;
  auto useArms = enclosingArms(use, ctx);
  std::optional<std::set<const clang::VarDecl*>> assigned;
  for (const auto& [si, sThen] : setArms)
    for (const auto& [ui, uThen] : useArms) {
      if (sThen == uThen) continue;
      if (si == ui) return true;
      llvm::FoldingSetNodeID a, b;
      si->getCond()->Profile(a, ctx, true);
      ui->getCond()->Profile(b, ctx, true);
      if (a != b) continue;
      if (!assigned) {
        const clang::Stmt* fnBody = nullptr;
        for (clang::DynTypedNodeList ps = ctx.getParents(*si); !ps.empty();) {
          if (auto* fd = ps[0].get<clang::FunctionDecl>()) { fnBody = fd->getBody(); break; }
          if (ps[0].get<clang::LambdaExpr>()) break;
          ps = ctx.getParents(ps[0]);
        }
        if (!fnBody) return false;
        assigned = assignedVars(fnBody);
      }
      if (stableCondition(si->getCond(), *assigned)) return true;
    }
  return false;
}

std::vector<const clang::FunctionDecl*> HostValues::kernels(const clang::Expr* callee, const Env& env) {
  std::vector<const clang::FunctionDecl*> out;
  kernelsAt(callee, env, 0, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void HostValues::kernelsAt(const clang::Expr* e, const Env& env, int depth, std::vector<const clang::FunctionDecl*>& out) {
  if (!e || depth > kMaxDepth) return;
  e = strip(e)->IgnoreParenImpCasts();
  if (auto* c = llvm::dyn_cast<clang::ExplicitCastExpr>(e)) return kernelsAt(c->getSubExpr(), env, depth + 1, out);
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u && (u->getOpcode() == clang::UO_AddrOf || u->getOpcode() == clang::UO_Deref))
    return kernelsAt(u->getSubExpr(), env, depth + 1, out);
  if (auto* co = llvm::dyn_cast<clang::ConditionalOperator>(e)) {
    auto c = integerAt(co->getCond(), env, depth + 1);
    if (!c || *c) kernelsAt(co->getTrueExpr(), env, depth + 1, out);
    if (!c || !*c) kernelsAt(co->getFalseExpr(), env, depth + 1, out);
    return;
  }
  if (auto* me = llvm::dyn_cast<clang::MemberExpr>(e)) {
    if (auto b = memberValue(me->getBase(), me->getMemberDecl()->getNameAsString(), me, env, depth + 1))
      kernelsAt(b->e, b->env, depth + 1, out);
    return;
  }
  if (auto* call = llvm::dyn_cast<clang::CallExpr>(e)) {
    if (auto b = returnedValue(call, env)) kernelsAt(b->e, b->env, depth + 1, out);
    return;
  }
  auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e);
  if (!dre) return;
  if (auto* fd = llvm::dyn_cast<clang::FunctionDecl>(dre->getDecl())) {
    if (fd->hasAttr<clang::CUDAGlobalAttr>()) out.push_back(fd);
    return;
  }
  auto* v = llvm::dyn_cast<clang::VarDecl>(dre->getDecl());
  if (!v) return;
  if (!v->hasLocalStorage() && !llvm::isa<clang::ParmVarDecl>(v)) {
    auto it = globalSets_.find(v->getCanonicalDecl());
    if (it != globalSets_.end())
      for (const auto& [m, value] : it->second)
        if (m.empty() && value) kernelsAt(value, {}, depth + 1, out);
    if (v->getInit()) kernelsAt(v->getInit(), {}, depth + 1, out);
    return;
  }
  if (auto b = variableValue(v, dre, env)) return kernelsAt(b->e, b->env, depth + 1, out);
  // A generic lambda called with several kernels of one type (`go(k1); go(k2);`): each of them.
  if (auto* p = llvm::dyn_cast<clang::ParmVarDecl>(v))
    for (const Bound& b : lambdaArguments(p, env)) kernelsAt(b.e, b.env, depth + 1, out);
}

bool HostValues::dead(const clang::Stmt* s, const Env& env) {
  std::vector<const clang::Stmt*> chain{s};  // from `s` outwards
  clang::DynTypedNodeList ps = ctx_.getParents(*s);
  for (int hops = 0; hops < 256 && !ps.empty(); ++hops) {
    const clang::Stmt* p = ps[0].get<clang::Stmt>();
    if (!p) {
      // Through a declaration (`auto x = c ? k1 : k2;`): keep climbing until the function.
      if (ps[0].get<clang::FunctionDecl>() || ps[0].get<clang::LambdaExpr>()) return false;
      ps = ctx_.getParents(ps[0]);
      continue;
    }
    if (llvm::isa<clang::LambdaExpr>(p)) return false;
    const clang::Stmt* prev = chain.back();
    if (auto* is = llvm::dyn_cast<clang::IfStmt>(p); is && !is->getInit() && !is->getConditionVariable()) {
      if (prev == is->getThen() || prev == is->getElse()) {
        auto c = integerAt(is->getCond(), env, 0);
        if (c && ((prev == is->getThen()) != (*c != 0))) return true;
      }
    } else if (auto* co = llvm::dyn_cast<clang::ConditionalOperator>(p)) {
      if (prev == co->getTrueExpr() || prev == co->getFalseExpr()) {
        auto c = integerAt(co->getCond(), env, 0);
        if (c && ((prev == co->getTrueExpr()) != (*c != 0))) return true;
      }
    } else if (auto* ss = llvm::dyn_cast<clang::SwitchStmt>(p); ss && !ss->getInit() && !ss->getConditionVariable() && chain.size() >= 2) {
      // The case labels that reach the item of the switch's body holding `s`: its own and those
      // above it that fall through to it (no break between).
      auto* body = llvm::dyn_cast_or_null<clang::CompoundStmt>(ss->getBody());
      auto c = body && prev == body ? integerAt(ss->getCond(), env, 0) : std::nullopt;
      if (c) {
        std::vector<const clang::Stmt*> items(body->body_begin(), body->body_end());
        auto at = std::find(items.begin(), items.end(), chain[chain.size() - 2]);
        if (at != items.end()) {
          bool reached = false, labelled = false;
          for (auto it = at + 1; it != items.begin() && !reached;) {
            --it;
            const clang::Stmt* st = *it;
            if (it != at && llvm::isa<clang::BreakStmt, clang::ReturnStmt, clang::ContinueStmt>(st)) break;
            while (auto* sc = llvm::dyn_cast<clang::SwitchCase>(st)) {
              labelled = true;
              if (llvm::isa<clang::DefaultStmt>(sc)) reached = true;
              else if (auto* cs = llvm::dyn_cast<clang::CaseStmt>(sc)) {
                clang::Expr::EvalResult r;
                if (!cs->getLHS()->EvaluateAsInt(r, ctx_) || r.Val.getInt().getExtValue() == *c) reached = true;
              }
              st = sc->getSubStmt();
            }
          }
          if (labelled && !reached) return true;
        }
      }
    }
    chain.push_back(p);
    ps = ctx_.getParents(*p);
  }
  return false;
}

}  // namespace gpuopt
