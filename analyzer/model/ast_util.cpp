#include "analyzer/model/ast_util.h"

#include <functional>

#include <regex>

#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>

namespace gpuopt {

const clang::Expr* strip(const clang::Expr* e) {
  while (true) {
    if (auto* p = llvm::dyn_cast<clang::ParenExpr>(e)) e = p->getSubExpr();
    else if (auto* c = llvm::dyn_cast<clang::ExprWithCleanups>(e)) e = c->getSubExpr();
    else if (auto* m = llvm::dyn_cast<clang::MaterializeTemporaryExpr>(e)) e = m->getSubExpr();
    else if (auto* b = llvm::dyn_cast<clang::CXXBindTemporaryExpr>(e)) e = b->getSubExpr();
    else if (auto* ce = llvm::dyn_cast<clang::ConstantExpr>(e)) e = ce->getSubExpr();
    else if (auto* s = llvm::dyn_cast<clang::SubstNonTypeTemplateParmExpr>(e)) e = s->getReplacement();
    else if (auto* o = llvm::dyn_cast<clang::OpaqueValueExpr>(e); o && o->getSourceExpr()) e = o->getSourceExpr();
    else if (auto* ic = llvm::dyn_cast<clang::ImplicitCastExpr>(e); ic && ic->getCastKind() == clang::CK_NoOp) e = ic->getSubExpr();
    else return e;
  }
}

// Name of the record type of an expression (through pointers / references).
std::string recordName(clang::QualType t) {
  t = t.getNonReferenceType();
  if (t->isPointerType()) t = t->getPointeeType();
  if (auto* rd = t->getAsCXXRecordDecl()) return rd->getQualifiedNameAsString();
  return t.getAsString();
}

unsigned tileSizeOf(clang::QualType t) {
  t = t.getNonReferenceType();
  if (auto* rd = t->getAsCXXRecordDecl())
    if (auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(rd)) {
      const auto& args = spec->getTemplateArgs();
      if (args.size() > 0 && args[0].getKind() == clang::TemplateArgument::Integral)
        return static_cast<unsigned>(args[0].getAsIntegral().getZExtValue());
    }
  return 32;
}

GroupKind groupKind(clang::QualType t) {
  std::string n = recordName(t);
  if (n.find("cooperative_groups") == std::string::npos) return GroupKind::None;
  if (n.find("tile") != std::string::npos || n.find("coalesced") != std::string::npos) return GroupKind::Warp;
  if (n.find("grid") != std::string::npos) return GroupKind::Grid;
  return GroupKind::Block;
}

namespace {
struct CallFinder : clang::RecursiveASTVisitor<CallFinder> {
  bool found = false;
  bool VisitCallExpr(clang::CallExpr* c) {
    const clang::FunctionDecl* fd = c->getDirectCallee();
    if (!fd) { found = true; return false; }
    // A compiler builtin (`INFINITY` is `__builtin_inff()`) is no call: Clang declares it where it
    // is first used, so its location would count it as the program's own function.
    if (fd->getBuiltinID()) return true;
    auto& sm = fd->getASTContext().getSourceManager();
    auto loc = sm.getExpansionLoc(fd->getLocation());
    if (loc.isValid() && !sm.isInSystemHeader(loc) && fd->getQualifiedNameAsString().find("cooperative_groups") == std::string::npos) {
      found = true;
      return false;
    }
    return true;
  }
};
struct WorkFinder : clang::RecursiveASTVisitor<WorkFinder> {
  bool found = false;
  bool VisitCallExpr(clang::CallExpr*) { found = true; return false; }
  bool VisitArraySubscriptExpr(clang::ArraySubscriptExpr*) { found = true; return false; }
  bool VisitForStmt(clang::ForStmt*) { found = true; return false; }
  bool VisitWhileStmt(clang::WhileStmt*) { found = true; return false; }
  bool VisitDoStmt(clang::DoStmt*) { found = true; return false; }
  bool VisitUnaryOperator(clang::UnaryOperator* u) {
    if (u->getOpcode() == clang::UO_Deref) { found = true; return false; }
    return true;
  }
};
// Memory operations, loops and statements of a statement, as written.
struct WorkCounter : clang::RecursiveASTVisitor<WorkCounter> {
  clang::ASTContext* ctx = nullptr;
  unsigned ops = 0, loops = 0, stmts = 0;
  static bool isMemory(const clang::Expr* e) {
    e = e->IgnoreParenImpCasts();
    if (llvm::isa<clang::ArraySubscriptExpr>(e)) return true;
    if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e)) return u->getOpcode() == clang::UO_Deref;
    if (auto* m = llvm::dyn_cast<clang::MemberExpr>(e)) return m->isArrow();
    return false;
  }
  // The element access only: `t[z][0][x]` is one memory operation, not three. An element of a
  // per-thread array at a constant index (`packed[0]`) is a register, no memory operation.
  bool VisitArraySubscriptExpr(clang::ArraySubscriptExpr* e) {
    if (e->getType()->isArrayType()) return true;
    if (ctx && !e->getIdx()->isValueDependent() && e->getIdx()->isIntegerConstantExpr(*ctx))
      if (const auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e->getBase()->IgnoreParenImpCasts()))
        if (const auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl());
            vd && vd->hasLocalStorage() && vd->getType()->isConstantArrayType() && !vd->hasAttr<clang::CUDASharedAttr>())
          return true;
    ++ops;
    return true;
  }
  // A thread runs one arm of `c ? a : b`: count the condition and the larger arm, not both.
  bool TraverseConditionalOperator(clang::ConditionalOperator* c) {
    if (!TraverseStmt(c->getCond())) return false;
    WorkCounter t = sub(), f = sub();
    t.TraverseStmt(c->getTrueExpr());
    f.TraverseStmt(c->getFalseExpr());
    const WorkCounter& big = t.ops + t.loops * 100 + t.stmts >= f.ops + f.loops * 100 + f.stmts ? t : f;
    ops += big.ops, loops += big.loops, stmts += big.stmts;
    return true;
  }
  // A call of the program's own function is as much work as its body (the model inlines it): a
  // one-line integer helper is not, a helper with a loop is. Calls through pointers, or of
  // functions whose body is not here, count as work; the toolkit's functions do not.
  bool VisitCallExpr(clang::CallExpr* c) {
    const clang::FunctionDecl* fd = c->getDirectCallee();
    if (!fd) { ++loops; return true; }
    if (fd->getBuiltinID()) return true;  // a compiler builtin (CallFinder)
    auto& sm = fd->getASTContext().getSourceManager();
    auto loc = sm.getExpansionLoc(fd->getLocation());
    if (!loc.isValid() || sm.isInSystemHeader(loc) || fd->getQualifiedNameAsString().find("cooperative_groups") != std::string::npos)
      return true;
    const clang::FunctionDecl* def = nullptr;
    if (!fd->hasBody(def) || !def || depth >= 3 || std::find(stack.begin(), stack.end(), def) != stack.end()) {
      ++loops;
      return true;
    }
    WorkCounter inner = sub();
    ++inner.depth;
    inner.stack.push_back(def);
    inner.TraverseStmt(def->getBody());
    // The body stands for the call: a one-statement helper (`a = a ^ b` behind a uint2
    // `operator^=`: ccminer's lyra2, seventh stop check) adds no statement of its own.
    ops += inner.ops, loops += inner.loops, stmts += inner.stmts > 0 ? inner.stmts - 1 : 0;
    return true;
  }
  WorkCounter sub() const {
    WorkCounter w;
    w.ctx = ctx;
    w.depth = depth;
    w.stack = stack;
    return w;
  }
  unsigned depth = 0;
  std::vector<const clang::FunctionDecl*> stack;
  bool VisitMemberExpr(clang::MemberExpr* m) {
    if (m->isArrow()) ++ops;
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* u) {
    if (u->getOpcode() == clang::UO_Deref) ++ops;
    if (u->isIncrementDecrementOp() && isMemory(u->getSubExpr())) ++ops;  // read and write
    return true;
  }
  bool VisitCompoundAssignOperator(clang::CompoundAssignOperator* c) {
    if (isMemory(c->getLHS())) ++ops;  // read and write
    return true;
  }
  bool VisitForStmt(clang::ForStmt*) { ++loops; return true; }
  bool VisitWhileStmt(clang::WhileStmt*) { ++loops; return true; }
  bool VisitCXXForRangeStmt(clang::CXXForRangeStmt*) { ++loops; return true; }
  bool VisitDoStmt(clang::DoStmt* d) {
    // do { } while (0) (macro bodies) runs once: not a loop.
    bool again = true;
    if (!ctx || d->getCond()->isValueDependent() || !d->getCond()->EvaluateAsBooleanCondition(again, *ctx) || again) ++loops;
    return true;
  }
  bool VisitCompoundStmt(clang::CompoundStmt* c) {
    stmts += c->size();
    return true;
  }
};
}  // namespace

