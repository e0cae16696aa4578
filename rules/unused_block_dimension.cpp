#include "rules/unused_block_dimension.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <fmt/format.h>
#include <llvm/ADT/SmallPtrSet.h>

#include "analyzer/rule_context.h"
#include "rules/rule_util.h"

namespace gpuopt {

namespace {
// What in a kernel (and every function it calls, library code included) can tell the threads of one
// row of its block from those of another: threadIdx.y / .z (axis 1 / 2), threadIdx as a whole, a
// linear rank (cooperative groups' thread_rank, thread_index, a tile's meta_group_rank), inline PTX
// reading %tid, %laneid, %warpid or a lane mask, a call through a pointer or of a project function
// whose body is not here. Also whether it performs atomics (each row repeats them).
struct AxisReaders : clang::RecursiveASTVisitor<AxisReaders> {
  int axis = 1;
  bool found = false;
  bool atomics = false;
  llvm::SmallPtrSet<const clang::FunctionDecl*, 16> seen;
  std::vector<const clang::FunctionDecl*> todo;

  void callee(const clang::FunctionDecl* fd) {
    if (!fd) { found = true; return; }
    if (fd->getIdentifier()) {
      llvm::StringRef n = fd->getName();
      if (n == "thread_rank" || n == "thread_index" || n == "meta_group_rank" || n.starts_with("__lanemask"))
        found = true;
      if (n.starts_with("atomic") || n.starts_with("__atomic")) atomics = true;
      // The accessors behind threadIdx.y (`__fetch_builtin_y`) and its conversion to uint3.
      if (auto* md = llvm::dyn_cast<clang::CXXMethodDecl>(fd); md && md->getParent()->getName() == "__cuda_builtin_threadIdx_t")
        if (n.ends_with(axis == 1 ? "_y" : "_z")) found = true;
    }
    if (llvm::isa<clang::CXXConversionDecl>(fd))
      if (auto* md = llvm::dyn_cast<clang::CXXMethodDecl>(fd); md && md->getParent()->getName() == "__cuda_builtin_threadIdx_t")
        found = true;
    const clang::FunctionDecl* def = nullptr;
    if (fd->hasBody(def) && def) {
      if (seen.insert(def).second) todo.push_back(def);
      return;
    }
    if (fd->getBuiltinID()) return;
    auto& sm = fd->getASTContext().getSourceManager();
    auto loc = sm.getExpansionLoc(fd->getLocation());
    if (loc.isInvalid() || !sm.isInSystemHeader(loc)) found = true;  // the project's, defined elsewhere
  }
  bool TraverseUnaryExprOrTypeTraitExpr(clang::UnaryExprOrTypeTraitExpr*) { return true; }
  bool TraverseCXXNoexceptExpr(clang::CXXNoexceptExpr*) { return true; }
  bool TraverseDecltypeTypeLoc(clang::DecltypeTypeLoc, bool = true) { return true; }
  bool TraverseTypeLoc(clang::TypeLoc, bool = true) { return true; }
  bool VisitMSPropertyRefExpr(clang::MSPropertyRefExpr* e) {
    auto* base = llvm::dyn_cast<clang::DeclRefExpr>(e->getBaseExpr()->IgnoreParenImpCasts());
    if (base && base->getDecl()->getName() == "threadIdx" && e->getPropertyDecl()->getName() == (axis == 1 ? "y" : "z"))
      found = true;
    return !found;
  }
  bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
    if (auto* fd = llvm::dyn_cast<clang::FunctionDecl>(e->getDecl())) callee(fd);  // taken as a pointer
    return !found;
  }
  bool VisitCallExpr(clang::CallExpr* ce) {
    callee(ce->getDirectCallee());
    return !found;
  }
  bool VisitCXXConstructExpr(clang::CXXConstructExpr* ce) {
    callee(ce->getConstructor());
    return !found;
  }
  bool VisitGCCAsmStmt(clang::GCCAsmStmt* as) {
    std::string text = as->getAsmString();
    for (const char* r : {"%tid", "%laneid", "%warpid", "%lanemask"})
      if (text.find(r) != std::string::npos) found = true;
    return !found;
  }
};

// Whether the threads of the kernel's block can differ along `axis` (see AxisReaders); `atomics`:
// whether it performs atomics.
bool readsAxis(const clang::FunctionDecl* kernel, int axis, bool& atomics) {
  const clang::FunctionDecl* def = nullptr;
  if (!kernel || !kernel->hasBody(def) || !def) return true;
  AxisReaders r;
  r.axis = axis;
  r.seen.insert(def);
  r.todo.push_back(def);
  while (!r.todo.empty() && !r.found) {
    const clang::FunctionDecl* f = r.todo.back();
    r.todo.pop_back();
    r.TraverseStmt(f->getBody());
    if (auto* cd = llvm::dyn_cast<clang::CXXConstructorDecl>(f))
      for (const auto* init : cd->inits())
        if (init->getInit()) r.TraverseStmt(init->getInit());
  }
  atomics = r.atomics;
  return r.found;
}
}  // namespace

void UnusedBlockDimensionRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  if (m.blockAssumed() || m.blockSource().rfind("launch", 0) != 0) return;
  static const char* names[3] = {"x", "y", "z"};
  for (int axis = 1; axis <= 2; ++axis) {
    unsigned extent = axis == 1 ? m.blockY() : m.blockZ();
    if (extent <= 1 || m.usesThreadAxis(axis)) continue;
    bool atomics = false;
    if (readsAxis(m.kernel(), axis, atomics)) continue;
    bool stores = false;
    for (const auto& a : m.accesses()) stores = stores || (a.isWrite && a.space != MemSpace::Local);
    clang::SourceRange where = m.blockRange();
    bool atLaunch = where.isValid() && rc.inLintedFile(where.getBegin());
    if (!atLaunch && !rc.inLintedFile(m.kernel()->getLocation())) continue;
    const std::string kname = m.kernel()->getNameAsString();
    const char* rows = axis == 1 ? "rows" : "layers";
    std::string what = stores ? fmt::format("{}x the work, and their identical stores race", extent)
                              : fmt::format("{}x the work", extent);
    if (atomics) what += fmt::format("; each of its atomics is applied {} times", extent);
    std::string msg = fmt::format("the {} gives blockDim.{} = {}, but '{}' never reads threadIdx.{}: the {} {} of each "
                                  "block compute the same elements ({})",
                                  m.blockSource(), names[axis], extent, kname, names[axis], extent, rows, what);
    Diagnostic d = rc.make(kInfo, atLaunch ? rc.span(where) : rc.span(m.kernel()->getLocation()), msg);
    d.notes.push_back({rc.span(m.kernel()->getLocation()), fmt::format("'{}' reads threadIdx.x only{}", kname,
                                                                       axis == 2 && m.usesThreadAxis(1) ? " and .y" : "")});
    std::string smaller = axis == 1 ? fmt::format("dim3({})", m.blockX() * m.blockY() * (m.usesThreadAxis(2) ? 1 : m.blockZ()))
                                    : fmt::format("dim3({}, {})", m.blockX(), m.blockY());
    d.fixHint = fmt::format("launch a block without that dimension ({}, the grid scaled to match), or let threadIdx.{} pick "
                            "the elements (e.g. i = (blockIdx.x * blockDim.{} + threadIdx.{}) * blockDim.x + threadIdx.x)",
                            smaller, names[axis], names[axis], names[axis]);
    d.predicted = {{"duplication", extent}};
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
