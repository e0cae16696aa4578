// Host-code helpers of the host rules (see host_util.h): expressions (what a pointer is based on,
// constants, spelling), loops (which can repeat, trip counts, what varies per iteration) and
// what a loop writes. The call index, copies and iteration events are in host_calls.cpp,
// host_copies.cpp and host_events.cpp.
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


const Expr* strip(const Expr* e) {
  while (e) {
    e = e->IgnoreParenImpCasts();
    if (auto* c = dyn_cast<ExplicitCastExpr>(e)) { e = c->getSubExpr(); continue; }
    if (auto* u = dyn_cast<UnaryOperator>(e); u && (u->getOpcode() == UO_AddrOf || u->getOpcode() == UO_Deref)) {
      e = u->getSubExpr();
      continue;
    }
    // An element of an array of pointers (h[i] with float* h[4]) is a pointer whose storage we do
    // not know: stop there. Elements of data arrays lead to the array itself.
    if (auto* a = dyn_cast<ArraySubscriptExpr>(e)) {
      if (a->getType()->isPointerType()) break;
      e = a->getBase();
      continue;
    }
    if (auto* b = dyn_cast<BinaryOperator>(e); b && (b->getOpcode() == BO_Add || b->getOpcode() == BO_Sub)) {
      e = b->getLHS()->getType()->isPointerType() ? b->getLHS() : b->getRHS();
      continue;
    }
    if (auto* op = dyn_cast<CXXOperatorCallExpr>(e); op && op->getOperator() == OO_Subscript) {
      e = op->getArg(0);
      continue;
    }
    break;
  }
  return e;
}

const Expr* bare(const Expr* e) { return e ? e->IgnoreParenCasts()->IgnoreImplicit()->IgnoreParenCasts() : nullptr; }

std::string calleeName(const CallExpr* c) {
  if (auto* fd = c->getDirectCallee(); fd && fd->getDeclName().isIdentifier()) return fd->getNameAsString();
  return {};
}

namespace {
std::string kernelNamedBy(const Expr* target) {
  for (int depth = 0; target && depth < 4; ++depth) {
    const Expr* e = target->IgnoreParenCasts();
    if (auto* u = dyn_cast<UnaryOperator>(e); u && (u->getOpcode() == UO_AddrOf || u->getOpcode() == UO_Deref))
      e = u->getSubExpr()->IgnoreParenCasts();
    auto* ref = dyn_cast<DeclRefExpr>(e);
    if (!ref) return {};
    if (auto* fd = dyn_cast<FunctionDecl>(ref->getDecl())) return fd->getNameAsString();
    if (auto* pv = dyn_cast<ParmVarDecl>(ref->getDecl())) {
      QualType t = pv->getType().getNonReferenceType();
      if (!t->isFunctionPointerType() && !t->isVoidPointerType() && !t->isFunctionType()) return {};
      return fmt::format("the kernel '{}' points to", pv->getName().str());
    }
    auto* vd = dyn_cast<VarDecl>(ref->getDecl());
    if (!vd || !vd->getInit()) return {};
    target = vd->getInit();
  }
  return {};
}
}  // namespace

std::string launchedKernelName(const CallExpr* launch) {
  if (!launch) return {};
  if (auto* k = dyn_cast<CUDAKernelCallExpr>(launch)) {
    if (auto* fd = k->getDirectCallee(); fd && fd->getDeclName().isIdentifier()) return fd->getNameAsString();
    return kernelNamedBy(k->getCallee());
  }
  // cudaLaunchKernel((void*)k, ...) and its siblings (cudaLaunchKernelEx(&config, k, ...): the second).
  for (unsigned i = 0; i < launch->getNumArgs() && i < 2; ++i)
    if (std::string n = kernelNamedBy(launch->getArg(i)); !n.empty()) return n;
  return {};
}

const FunctionDecl* enclosingFunction(ASTContext& ctx, const Stmt* s) {
  DynTypedNodeList parents = ctx.getParents(*s);
  while (!parents.empty()) {
    if (auto* fd = parents[0].get<FunctionDecl>()) return fd;
    if (auto* st = parents[0].get<Stmt>()) parents = ctx.getParents(*st);
    else if (auto* d = parents[0].get<Decl>()) parents = ctx.getParents(*d);
    else break;
  }
  return nullptr;
}