bool containsCall(const clang::Stmt* s) {
  if (!s) return false;
  CallFinder f;
  f.TraverseStmt(const_cast<clang::Stmt*>(s));
  return f.found;
}

bool doesRealWork(const clang::Stmt* s) {
  if (!s) return false;
  if (auto* cs = llvm::dyn_cast<clang::CompoundStmt>(s); cs && cs->size() >= 3) return true;
  WorkFinder f;
  f.TraverseStmt(const_cast<clang::Stmt*>(s));
  return f.found;
}

unsigned memoryOps(const clang::Stmt* s) {
  if (!s) return 0;
  WorkCounter w;
  w.TraverseStmt(const_cast<clang::Stmt*>(s));
  return w.ops;
}

bool isBranchWork(const clang::Stmt* s, clang::ASTContext& ctx) {
  if (!s) return false;
  WorkCounter w;
  w.ctx = &ctx;
  w.TraverseStmt(const_cast<clang::Stmt*>(s));
  return w.loops > 0 || w.ops >= 3 || w.stmts >= 8;
}

bool switchArmsWork(const clang::SwitchStmt* ss, clang::ASTContext& ctx) {
  const clang::Stmt* body = ss->getBody();
  if (!body) return false;
  // One arm: a case label's statement and those after it up to the next label.
  auto work = [](const WorkCounter& w) { return w.loops > 0 || w.ops > 0 || w.stmts >= 8; };
  auto* cs = llvm::dyn_cast<clang::CompoundStmt>(body);
  if (!cs) {
    WorkCounter w;
    w.ctx = &ctx;
    w.TraverseStmt(const_cast<clang::Stmt*>(body));
    return work(w);
  }
  WorkCounter arm;
  arm.ctx = &ctx;
  for (const clang::Stmt* s : cs->body()) {
    if (llvm::isa<clang::SwitchCase>(s)) {
      if (work(arm)) return true;
      arm = WorkCounter();
      arm.ctx = &ctx;
    }
    arm.TraverseStmt(const_cast<clang::Stmt*>(s));
  }
  return work(arm);
}

