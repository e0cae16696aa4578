#include "analyzer/model/coverage.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <llvm/ADT/SmallPtrSet.h>

#include "analyzer/model/ast_util.h"

namespace gpuopt {

namespace {
bool inSystem(const clang::Decl* d) {
  auto& sm = d->getASTContext().getSourceManager();
  auto loc = sm.getExpansionLoc(d->getLocation());
  return loc.isInvalid() || sm.isInSystemHeader(loc);
}

// Library functions the model evaluates itself (their accesses are recorded as such), or that
// take pointers without touching the memory behind them as the kernel's data.
bool modelled(llvm::StringRef n) {
  return n.starts_with("atomic") || n.starts_with("__ld") || n == "printf" || n == "vprintf" || n == "malloc" ||
         n == "free" || n == "__assertfail" || n == "__assert_fail" || n == "assert" || n.starts_with("__builtin_") ||
         n == "__nanosleep" || n.starts_with("__cvta") || n == "__isShared" || n == "__isGlobal" || n == "__isLocal";
}

// A pointer argument that names memory of the kernel's data: not a string literal, not the
// address of a local variable (`sincosf(x, &s, &c)`).
bool dataPointer(const clang::Expr* a) {
  if (!a->getType()->isPointerType()) return false;
  const clang::Expr* e = a->IgnoreParenImpCasts();
  if (llvm::isa<clang::StringLiteral>(e)) return false;
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u && u->getOpcode() == clang::UO_AddrOf)
    if (auto* d = llvm::dyn_cast<clang::DeclRefExpr>(u->getSubExpr()->IgnoreParenImpCasts()))
      if (auto* v = llvm::dyn_cast<clang::VarDecl>(d->getDecl()); v && v->hasLocalStorage() && !v->hasAttr<clang::CUDASharedAttr>())
        return false;
  return true;
}

struct Finder : clang::RecursiveASTVisitor<Finder> {
  clang::ASTContext* ctx = nullptr;
  const clang::FunctionDecl* fn = nullptr;
  std::vector<SourceAccess>* out = nullptr;
  std::vector<const clang::Expr*>* plain = nullptr;
  bool follow = true;
  llvm::SmallPtrSet<const clang::FunctionDecl*, 16> seen;
  std::vector<const clang::FunctionDecl*> todo;
  // Bases of accesses already counted (`a[i][j]`: the inner `a[i]` is part of the outer access).
  llvm::SmallPtrSet<const clang::Expr*, 32> inner;