bool isLoop(const Stmt* s) {
  return isa<ForStmt>(s) || isa<WhileStmt>(s) || isa<DoStmt>(s) || isa<CXXForRangeStmt>(s);
}

const Stmt* loopBody(const Stmt* loop) {
  if (auto* f = dyn_cast<ForStmt>(loop)) return f->getBody();
  if (auto* w = dyn_cast<WhileStmt>(loop)) return w->getBody();
  if (auto* d = dyn_cast<DoStmt>(loop)) return d->getBody();
  if (auto* r = dyn_cast<CXXForRangeStmt>(loop)) return r->getBody();
  return nullptr;
}

bool canRepeat(ASTContext& ctx, const Stmt* loop) {
  const Expr* cond = nullptr;
  if (auto* d = dyn_cast<DoStmt>(loop)) cond = d->getCond();
  else if (auto* w = dyn_cast<WhileStmt>(loop)) cond = w->getCond();
  else if (auto* f = dyn_cast<ForStmt>(loop)) cond = f->getCond();
  if (!cond || cond->isValueDependent()) return true;
  bool value = true;
  return !cond->EvaluateAsBooleanCondition(value, ctx) || value;
}

bool cappedRetry(ASTContext& ctx, const Stmt* loop) {
  const Expr* cond = nullptr;
  const Stmt* body = loopBody(loop);
  if (auto* d = dyn_cast<DoStmt>(loop)) cond = d->getCond();
  else if (auto* w = dyn_cast<WhileStmt>(loop)) cond = w->getCond();
  else if (auto* f = dyn_cast<ForStmt>(loop)) cond = f->getCond();
  if (!cond || !body || cond->isValueDependent()) return false;
  // The conjuncts of the condition.
  llvm::SmallVector<const Expr*, 4> terms, todo{cond};
  while (!todo.empty()) {
    const Expr* e = todo.pop_back_val()->IgnoreParenImpCasts();
    if (auto* b = dyn_cast<BinaryOperator>(e); b && b->getOpcode() == BO_LAnd) {
      todo.push_back(b->getLHS());
      todo.push_back(b->getRHS());
    } else {
      terms.push_back(e);
    }
  }
  const VarDecl* flag = nullptr;
  bool capped = false;
  for (const Expr* t : terms) {
    if (auto* u = dyn_cast<UnaryOperator>(t); u && u->getOpcode() == UO_LNot)
      if (auto* r = dyn_cast<DeclRefExpr>(u->getSubExpr()->IgnoreParenImpCasts()))
        if (auto* v = dyn_cast<VarDecl>(r->getDecl()); v && v->getType()->isBooleanType()) flag = v;
    if (auto* b = dyn_cast<BinaryOperator>(t); b && (b->getOpcode() == BO_LT || b->getOpcode() == BO_LE))
      if (auto n = constInt(ctx, b->getRHS()); n && *n >= 0 && *n <= 16 && !constInt(ctx, b->getLHS())) capped = true;
  }
  if (!flag || !capped) return false;
  struct Sets : RecursiveASTVisitor<Sets> {
    const VarDecl* v = nullptr;
    bool found = false;
    bool VisitBinaryOperator(BinaryOperator* b) {
      if (b->isAssignmentOp())
        if (auto* r = dyn_cast<DeclRefExpr>(b->getLHS()->IgnoreParenImpCasts()); r && r->getDecl() == v) found = true;
      return !found;
    }
  } sets;
  sets.v = flag;
  sets.TraverseStmt(const_cast<Stmt*>(body));
  return sets.found;
}

const Stmt* enclosingLoop(ASTContext& ctx, const Stmt* s) {
  DynTypedNodeList parents = ctx.getParents(*s);
  while (!parents.empty()) {
    if (auto* st = parents[0].get<Stmt>()) {
      if (isLoop(st) && canRepeat(ctx, st) && !cappedRetry(ctx, st)) return st;
      if (isa<LambdaExpr>(st)) return nullptr;
      parents = ctx.getParents(*st);
    } else if (parents[0].get<FunctionDecl>() || parents[0].get<LambdaExpr>()) {
      return nullptr;
    } else if (auto* d = parents[0].get<Decl>()) {
      parents = ctx.getParents(*d);
    } else {
      break;
    }
  }
  return nullptr;
}