bool hasJump(const clang::Stmt* s) {
  if (!s) return false;
  if (llvm::isa<clang::ReturnStmt, clang::BreakStmt, clang::ContinueStmt, clang::GotoStmt, clang::IndirectGotoStmt>(s))
    return true;
  if (llvm::isa<clang::LambdaExpr>(s)) return false;
  for (const clang::Stmt* c : s->children())
    if (hasJump(c)) return true;
  return false;
}

std::set<const clang::VarDecl*> assignedVars(const clang::Stmt* s) {
  struct Assigned : clang::RecursiveASTVisitor<Assigned> {
    std::set<const clang::VarDecl*> vars;
    void add(const clang::Expr* e) {
      if (auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts()))
        if (auto* vd = llvm::dyn_cast<clang::VarDecl>(d->getDecl())) vars.insert(vd);
    }
    bool VisitBinaryOperator(clang::BinaryOperator* b) {
      if (b->isAssignmentOp()) add(b->getLHS());
      return true;
    }
    bool VisitUnaryOperator(clang::UnaryOperator* u) {
      if (u->isIncrementDecrementOp()) add(u->getSubExpr());
      return true;
    }
  } assigned;
  if (s) assigned.TraverseStmt(const_cast<clang::Stmt*>(s));
  return assigned.vars;
}

bool namesClockOrRandom(llvm::StringRef name) {
  return name.contains("clock") || name.contains("time") || name.contains("smid") || name.contains("rand");
}

namespace {
struct BlockUse : clang::RecursiveASTVisitor<BlockUse> {
  llvm::SmallPtrSet<const clang::FunctionDecl*, 16> seen;
  std::vector<const clang::FunctionDecl*> todo;
  bool found = false;
  void callee(const clang::FunctionDecl* fd) {
    if (!fd) { found = true; return; }
    // getIdentifier(): a constructor, destructor, operator or conversion has no simple name (getName()
    // asserts on it; the Sanitize build compiles LLVM's header assertions in).
    if (fd->getIdentifier() && namesClockOrRandom(fd->getName())) { found = true; return; }
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
  // Unevaluated operands (sizeof, decltype, noexcept, typeid: std::declval in CUB's traits) run nothing.
  bool TraverseUnaryExprOrTypeTraitExpr(clang::UnaryExprOrTypeTraitExpr*) { return true; }
  bool TraverseCXXNoexceptExpr(clang::CXXNoexceptExpr*) { return true; }
  bool TraverseCXXTypeidExpr(clang::CXXTypeidExpr*) { return true; }
  bool TraverseDecltypeTypeLoc(clang::DecltypeTypeLoc, bool = true) { return true; }
  bool TraverseTypeLoc(clang::TypeLoc, bool = true) { return true; }
  bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
    if (auto* vd = llvm::dyn_cast<clang::VarDecl>(e->getDecl()); vd && vd->getName() == "blockIdx") found = true;
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
    for (const char* r : {"ctaid", "smid", "clock", "globaltimer", "nctaid"})
      if (text.find(r) != std::string::npos) found = true;
    return !found;
  }
};
}  // namespace

