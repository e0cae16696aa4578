// Launch shapes: reading a block-shape expression without a call chain (readBlockShape, through
// HostValues: launch_eval.h) and whether a local variable is reassigned (launch_detail.h).
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
#include "analyzer/model/launch_eval.h"

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

}  // namespace launch_detail

using namespace launch_detail;

// Reads a block-shape expression: an integer, a dim3(...) temporary or a dim3 variable (HostValues
// with no parameters bound).
bool readBlockShape(const clang::Expr* e, clang::ASTContext& ctx, unsigned dims[3], bool partial) {
  HostValues hv(ctx);
  return hv.shape(e, {}, dims, partial);
}

}  // namespace gpuopt