bool conditionalIn(ASTContext& ctx, const Stmt* s, const Stmt* loop) {
  const Stmt* child = s;
  DynTypedNodeList parents = ctx.getParents(*s);
  while (!parents.empty()) {
    const Stmt* p = parents[0].get<Stmt>();
    if (!p) {
      auto* d = parents[0].get<Decl>();
      if (!d || isa<FunctionDecl>(d)) return false;
      parents = ctx.getParents(*d);
      continue;
    }
    if (p == loop) return false;
    if (auto* i = dyn_cast<IfStmt>(p); i && (child == i->getThen() || child == i->getElse())) return true;
    if (isa<SwitchCase>(p)) return true;
    if (auto* c = dyn_cast<AbstractConditionalOperator>(p); c && child != c->getCond()) return true;
    if (auto* b = dyn_cast<BinaryOperator>(p); b && b->isLogicalOp() && child == b->getRHS()) return true;
    if (isa<LambdaExpr>(p)) return false;
    child = p;
    parents = ctx.getParents(*p);
  }
  return false;
}

bool sameExpr(ASTContext& ctx, const Expr* a, const Expr* b) {
  if (!a || !b) return false;
  llvm::FoldingSetNodeID x, y;
  a->IgnoreParenImpCasts()->Profile(x, ctx, /*Canonical=*/true);
  b->IgnoreParenImpCasts()->Profile(y, ctx, /*Canonical=*/true);
  return x == y;
}

std::optional<int64_t> constInt(ASTContext& ctx, const Expr* e) {
  if (!e || e->isValueDependent() || e->containsErrors()) return std::nullopt;
  Expr::EvalResult r;
  if (!e->EvaluateAsInt(r, ctx)) return std::nullopt;
  return r.Val.getInt().getExtValue();
}

namespace {
const VarDecl* declOf(const Expr* e) {
  if (auto* dre = dyn_cast_or_null<DeclRefExpr>(e ? e->IgnoreParenImpCasts() : nullptr))
    return dyn_cast<VarDecl>(dre->getDecl());
  return nullptr;
}
}  // namespace

const VarDecl* unitCounter(const Stmt* loop) {
  auto* f = dyn_cast<ForStmt>(loop);
  if (!f || !f->getInc()) return nullptr;
  const Expr* inc = f->getInc()->IgnoreParenImpCasts();
  if (auto* u = dyn_cast<UnaryOperator>(inc); u && u->isIncrementOp()) return declOf(u->getSubExpr());
  if (auto* op = dyn_cast<CXXOperatorCallExpr>(inc); op && op->getOperator() == OO_PlusPlus) return declOf(op->getArg(0));
  if (auto* c = dyn_cast<CompoundAssignOperator>(inc); c && c->getOpcode() == BO_AddAssign) {
    if (auto* lit = dyn_cast<IntegerLiteral>(c->getRHS()->IgnoreParenImpCasts()); lit && lit->getValue() == 1)
      return declOf(c->getLHS());
  }
  if (auto* b = dyn_cast<BinaryOperator>(inc); b && b->getOpcode() == BO_Assign) {
    const VarDecl* v = declOf(b->getLHS());
    if (auto* add = dyn_cast<BinaryOperator>(b->getRHS()->IgnoreParenImpCasts()); v && add && add->getOpcode() == BO_Add) {
      auto* lit = dyn_cast<IntegerLiteral>(add->getRHS()->IgnoreParenImpCasts());
      if (declOf(add->getLHS()) == v && lit && lit->getValue() == 1) return v;
    }
  }
  return nullptr;
}