bool blockBlind(const clang::FunctionDecl* kernel) {
  const clang::FunctionDecl* def = nullptr;
  if (!kernel || !kernel->hasBody(def) || !def) return false;
  BlockUse u;
  u.seen.insert(def);
  u.todo.push_back(def);
  while (!u.todo.empty() && !u.found) {
    const clang::FunctionDecl* f = u.todo.back();
    u.todo.pop_back();
    u.TraverseStmt(f->getBody());
    if (auto* cd = llvm::dyn_cast<clang::CXXConstructorDecl>(f))
      for (const auto* init : cd->inits())
        if (init->getInit()) u.TraverseStmt(init->getInit());
  }
  return !u.found;
}

namespace {
struct AxisReaders : clang::RecursiveASTVisitor<AxisReaders> {
  int axis = 1;
  bool found = false;
  bool atomics = false;
  bool unseenRead = true;
  bool skipLinear = false;
  llvm::SmallPtrSet<const clang::FunctionDecl*, 16> seen;
  std::vector<const clang::FunctionDecl*> todo;

  void callee(const clang::FunctionDecl* fd) {
    if (!fd) { found = found || unseenRead; return; }
    if (fd->getIdentifier()) {
      llvm::StringRef n = fd->getName();
      if (n == "thread_rank" || n == "thread_index" || n == "meta_group_rank" || n.starts_with("__lanemask")) found = true;
      if (n.starts_with("atomic") || n.starts_with("__atomic")) atomics = true;
      // The accessors behind threadIdx.y (`__fetch_builtin_y`).
      if (auto* md = llvm::dyn_cast<clang::CXXMethodDecl>(fd); md && md->getParent()->getName() == "__cuda_builtin_threadIdx_t")
        if (n.ends_with(axis == 1 ? "_y" : "_z")) found = true;
    }
    // threadIdx converted to uint3 as a whole.
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
    if (loc.isInvalid() || !sm.isInSystemHeader(loc)) found = found || unseenRead;  // the project's, defined elsewhere
  }
  bool TraverseUnaryExprOrTypeTraitExpr(clang::UnaryExprOrTypeTraitExpr*) { return true; }
  bool TraverseCXXNoexceptExpr(clang::CXXNoexceptExpr*) { return true; }
  bool TraverseDecltypeTypeLoc(clang::DecltypeTypeLoc, bool = true) { return true; }
  bool TraverseTypeLoc(clang::TypeLoc, bool = true) { return true; }
  // With skipLinear: the block's linear thread index, `threadIdx.x + blockDim.x * threadIdx.y`
  // (and its z term), left out; it is written to work with any shape, a 1-D one included.
  bool TraverseBinaryOperator(clang::BinaryOperator* b) {
    if (skipLinear && linearIndex(b)) return true;
    return clang::RecursiveASTVisitor<AxisReaders>::TraverseBinaryOperator(b);
  }
  static const clang::MSPropertyRefExpr* builtin(const clang::Expr* e) {
    e = e->IgnoreParenImpCasts();
    if (auto* po = llvm::dyn_cast<clang::PseudoObjectExpr>(e)) e = po->getSyntacticForm()->IgnoreParenImpCasts();
    return llvm::dyn_cast<clang::MSPropertyRefExpr>(e);
  }
  static bool isBuiltin(const clang::Expr* e, llvm::StringRef var, llvm::StringRef axis) {
    const clang::MSPropertyRefExpr* p = builtin(e);
    if (!p) return false;
    const clang::Expr* b = p->getBaseExpr()->IgnoreParenImpCasts();
    if (auto* ov = llvm::dyn_cast<clang::OpaqueValueExpr>(b); ov && ov->getSourceExpr()) b = ov->getSourceExpr()->IgnoreParenImpCasts();
    auto* base = llvm::dyn_cast<clang::DeclRefExpr>(b);
    return base && base->getDecl()->getName() == var && (axis.empty() || p->getPropertyDecl()->getName() == axis);
  }
  // A product of blockDim extents and one thread index of y or z (or of a linear index of y and z);
  // with `idx` "blockIdx" and `dim` "gridDim", the same for a block's place in its grid.
  static bool scaledRow(const clang::Expr* e, const char* idx = "threadIdx", const char* dim = "blockDim") {
    e = e->IgnoreParenImpCasts();
    auto* m = llvm::dyn_cast<clang::BinaryOperator>(e);
    if (!m || m->getOpcode() != clang::BO_Mul) return false;
    const clang::Expr* l = m->getLHS()->IgnoreParenImpCasts();
    const clang::Expr* r = m->getRHS()->IgnoreParenImpCasts();
    auto extent = [&](const clang::Expr* x) {
      if (isBuiltin(x, dim, "")) return true;
      auto* mm = llvm::dyn_cast<clang::BinaryOperator>(x->IgnoreParenImpCasts());
      return mm && mm->getOpcode() == clang::BO_Mul && isBuiltin(mm->getLHS(), dim, "") && isBuiltin(mm->getRHS(), dim, "");
    };
    auto row = [&](const clang::Expr* x) {
      if (isBuiltin(x, idx, "y") || isBuiltin(x, idx, "z")) return true;
      auto* a = llvm::dyn_cast<clang::BinaryOperator>(x->IgnoreParenImpCasts());  // threadIdx.y + blockDim.y * threadIdx.z
      return a && a->getOpcode() == clang::BO_Add && isBuiltin(a->getLHS(), idx, "y") && scaledRow(a->getRHS(), idx, dim);
    };
    if (extent(l) && row(r)) return true;
    if (extent(r) && row(l)) return true;
    // threadIdx.z * blockDim.x * blockDim.y, parsed as (threadIdx.z * blockDim.x) * blockDim.y.
    if (isBuiltin(r, dim, "")) return scaledRow(l, idx, dim);
    return false;
  }
  // threadIdx.x + (rows scaled by blockDim), in any order of its terms.
  static bool linearIndex(const clang::BinaryOperator* b, const char* idx = "threadIdx", const char* dim = "blockDim") {
    if (b->getOpcode() != clang::BO_Add) return false;
    std::vector<const clang::Expr*> terms;
    std::function<void(const clang::Expr*)> flat = [&](const clang::Expr* e) {
      e = e->IgnoreParenImpCasts();
      if (auto* a = llvm::dyn_cast<clang::BinaryOperator>(e); a && a->getOpcode() == clang::BO_Add) {
        flat(a->getLHS());
        flat(a->getRHS());
        return;
      }
      terms.push_back(e);
    };
    flat(b);
    bool x = false, rows = false;
    for (const clang::Expr* t : terms) {
      if (isBuiltin(t, idx, "x")) x = true;
      else if (scaledRow(t, idx, dim)) rows = true;
      else return false;
    }
    return x && rows;
  }
  // `var.y` (axis 1) or `var.z` (2) of a CUDA built-in (threadIdx, blockIdx).
  static bool readsAxis(const clang::MSPropertyRefExpr* e, llvm::StringRef var, int axis) {
    auto* base = llvm::dyn_cast<clang::DeclRefExpr>(e->getBaseExpr()->IgnoreParenImpCasts());
    return base && base->getDecl()->getName() == var && e->getPropertyDecl()->getName() == (axis == 1 ? "y" : "z");
  }
  bool VisitMSPropertyRefExpr(clang::MSPropertyRefExpr* e) {
    found = found || readsAxis(e, "threadIdx", axis);
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
    const std::string text = as->getAsmString();
    // `%tid.y` reads the axis; `%tid.x` does not, and a whole `%tid` (a vector) does.
    const char letter = axis == 1 ? 'y' : 'z';
    for (size_t at = text.find("%tid"); at != std::string::npos; at = text.find("%tid", at + 4)) {
      const size_t next = at + 4;
      if (next >= text.size() || text[next] != '.' || (next + 1 < text.size() && text[next + 1] == letter)) found = true;
    }
    // The lane's place in its warp (`%lanemask_lt`, `%laneid`) tells lanes apart by their linear
    // index, not by this axis: a block with no extent along it gives the same lanes. Counted only
    // where an unseen read must be assumed (the shape is known and the question is whether the
    // kernel tells the rows apart), not for which axes a guessed shape extends.
    if (unseenRead)
      for (const char* r : {"%laneid", "%warpid", "%lanemask"})
        if (text.find(r) != std::string::npos) found = true;
    return !found;
  }
};
}  // namespace

