// Host-code helpers: the calls of each function (CallIndex), the loops around a call reached
// through helper functions (loopSites), and a helper's parameters mapped to the arguments its
// callers pass (throughParams; see host_util.h).
#include "rules/host_util.h"

#include <clang/AST/DeclCXX.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Lex/Lexer.h>
#include <fmt/format.h>
#include <llvm/ADT/FoldingSet.h>

namespace gpuopt::host {

using namespace clang;

// ---- call index and loop sites ----------------------------------------------------------------

void CallIndex::build() const {
  built_ = true;
  struct V : RecursiveASTVisitor<V> {
    const CallIndex* self;
    bool shouldVisitTemplateInstantiations() const { return true; }
    bool shouldVisitImplicitCode() const { return true; }
    bool VisitCallExpr(CallExpr* c) {
      if (auto* fd = c->getDirectCallee(); fd && !c->containsErrors()) self->calls_[fd->getCanonicalDecl()].push_back(c);
      return true;
    }
  } v;
  v.self = this;
  v.TraverseAST(ctx_);
}

const std::vector<const CallExpr*>& CallIndex::callsOf(const FunctionDecl* fd) const {
  static const std::vector<const CallExpr*> none;
  if (!built_) build();
  auto it = calls_.find(fd ? fd->getCanonicalDecl() : nullptr);
  return it == calls_.end() ? none : it->second;
}

const Stmt* LoopSite::anchor() const { return via.empty() ? nullptr : via.front(); }

std::vector<LoopSite> loopSites(ASTContext& ctx, const CallIndex& index, const Stmt* s, unsigned depth) {
  std::vector<LoopSite> out;
  if (const Stmt* loop = enclosingLoop(ctx, s)) {
    out.push_back({loop, {}});
    return out;
  }
  const FunctionDecl* fn = enclosingFunction(ctx, s);
  if (!fn || depth == 0 || fn->hasAttr<CUDAGlobalAttr>()) return out;
  // A function template's pattern is called through its instantiations.
  const FunctionDecl* key = fn->getTemplateInstantiationPattern() ? fn : fn;
  std::set<std::pair<const Stmt*, const Stmt*>> seen;
  for (const CallExpr* call : index.callsOf(key)) {
    if (call == s) continue;
    for (LoopSite site : loopSites(ctx, index, call, depth - 1)) {
      site.via.push_back(call);
      if (seen.insert({site.loop, site.via.front()}).second) out.push_back(std::move(site));
    }
  }
  return out;
}

const Expr* throughParams(const Expr* e, const std::vector<const CallExpr*>& via) {
  size_t level = via.size();
  while (e && level > 0) {
    auto* dre = dyn_cast<DeclRefExpr>(bare(e));
    auto* pv = dre ? dyn_cast<ParmVarDecl>(dre->getDecl()) : nullptr;
    const CallExpr* call = via[level - 1];
    const FunctionDecl* callee = call->getDirectCallee();
    if (!pv || !callee || pv->getDeclContext() != callee->getDefinition() ||
        pv->getFunctionScopeIndex() >= call->getNumArgs())
      return e;
    e = call->getArg(pv->getFunctionScopeIndex());
    --level;
  }
  return e;
}

}  // namespace gpuopt::host