std::optional<int64_t> tripCount(ASTContext& ctx, const Stmt* loop, bool bound) {
  auto* f = dyn_cast<ForStmt>(loop);
  const VarDecl* v = unitCounter(loop);
  if (!f || !v || !f->getCond()) return std::nullopt;
  std::optional<int64_t> start;
  if (auto* ds = dyn_cast_or_null<DeclStmt>(f->getInit()); ds && ds->isSingleDecl() && ds->getSingleDecl() == v)
    start = v->hasInit() ? constInt(ctx, v->getInit()) : std::nullopt;
  else if (auto* b = dyn_cast_or_null<BinaryOperator>(f->getInit()); b && b->getOpcode() == BO_Assign && declOf(b->getLHS()) == v)
    start = constInt(ctx, b->getRHS());
  if (!start) return std::nullopt;
  auto count = [&](const Expr* e) -> std::optional<int64_t> {
    auto* cond = dyn_cast<BinaryOperator>(e->IgnoreParenImpCasts());
    if (!cond || declOf(cond->getLHS()) != v) return std::nullopt;
    auto end = constInt(ctx, cond->getRHS());
    // A bound in a local set once from constants (`int warps = NT / 32;`), for the bound only.
    if (!end && bound)
      if (const Expr* init = fixedInit(ctx, declOf(cond->getRHS()))) end = constInt(ctx, init);
    if (!end) return std::nullopt;
    int64_t n = cond->getOpcode() == BO_LT || cond->getOpcode() == BO_NE ? *end - *start
                : cond->getOpcode() == BO_LE                             ? *end - *start + 1
                                                                         : -1;
    if (n <= 0) return std::nullopt;
    return n;
  };
  if (!bound) return count(f->getCond());
  // `i < 4 && i < n`: at most the least of the constant bounds among the conjuncts.
  std::optional<int64_t> least;
  std::vector<const Expr*> todo{f->getCond()};
  while (!todo.empty()) {
    const Expr* e = todo.back()->IgnoreParenImpCasts();
    todo.pop_back();
    if (auto* b = dyn_cast<BinaryOperator>(e); b && b->getOpcode() == BO_LAnd) {
      todo.push_back(b->getLHS());
      todo.push_back(b->getRHS());
      continue;
    }
    if (auto n = count(e)) least = least ? std::min(*least, *n) : *n;
  }
  return least;
}

namespace {
// Variables a statement declares or changes.
class Changes : public RecursiveASTVisitor<Changes> {
 public:
  std::set<const VarDecl*> vars;
  bool addressTaken = true;
  bool shouldVisitLambdaBodies() const { return false; }
  bool VisitVarDecl(VarDecl* v) {
    vars.insert(v);
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator* b) {
    if (b->isAssignmentOp())
      if (auto* v = declOf(b->getLHS())) vars.insert(v);
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator* u) {
    if (u->isIncrementDecrementOp() || (addressTaken && u->getOpcode() == UO_AddrOf))
      if (auto* v = declOf(u->getSubExpr())) vars.insert(v);
    return true;
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr* c) {
    if (c->isAssignmentOp() || c->getOperator() == OO_PlusPlus || c->getOperator() == OO_MinusMinus)
      if (auto* v = declOf(c->getArg(0))) vars.insert(v);
    return true;
  }
};

class Refs : public RecursiveASTVisitor<Refs> {
 public:
  const std::set<const VarDecl*>* vars = nullptr;
  bool found = false;
  bool VisitDeclRefExpr(DeclRefExpr* d) {
    if (auto* v = dyn_cast<VarDecl>(d->getDecl()); v && vars->count(v)) found = true;
    return !found;
  }
};
}  // namespace

std::set<const VarDecl*> loopVaryingVars(const Stmt* loop, bool addressTaken) {
  Changes c;
  c.addressTaken = addressTaken;
  c.TraverseStmt(const_cast<Stmt*>(loop));
  return c.vars;
}

bool refersToAny(const Expr* e, const std::set<const VarDecl*>& vars) {
  if (!e) return false;
  Refs r;
  r.vars = &vars;
  r.TraverseStmt(const_cast<Expr*>(e));
  return r.found;
}

const Expr* fixedInit(ASTContext& ctx, const VarDecl* vd) {
  (void)ctx;
  if (!vd || !vd->hasInit() || !vd->isLocalVarDecl() || vd->getType()->isReferenceType()) return nullptr;
  auto* fn = dyn_cast_or_null<FunctionDecl>(vd->getParentFunctionOrMethod());
  if (!fn || !fn->getBody()) return nullptr;
  struct Assigned : RecursiveASTVisitor<Assigned> {
    const VarDecl* v;
    bool found = false;
    bool VisitBinaryOperator(BinaryOperator* b) {
      if (b->isAssignmentOp() && declOf(b->getLHS()) == v) found = true;
      return true;
    }
    bool VisitUnaryOperator(UnaryOperator* u) {
      if ((u->isIncrementDecrementOp() || u->getOpcode() == UO_AddrOf) && declOf(u->getSubExpr()) == v) found = true;
      return true;
    }
  } a;
  a.v = vd;
  a.TraverseStmt(fn->getBody());
  return a.found ? nullptr : vd->getInit();
}