namespace {
// Reads of blockIdx.y (.z) outside the block's linear place in its grid (`blockIdx.x + blockIdx.y *
// gridDim.x`, its z term), in the kernel and the functions it calls whose bodies are here.
struct BlockAxisReaders : clang::RecursiveASTVisitor<BlockAxisReaders> {
  int axis = 1;
  bool found = false;
  llvm::SmallPtrSet<const clang::FunctionDecl*, 16> seen;
  std::vector<const clang::FunctionDecl*> todo;
  bool TraverseBinaryOperator(clang::BinaryOperator* b) {
    if (AxisReaders::linearIndex(b, "blockIdx", "gridDim")) return true;
    return clang::RecursiveASTVisitor<BlockAxisReaders>::TraverseBinaryOperator(b);
  }
  bool VisitMSPropertyRefExpr(clang::MSPropertyRefExpr* e) {
    found = found || AxisReaders::readsAxis(e, "blockIdx", axis);
    return !found;
  }
  bool VisitCallExpr(clang::CallExpr* ce) {
    const clang::FunctionDecl* def = nullptr;
    if (const auto* fd = ce->getDirectCallee(); fd && fd->hasBody(def) && def && seen.insert(def).second) todo.push_back(def);
    // blockIdx as a whole (converted to uint3, `__fetch_builtin_y`): a read.
    if (const auto* md = llvm::dyn_cast_or_null<clang::CXXMethodDecl>(ce->getDirectCallee());
        md && md->getParent()->getName() == "__cuda_builtin_blockIdx_t" &&
        (llvm::isa<clang::CXXConversionDecl>(md) || (md->getIdentifier() && md->getName().ends_with(axis == 1 ? "_y" : "_z"))))
      found = true;
    return !found;
  }
};
}  // namespace

