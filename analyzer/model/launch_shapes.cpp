// Launch shapes: reading a block-shape expression (an integer, a dim3 temporary or variable, a
// local holding one where the launch reads it) and the kernel and configuration a launch API call
// names (see launch_index.h).
#include "analyzer/model/launch_index.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <fmt/format.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Support/Path.h>

#include "analyzer/model/ast_util.h"
#include "analyzer/model/launch_detail.h"

#include <algorithm>

namespace gpuopt {

namespace launch_detail {

// Whether a local variable is assigned after its initialisation anywhere in its function
// (`threads = 128;` before a second launch): then its initialiser is not the launch's value.
bool reassigned(const clang::VarDecl* vd) {
  auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(vd->getDeclContext());
  if (!fn || !fn->getBody()) return false;
  struct Finder : clang::RecursiveASTVisitor<Finder> {
    const clang::VarDecl* v;
    bool found = false;
    bool refers(const clang::Expr* e) const {
      auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts());
      return d && d->getDecl() == v;
    }
    bool VisitBinaryOperator(clang::BinaryOperator* b) {
      if (b->isAssignmentOp() && refers(b->getLHS())) found = true;
      return !found;
    }
    bool VisitUnaryOperator(clang::UnaryOperator* u) {
      if (u->isIncrementDecrementOp() && refers(u->getSubExpr())) found = true;
      return !found;
    }
    // A class type's assignment (`threads = dim3(64, 1, 1)`, `= make_uint3(...)`) is an operator call.
    bool VisitCXXOperatorCallExpr(clang::CXXOperatorCallExpr* c) {
      if (c->isAssignmentOp() && c->getNumArgs() > 0 && refers(c->getArg(0))) found = true;
      return !found;
    }
  } f;
  f.v = vd;
  f.TraverseStmt(fn->getBody());
  return f.found;
}

// The kernel a function reference names: `k`, `&k`, `(void*)k`, `k<T>`, or a local variable never
// reassigned that holds one (`auto kernel = k<T, 4>; cudaLaunchKernel((void*)kernel, ...)`).
const clang::FunctionDecl* kernelOf(const clang::Expr* e) {
  for (int hops = 0; e && hops < 8; ++hops) {
    e = e->IgnoreParenImpCasts();
    if (auto* c = llvm::dyn_cast<clang::ExplicitCastExpr>(e)) { e = c->getSubExpr(); continue; }
    if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u && u->getOpcode() == clang::UO_AddrOf) { e = u->getSubExpr(); continue; }
    if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e))
      if (auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl());
          vd && vd->hasLocalStorage() && vd->getInit() && !reassigned(vd)) {
        e = vd->getInit();
        continue;
      }
    break;
  }
  if (auto* dre = llvm::dyn_cast_or_null<clang::DeclRefExpr>(e))
    if (auto* fd = llvm::dyn_cast<clang::FunctionDecl>(dre->getDecl()); fd && fd->hasAttr<clang::CUDAGlobalAttr>()) return fd;
  return nullptr;
}

// The block shape of a cudaLaunchConfig_t passed as `&cfg`: the last `cfg.blockDim = X` in its
// function, else the blockDim of its initialiser (`{grid, block}` or `{.blockDim = block}`).
const clang::Expr* configBlockDim(const clang::Expr* arg) {
  arg = arg->IgnoreParenImpCasts();
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(arg); u && u->getOpcode() == clang::UO_AddrOf) arg = u->getSubExpr()->IgnoreParenImpCasts();
  auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(arg);
  auto* vd = dre ? llvm::dyn_cast<clang::VarDecl>(dre->getDecl()) : nullptr;
  if (!vd) return nullptr;
  const clang::Expr* found = nullptr;
  if (auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(vd->getDeclContext()); fn && fn->getBody()) {
    struct Sets : clang::RecursiveASTVisitor<Sets> {
      const clang::VarDecl* v;
      const clang::Expr* rhs = nullptr;
      bool VisitBinaryOperator(clang::BinaryOperator* b) {
        if (b->getOpcode() != clang::BO_Assign) return true;
        auto* me = llvm::dyn_cast<clang::MemberExpr>(b->getLHS()->IgnoreParenImpCasts());
        auto* base = me ? llvm::dyn_cast<clang::DeclRefExpr>(me->getBase()->IgnoreParenImpCasts()) : nullptr;
        if (base && base->getDecl() == v && me->getMemberDecl()->getName() == "blockDim") rhs = b->getRHS();
        return true;
      }
      // `cfg.blockDim = dim3(...)` goes through dim3's copy assignment operator.
      bool VisitCXXOperatorCallExpr(clang::CXXOperatorCallExpr* c) {
        if (c->getOperator() != clang::OO_Equal || c->getNumArgs() != 2) return true;
        auto* me = llvm::dyn_cast<clang::MemberExpr>(c->getArg(0)->IgnoreParenImpCasts());
        auto* base = me ? llvm::dyn_cast<clang::DeclRefExpr>(me->getBase()->IgnoreParenImpCasts()) : nullptr;
        if (base && base->getDecl() == v && me->getMemberDecl()->getName() == "blockDim") rhs = c->getArg(1);
        return true;
      }
    } sets;
    sets.v = vd;
    sets.TraverseStmt(fn->getBody());
    found = sets.rhs;
  }
  if (!found && vd->hasInit())
    if (auto* ile = llvm::dyn_cast<clang::InitListExpr>(vd->getInit()->IgnoreImplicit()))
      if (ile->getNumInits() >= 2) found = ile->getInit(1);  // gridDim, blockDim, ...
  return found;
}

}  // namespace launch_detail