std::string spelled(ASTContext& ctx, const Expr* e) {
  if (!e) return {};
  const SourceManager& sm = ctx.getSourceManager();
  SourceLocation b = sm.getSpellingLoc(e->getBeginLoc()), en = sm.getSpellingLoc(e->getEndLoc());
  if (b.isInvalid() || en.isInvalid() || sm.getFileID(b) != sm.getFileID(en) || sm.isBeforeInTranslationUnit(en, b))
    return {};
  std::string t = Lexer::getSourceText(CharSourceRange::getTokenRange(b, en), sm, ctx.getLangOpts()).str();
  std::string out;
  for (char c : t) {
    if (c == '\n' || c == '\t') c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(c);
  }
  return out.size() > 80 ? std::string() : out;
}

std::string bytesText(int64_t b) {
  auto num = [](double x) {
    std::string s = fmt::format("{:.1f}", x);
    if (s.size() > 2 && s.substr(s.size() - 2) == ".0") s.resize(s.size() - 2);
    return s;
  };
  if (b < 1024) return fmt::format("{} byte{}", b, b == 1 ? "" : "s");
  if (b < (1 << 20)) return num(b / 1024.0) + " KiB";
  if (b < (int64_t(1) << 30)) return num(b / 1048576.0) + " MiB";
  return num(b / 1073741824.0) + " GiB";
}

const VarDecl* baseVar(const Expr* e) {
  for (int guard = 0; e && guard < 16; ++guard) {
    e = strip(e);
    if (auto* m = dyn_cast<MemberExpr>(e)) {
      e = m->getBase();
      continue;
    }
    if (auto* mc = dyn_cast<CXXMemberCallExpr>(e)) {
      e = mc->getImplicitObjectArgument();
      continue;
    }
    break;
  }
  return declOf(e);
}

bool writesTo(ASTContext& ctx, const Stmt* loop, const VarDecl* v) {
  (void)ctx;
  if (!v) return false;
  struct W : RecursiveASTVisitor<W> {
    const VarDecl* v;
    bool found = false;
    bool VisitBinaryOperator(BinaryOperator* b) {
      if (b->isAssignmentOp() && baseVar(b->getLHS()) == v) found = true;
      return !found;
    }
    bool VisitUnaryOperator(UnaryOperator* u) {
      if (u->isIncrementDecrementOp() && baseVar(u->getSubExpr()) == v) found = true;
      return !found;
    }
    bool VisitCallExpr(CallExpr* c) {
      if (isCopyName(calleeName(c))) return true;
      if (auto* op = dyn_cast<CXXOperatorCallExpr>(c)) {
        if ((op->isAssignmentOp() || op->getOperator() == OO_PlusPlus || op->getOperator() == OO_MinusMinus) &&
            baseVar(op->getArg(0)) == v)
          found = true;
        return !found;
      }
      if (auto* mc = dyn_cast<CXXMemberCallExpr>(c)) {
        auto* md = mc->getMethodDecl();
        if (md && !md->isConst() && baseVar(mc->getImplicitObjectArgument()) == v) found = true;
      }
      const FunctionDecl* fd = c->getDirectCallee();
      for (unsigned i = 0; i < c->getNumArgs() && !found; ++i) {
        if (baseVar(c->getArg(i)) != v) continue;
        QualType pt;
        if (fd && i < fd->getNumParams()) pt = fd->getParamDecl(i)->getType();
        if (pt.isNull()) {
          // Variadic or unknown: a pointer may be written through (scanf), a value is not.
          QualType at = c->getArg(i)->IgnoreParenImpCasts()->getType();
          if (at->isPointerType() || at->isArrayType()) found = true;
        } else if (pt->isPointerType() || pt->isReferenceType()) {
          if (!pt->getPointeeType().isConstQualified()) found = true;
        }
      }
      return !found;
    }
  } w;
  w.v = v;
  w.TraverseStmt(const_cast<Stmt*>(loopBody(loop)));
  return w.found;
}

}  // namespace gpuopt::host