  void add(const clang::Expr* e, std::string lib = {}) {
    if (plain) plain->push_back(e);
    if (out) out->push_back({e, fn, std::move(lib)});
  }
  void callee(const clang::FunctionDecl* fd) {
    if (!follow || !fd) return;
    // A trivial special member (the copy assignment of a plain struct, `out[i] = t;`): the model
    // copies the object as one access at the call, as the compiler does; the members of the
    // implicit body (`this->offset`, at the struct's line) are not accesses of the program.
    if (auto* md = llvm::dyn_cast<clang::CXXMethodDecl>(fd); md && md->isTrivial()) return;
    const clang::FunctionDecl* def = nullptr;
    if (fd->hasBody(def) && def && !inSystem(def) && seen.insert(def).second) todo.push_back(def);
  }
  void markBase(const clang::Expr* base) {
    base = base->IgnoreParenImpCasts();
    if (llvm::isa<clang::ArraySubscriptExpr, clang::MemberExpr>(base)) inner.insert(base);
    if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(base); u && u->getOpcode() == clang::UO_Deref) inner.insert(base);
  }
  // Unevaluated operands and discarded branches.
  bool TraverseUnaryExprOrTypeTraitExpr(clang::UnaryExprOrTypeTraitExpr*) { return true; }
  bool TraverseCXXNoexceptExpr(clang::CXXNoexceptExpr*) { return true; }
  bool TraverseCXXTypeidExpr(clang::CXXTypeidExpr*) { return true; }
  bool TraverseDecltypeTypeLoc(clang::DecltypeTypeLoc, bool = true) { return true; }
  bool TraverseTypeLoc(clang::TypeLoc, bool = true) { return true; }
  bool TraverseLambdaExpr(clang::LambdaExpr* l) { return TraverseStmt(l->getBody()); }
  bool TraverseIfStmt(clang::IfStmt* s) {
    if (s->isConsteval()) return true;
    bool v = false;
    const clang::Expr* c = s->getCond();
    if (!s->getInit() && !s->getConditionVariable() && c && !c->isValueDependent() && c->EvaluateAsBooleanCondition(v, *ctx)) {
      if (s->isConstexpr() || !c->HasSideEffects(*ctx)) return TraverseStmt(v ? s->getThen() : s->getElse());
    }
    return clang::RecursiveASTVisitor<Finder>::TraverseIfStmt(s);
  }
  bool TraverseUnaryOperator(clang::UnaryOperator* u) {
    // `&a[i]` computes an address: no access of its own (an atomic on it is counted at the call).
    if (u->getOpcode() == clang::UO_AddrOf) {
      const clang::Expr* sub = u->getSubExpr()->IgnoreParenImpCasts();
      if (llvm::isa<clang::ArraySubscriptExpr, clang::MemberExpr>(sub) ||
          (llvm::isa<clang::UnaryOperator>(sub) && llvm::cast<clang::UnaryOperator>(sub)->getOpcode() == clang::UO_Deref)) {
        inner.insert(sub);
      }
    }
    return clang::RecursiveASTVisitor<Finder>::TraverseUnaryOperator(u);
  }
  bool VisitArraySubscriptExpr(clang::ArraySubscriptExpr* e) {
    markBase(e->getBase());
    if (!inner.count(e)) add(e);
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* u) {
    if (u->getOpcode() != clang::UO_Deref) return true;
    markBase(u->getSubExpr());
    if (!inner.count(u)) add(u);
    return true;
  }
  bool VisitMemberExpr(clang::MemberExpr* e) {
    // An enumerator or a static member named through an object (`c[i].num_elements`): the object
    // is not read.
    if (llvm::isa<clang::EnumConstantDecl, clang::VarDecl>(e->getMemberDecl())) {
      markBase(e->getBase());
      return true;
    }
    if (!e->isArrow() || !llvm::isa<clang::FieldDecl>(e->getMemberDecl())) return true;
    markBase(e->getBase());
    if (!inner.count(e)) add(e);
    return true;
  }
  // A launch from device code starts a grid of its own: the child kernel is analysed in its own
  // launch, and the launch's configuration (a stream pointer) touches no memory. Its arguments are
  // evaluated by the parent.
  bool TraverseCUDAKernelCallExpr(clang::CUDAKernelCallExpr* c) {
    for (auto* a : c->arguments())
      if (!TraverseStmt(a)) return false;
    return true;
  }
  bool VisitCallExpr(clang::CallExpr* c) {
    const clang::FunctionDecl* fd = c->getDirectCallee();
    if (!fd) return true;
    // Atomics and the cache-hinted loads are evaluated by name (calls.cpp), not walked, also where
    // a header gives them a body (the bundled sm_32 intrinsics' `__ldca`): one access at the call.
    if (fd->getIdentifier() && namedAccess(fd->getName().str(), c->getNumArgs()) != NamedAccess::None) {
      add(c);
      return true;
    }
    const clang::FunctionDecl* def = nullptr;
    if (fd->hasBody(def) && def && !inSystem(def)) {
      callee(fd);
      return true;
    }
    if (fd->getIdentifier() && modelled(fd->getName())) return true;
    for (const auto* a : c->arguments())
      if (dataPointer(a)) {
        add(c, fd->getQualifiedNameAsString());
        break;
      }
    return true;
  }
  bool VisitCXXConstructExpr(clang::CXXConstructExpr* c) {
    callee(c->getConstructor());
    return true;
  }
  // Inline PTX touching memory (ldmatrix, cp.async, ld/st): an access the model does not evaluate.
  bool VisitGCCAsmStmt(clang::GCCAsmStmt* as) {
    AsmMemory m = asmMemory(as);
    if (m.address) add(m.address, "inline PTX '" + m.instruction + "'");
    return true;
  }
};
// The bodies (and constructor initialisers) of the functions the traversal found calls of.
void drain(Finder& f) {
  while (!f.todo.empty()) {
    const clang::FunctionDecl* fn = f.todo.back();
    f.todo.pop_back();
    f.fn = fn;
    f.TraverseStmt(fn->getBody());
    if (auto* cd = llvm::dyn_cast<clang::CXXConstructorDecl>(fn))
      for (const auto* init : cd->inits())
        if (init->getInit()) f.TraverseStmt(init->getInit());
  }
}
}  // namespace

std::vector<SourceAccess> sourceAccesses(const clang::FunctionDecl* kernel, clang::ASTContext& ctx) {
  std::vector<SourceAccess> out;
  const clang::FunctionDecl* def = nullptr;
  if (!kernel || !kernel->hasBody(def) || !def) return out;
  Finder f;
  f.ctx = &ctx;
  f.out = &out;
  f.seen.insert(def);
  f.todo.push_back(def);
  drain(f);
  return out;
}

void accessesIn(const clang::Stmt* s, clang::ASTContext& ctx, std::vector<const clang::Expr*>& out, bool calls) {
  if (!s) return;
  Finder f;
  f.ctx = &ctx;
  f.plain = &out;
  f.follow = calls;
  f.TraverseStmt(const_cast<clang::Stmt*>(s));
  drain(f);
}

}  // namespace gpuopt