namespace {
// A readers visitor over `def` and the bodies it queues (its `todo`), constructors' initialisers
// too, until it has found what it looks for.
template <class Readers>
void walkBodies(Readers& r, const clang::FunctionDecl* def) {
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
}
}  // namespace

bool readsBlockAxisBeyondLinear(const clang::FunctionDecl* kernel, int axis) {
  const clang::FunctionDecl* def = nullptr;
  if (!kernel || !kernel->hasBody(def) || !def) return true;
  BlockAxisReaders r;
  r.axis = axis;
  walkBodies(r, def);
  return r.found;
}

bool readsThreadAxis(const clang::FunctionDecl* kernel, int axis, bool* atomics, bool unseenRead, bool skipLinear) {
  const clang::FunctionDecl* def = nullptr;
  if (!kernel || !kernel->hasBody(def) || !def) return true;
  AxisReaders r;
  r.axis = axis;
  r.unseenRead = unseenRead;
  r.skipLinear = skipLinear;
  walkBodies(r, def);
  if (atomics) *atomics = r.atomics;
  return r.found;
}

namespace {
// The operands of one memory instruction (`[%4]`, `[%1+16]`, `%2`, `16`) and what its mnemonic says
// of the access: AsmMemory's modelled fields.
void describeAsmAccess(const std::string& ins, const std::string& operands, AsmMemory& r) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  llvm::StringRef(ins).split(parts, '.');
  const llvm::StringRef op = parts[0];
  unsigned vec = 1, type = 0, matrices = 0;
  bool m8n8 = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    const llvm::StringRef p = parts[i];
    if (p == "global") r.space = r.space ? r.space : 'g';
    else if (p == "shared" || p == "shared::cta") r.space = r.space ? r.space : 's';
    else if (p.starts_with("shared::")) return;  // another block's shared memory (a cluster)
    else if (p == "local") r.space = 'l';
    else if (p == "const") r.space = 'c';
    else if (p == "param" || p == "tex" || p == "bulk" || p == "tensor") return;
    else if (p == "v2" || p == "v4" || p == "v8") vec = static_cast<unsigned>(p[1] - '0');
    else if (p == "x1" || p == "x2" || p == "x4") matrices = static_cast<unsigned>(p[1] - '0');
    else if (p == "m8n8") m8n8 = true;
    else if (p == "b8" || p == "u8" || p == "s8") type = 1;
    else if (p == "b16" || p == "u16" || p == "s16" || p == "f16" || p == "bf16") type = 2;
    else if (p == "b32" || p == "u32" || p == "s32" || p == "f32" || p == "f16x2" || p == "bf16x2") type = 4;
    else if (p == "b64" || p == "u64" || p == "s64" || p == "f64") type = 8;
    else if (p == "b128") type = 16;
    // Past the SM's L1 or ordered with other threads (`ld.global.cg` of a flag another block
    // sets, `ld.acquire.gpu`): what a volatile access is to the model.
    else if (p == "volatile" || p == "cg" || p == "cv" || p == "wt" || p == "relaxed" || p == "acquire" || p == "release")
      r.isVolatile = op == "ld" || op == "st";
  }
  // The bracketed addresses and, after them, a plain operand or literal (cp.async's size).
  static const std::regex kOperand(R"(\[\s*%(\d+)\s*(?:\+\s*(-?\d+))?\s*\]|%(\d+)|\b(\d+)\b)");
  std::vector<AsmMemory::Operand> addrs;
  std::vector<std::pair<int, int64_t>> plain;  // (operand, -1) or (-1, literal)
  const std::string first = operands.substr(0, operands.find(';'));
  std::smatch o;
  for (auto it = first.cbegin(); std::regex_search(it, first.cend(), o, kOperand); it = o[0].second) {
    if (o[1].matched) addrs.push_back({std::stoi(o[1].str()), o[2].matched ? std::stoll(o[2].str()) : 0});
    else if (o[3].matched) plain.emplace_back(std::stoi(o[3].str()), 0);
    else plain.emplace_back(-1, std::stoll(o[4].str()));
  }
  if (addrs.empty()) return;
  r.dst = addrs[0];
  if (op == "ldmatrix" || op == "stmatrix") {
    if (!m8n8 || !matrices || r.space == 'g') return;
    r.space = 's';
    r.bytes = 16;
    r.lanes = 8 * matrices;
    r.read = op == "ldmatrix";
    r.write = !r.read;
  } else if (op == "cp") {  // cp.async.ca|cg.shared.global [dst], [src], size[, src-size]
    if (ins.rfind("cp.async.ca.", 0) != 0 && ins.rfind("cp.async.cg.", 0) != 0) return;
    if (addrs.size() < 2 || plain.empty()) return;
    r.src = addrs[1];
    r.space = 's';
    r.write = true;
    if (plain[0].first < 0) r.bytes = static_cast<unsigned>(plain[0].second);
    else r.sizeOperand = plain[0].first;  // an "n" operand: the walker reads its constant
  } else {
    if (!type) return;
    r.bytes = type * vec;
    r.atomic = op == "atom" || op == "red";  // read and write the word
    r.read = op == "ld" || op == "ldu" || r.atomic;
    r.write = op == "st" || r.atomic;
  }
  r.modelled = true;
}
}  // namespace