using namespace launch_detail;

namespace {
// The expression whose value a local variable holds where `use` reads it: its initialiser when no
// assignment can reach `use`, the right-hand side of the last assignment before `use` when that
// assignment is a statement of a block enclosing `use` (so it always runs first), else nullptr (an
// assignment in a branch or a loop around `use`: not one value). `dim3 threads(256); k<<<g,
// threads>>>(); if (big) { threads = dim3(64); k2<<<g, threads>>>(); }` gives 256 for k, 64 for k2.
const clang::Expr* valueAt(const clang::VarDecl* vd, const clang::Expr* use, clang::ASTContext& ctx) {
  auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(vd->getDeclContext());
  // A variable declared with no initialiser (`int threads; ... threads = 1;`, HeCBench is) holds the
  // value of the assignment that reaches `use`, or none.
  if (!fn || !fn->getBody()) return nullptr;
  struct Finder : clang::RecursiveASTVisitor<Finder> {
    const clang::VarDecl* v;
    std::vector<std::pair<const clang::Stmt*, const clang::Expr*>> sets;  // statement, value (null: not one)
    bool refers(const clang::Expr* e) const {
      auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts());
      return d && d->getDecl() == v;
    }
    bool VisitBinaryOperator(clang::BinaryOperator* b) {
      if (b->isAssignmentOp() && refers(b->getLHS()))
        sets.push_back({b, b->getOpcode() == clang::BO_Assign ? b->getRHS() : nullptr});
      return true;
    }
    bool VisitUnaryOperator(clang::UnaryOperator* u) {
      if (u->isIncrementDecrementOp() && refers(u->getSubExpr())) sets.push_back({u, nullptr});
      return true;
    }
    bool VisitCXXOperatorCallExpr(clang::CXXOperatorCallExpr* c) {
      if (c->isAssignmentOp() && c->getNumArgs() > 1 && refers(c->getArg(0)))
        sets.push_back({c, c->getOperator() == clang::OO_Equal ? c->getArg(1) : nullptr});
      return true;
    }
  } f;
  f.v = vd;
  f.TraverseStmt(fn->getBody());
  if (f.sets.empty()) return vd->getInit();
  const auto& sm = ctx.getSourceManager();
  // The statements enclosing `use`, innermost first, and whether a loop is among them.
  std::vector<const clang::Stmt*> around;
  for (clang::DynTypedNodeList ps = ctx.getParents(*use); !ps.empty();) {
    const clang::Stmt* p = ps[0].get<clang::Stmt>();
    if (!p) break;
    around.push_back(p);
    ps = ctx.getParents(*p);
  }
  auto encloses = [&](const clang::Stmt* outer, const clang::Stmt* inner) {
    return sm.isPointWithin(inner->getBeginLoc(), outer->getBeginLoc(), outer->getEndLoc());
  };
  for (const clang::Stmt* a : around)
    if (llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt, clang::CXXForRangeStmt>(a))
      for (const auto& [st, val] : f.sets)
        if (encloses(a, st)) return nullptr;  // assigned in a loop around the use: differs by iteration
  const clang::Stmt* last = nullptr;
  const clang::Expr* lastVal = nullptr;
  for (const auto& [st, val] : f.sets)
    if (sm.isBeforeInTranslationUnit(st->getBeginLoc(), use->getBeginLoc()) &&
        (!last || sm.isBeforeInTranslationUnit(last->getBeginLoc(), st->getBeginLoc())))
      last = st, lastVal = val;
  if (!last) return vd->getInit();
  if (!lastVal) return nullptr;
  // It must be a statement of a block that encloses `use` (not inside an if or loop of its own).
  // (Through the full expression around it: ExprWithCleanups when it makes temporaries.)
  const clang::Stmt* parent = last;
  do {
    auto ps = ctx.getParents(*parent);
    parent = ps.empty() ? nullptr : ps[0].get<clang::Stmt>();
  } while (parent && llvm::isa<clang::ExprWithCleanups>(parent));
  if (!parent || !llvm::isa<clang::CompoundStmt>(parent)) return nullptr;
  if (std::find(around.begin(), around.end(), parent) == around.end()) return nullptr;
  return lastVal;
}
}  // namespace