AsmMemory asmMemory(const clang::GCCAsmStmt* as) {
  AsmMemory r;
  if (!as) return r;
  const std::string text = as->getAsmString();
  static const std::regex kMemory(R"((^|[\s;{])((ldmatrix|stmatrix|cp\.async|ldu|ld|st|atom|red)\.[A-Za-z0-9_:.]+))");
  std::smatch m;
  // Not memory: the kernel's parameter space, and cp.async's group bookkeeping.
  auto notMemory = [](const std::string& ins) {
    return ins.rfind("ld.param", 0) == 0 || ins.rfind("cp.async.commit_group", 0) == 0 || ins.rfind("cp.async.wait", 0) == 0 ||
           ins.rfind("cp.async.bulk.commit", 0) == 0 || ins.rfind("cp.async.bulk.wait", 0) == 0;
  };
  for (auto it = text.cbegin(); std::regex_search(it, text.cend(), m, kMemory); it = m[0].second) {
    const std::string ins = m[2].str();
    if (notMemory(ins)) continue;
    r.instruction = ins;
    // The operand in brackets after it (`[%4]`, `[%1+16]`): outputs are numbered first.
    static const std::regex kAddress(R"(\[\s*%(\d+))");
    std::smatch a;
    const std::string rest(m[0].second, text.cend());
    if (std::regex_search(rest, a, kAddress)) {
      const unsigned n = static_cast<unsigned>(std::stoul(a[1].str()));
      if (n < as->getNumOutputs()) r.address = as->getOutputExpr(n);
      else if (n - as->getNumOutputs() < as->getNumInputs()) r.address = as->getInputExpr(n - as->getNumOutputs());
    }
    if (!r.address && as->getNumInputs()) r.address = as->getInputExpr(0);
    if (!r.address) {
      r.instruction.clear();
      return r;
    }
    // More than one memory instruction, or a predicated one (`@p cp.async...`): not modelled.
    std::smatch more;
    for (auto at = m[0].second; std::regex_search(at, text.cend(), more, kMemory); at = more[0].second)
      if (!notMemory(more[2].str())) return r;
    if (text.find('@') != std::string::npos) return r;
    describeAsmAccess(ins, rest, r);
    return r;
  }
  return r;
}

bool atomicMemberName(llvm::StringRef n) {
  return n == "load" || n == "store" || n == "exchange" || n.starts_with("fetch_") || n.starts_with("compare_exchange");
}

NamedAccess namedAccess(const std::string& name, unsigned numArgs) {
  if (name.rfind("__nv_atomic", 0) == 0 && numArgs >= 1) return NamedAccess::ScopedAtomic;
  if (name.rfind("atomic", 0) == 0 && numArgs >= 1) return NamedAccess::Atomic;
  if (name.rfind("__ld", 0) == 0 && numArgs == 1) return NamedAccess::Load;
  if ((name == "__stwt" || name == "__stcs" || name == "__stcg" || name == "__stwb") && numArgs == 2)
    return NamedAccess::HintedStore;
  return NamedAccess::None;
}