// Reads a block-shape expression: an integer, a dim3(...) temporary or a dim3 variable.
bool readBlockShape(const clang::Expr* e, clang::ASTContext& ctx, unsigned dims[3], bool partial) {
  dims[0] = 0, dims[1] = 1, dims[2] = 1;
  e = strip(e);
  clang::Expr::EvalResult r;
  // A constant, or a local variable holding one where it is read (common `int threads = 256;`),
  // through a few copies (`int t3; ... t3 = threads;`).
  std::function<bool(const clang::Expr*, unsigned&, int)> evalIntAt = [&](const clang::Expr* x, unsigned& out, int depth) {
    x = strip(x);
    if (x->isValueDependent()) return false;
    if (x->EvaluateAsInt(r, ctx)) { out = static_cast<unsigned>(r.Val.getInt().getExtValue()); return true; }
    x = x->IgnoreImpCasts();
    if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(x); dre && depth < 4)
      if (auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl()); vd && vd->hasLocalStorage())
        if (const clang::Expr* v = valueAt(vd, dre, ctx)) return evalIntAt(v, out, depth + 1);
    return false;
  };
  // An axis: its value, or (partial) 0 for one known only at run time.
  auto evalInt = [&](const clang::Expr* x, unsigned& out) {
    if (evalIntAt(x, out, 0)) return true;
    if (partial) out = 0;
    return partial;
  };
  auto fromConstruct = [&](const clang::CXXConstructExpr* c) {
    unsigned n = 0;
    for (const auto* a : c->arguments()) {
      if (llvm::isa<clang::CXXDefaultArgExpr>(a)) break;
      if (n < 3 && !evalInt(a, dims[n])) return false;
      ++n;
    }
    return n > 0 && (partial || dims[0] > 0);
  };
  for (int depth = 0; depth < 8; ++depth) {
    e = strip(e);
    if (e->isInstantiationDependent() || e->getType().isNull()) return false;
    if (auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(e)) {
      if (c->getNumArgs() == 1 && !llvm::isa<clang::CXXDefaultArgExpr>(c->getArg(0))) {
        const clang::Expr* a = strip(c->getArg(0));
        if (a->getType()->isIntegralOrEnumerationType()) return evalInt(a, dims[0]);
        e = a;
        continue;
      }
      return fromConstruct(c);
    }
    // make_uint3(64, 1, 1) (a uint3 converted to dim3).
    if (auto* call = llvm::dyn_cast<clang::CallExpr>(e); call && call->getDirectCallee() && call->getNumArgs() <= 3) {
      std::string name = call->getDirectCallee()->getNameAsString();
      if (name != "make_uint3" && name != "make_int3" && name != "make_dim3") return false;
      for (unsigned k = 0; k < call->getNumArgs(); ++k)
        if (!evalInt(call->getArg(k), dims[k])) return false;
      return partial || dims[0] > 0;
    }
    if (auto* ice = llvm::dyn_cast<clang::ImplicitCastExpr>(e)) { e = ice->getSubExpr(); continue; }
    if (auto* fce = llvm::dyn_cast<clang::CXXFunctionalCastExpr>(e)) { e = fce->getSubExpr(); continue; }
    if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
      auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl());
      if (vd && vd->getType()->isIntegralOrEnumerationType()) return evalInt(e, dims[0]);
      if (!vd || !vd->hasInit()) return false;
      // Assigned a whole new shape after its declaration (HeCBench tpacf: `threads = make_uint3(NUMBINS,
      // 1, 1)` in a branch): the value that reaches this launch, if it is one.
      const clang::Expr* reaching = valueAt(vd, dre, ctx);
      if (!reaching) return false;
      // `dim3 block; block.x = 16; block.y = 16;`: the members set one by one in its function.
      if (auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(vd->getDeclContext()); fn && fn->getBody()) {
        struct Members : clang::RecursiveASTVisitor<Members> {
          const clang::VarDecl* v;
          std::vector<std::pair<int, const clang::Expr*>> sets;
          bool VisitBinaryOperator(clang::BinaryOperator* b) {
            if (b->getOpcode() != clang::BO_Assign) return true;
            auto* me = llvm::dyn_cast<clang::MemberExpr>(b->getLHS()->IgnoreParenImpCasts());
            auto* base = me ? llvm::dyn_cast<clang::DeclRefExpr>(me->getBase()->IgnoreParenImpCasts()) : nullptr;
            if (!base || base->getDecl() != v) return true;
            std::string f = me->getMemberDecl()->getNameAsString();
            int axis = f == "x" ? 0 : f == "y" ? 1 : f == "z" ? 2 : -1;
            if (axis >= 0) sets.push_back({axis, b->getRHS()});
            return true;
          }
        } mem;
        mem.v = vd;
        mem.TraverseStmt(fn->getBody());
        if (!mem.sets.empty()) {
          if (!readBlockShape(reaching, ctx, dims, partial)) dims[0] = 1, dims[1] = 1, dims[2] = 1;
          for (const auto& [axis, rhs] : mem.sets)  // in source order: the last one wins
            if (!evalInt(rhs, dims[axis])) return false;
          return partial || dims[0] > 0;
        }
      }
      e = reaching;
      continue;
    }
    if (e->getType()->isIntegralOrEnumerationType()) return evalInt(e, dims[0]);
    return false;
  }
  return false;
}

}  // namespace gpuopt