namespace {
// An atomic by name: CUDA's (namedAccess) or a C++ atomic's member (cuda::atomic_ref, std::atomic).
bool atomicCall(const clang::CallExpr* c) {
  const clang::FunctionDecl* f = c->getDirectCallee();
  if (!f || !f->getIdentifier()) return false;
  const std::string n = f->getName().str();
  const NamedAccess k = namedAccess(n, c->getNumArgs());
  if (k == NamedAccess::Atomic || k == NamedAccess::ScopedAtomic || n.rfind("__atomic", 0) == 0) return true;
  return llvm::isa<clang::CXXMethodDecl>(f) && atomicMemberName(n) && n != "load" && n != "store";
}
}  // namespace

bool spinWaitsForGrid(const clang::Stmt* loop, const clang::FunctionDecl* fn) {
  const clang::Expr* cond = nullptr;
  const clang::Stmt* body = nullptr;
  if (auto* d = llvm::dyn_cast<clang::DoStmt>(loop)) cond = d->getCond(), body = d->getBody();
  else if (auto* w = llvm::dyn_cast<clang::WhileStmt>(loop)) cond = w->getCond(), body = w->getBody();
  else if (auto* f = llvm::dyn_cast<clang::ForStmt>(loop)) cond = f->getCond(), body = f->getBody();
  if (!cond || !body || !fn || !fn->hasBody() || cond->isValueDependent()) return false;
  bool constant = false;
  if (cond->EvaluateAsBooleanCondition(constant, fn->getASTContext())) return false;  // `while (1)`, `do ... while (0)`
  struct Scan : clang::RecursiveASTVisitor<Scan> {
    bool polls = false, stores = false;
    bool VisitCallExpr(clang::CallExpr* c) {
      const clang::FunctionDecl* f = c->getDirectCallee();
      if (!f || !f->getIdentifier()) return true;
      const std::string n = f->getName().str();
      // A fence, an atomic, a cache-hinted load (`__ldcg`, `__ldcv`, ...) or an atomic's load().
      if (n.rfind("__threadfence", 0) == 0 || atomicCall(c) || namedAccess(n, c->getNumArgs()) == NamedAccess::Load ||
          (n == "load" && llvm::isa<clang::CXXMethodDecl>(f)))
        polls = true;
      return true;
    }
    bool VisitGCCAsmStmt(clang::GCCAsmStmt* a) {
      const std::string text = a->getAsmString();
      const llvm::StringRef t = text;
      if (t.contains("ld.") || t.contains("atom.")) polls = true;
      if (t.contains("st.") || t.contains("red.")) stores = true;
      return true;
    }
    bool VisitUnaryOperator(clang::UnaryOperator* u) {
      if (u->getOpcode() == clang::UO_Deref && u->getSubExpr()->getType()->isPointerType() &&
          u->getSubExpr()->getType()->getPointeeType().isVolatileQualified())
        polls = true;
      return true;
    }
    bool VisitArraySubscriptExpr(clang::ArraySubscriptExpr* e) {
      if (e->getType().isVolatileQualified()) polls = true;
      return true;
    }
    bool VisitBinaryOperator(clang::BinaryOperator* b) {
      if (!b->isAssignmentOp()) return true;
      const clang::Expr* l = b->getLHS()->IgnoreParenImpCasts();
      if (llvm::isa<clang::ArraySubscriptExpr>(l) || llvm::isa<clang::MemberExpr>(l) ||
          (llvm::isa<clang::UnaryOperator>(l) && llvm::cast<clang::UnaryOperator>(l)->getOpcode() == clang::UO_Deref))
        stores = true;
      return true;
    }
  } in;
  in.TraverseStmt(const_cast<clang::Stmt*>(body));
  in.TraverseStmt(const_cast<clang::Expr*>(cond));
  if (in.stores || !in.polls) return false;
  // The arrival: an atomic of the function the loop is in (outside the loop, or the polling atomic).
  struct Arrival : clang::RecursiveASTVisitor<Arrival> {
    bool found = false;
    bool VisitCallExpr(clang::CallExpr* c) {
      found = found || atomicCall(c);
      return !found;
    }
    bool VisitGCCAsmStmt(clang::GCCAsmStmt* a) {
      const std::string text = a->getAsmString();
      const llvm::StringRef t = text;
      if (t.contains("atom.") || t.contains("red.")) found = true;
      return !found;
    }
  } arr;
  arr.TraverseStmt(fn->getBody());
  return arr.found;
}

}  // namespace gpuopt
