#include "analyzer/model/launch_index.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <fmt/format.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Support/Path.h>

#include "analyzer/model/ast_util.h"

#include <functional>
#include <set>

namespace gpuopt {

namespace {
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

// The keys a launch of `k` is recorded under in the index's maps (each once or more): its
// declaration, its template pattern and its primary template's; lookupKernel finds any of them.
template <class F>
void forEachKernelKey(const clang::FunctionDecl* k, F&& add) {
  for (const clang::FunctionDecl* f : std::initializer_list<const clang::FunctionDecl*>{k, k->getCanonicalDecl(), k->getTemplateInstantiationPattern()})
    if (f) add(f->getCanonicalDecl());
  if (auto* prim = k->getPrimaryTemplate()) add(prim->getTemplatedDecl()->getCanonicalDecl());
}

// A kernel's entry in one of the index's maps: by its declaration, its template pattern, or its
// primary template.
template <class Map>
const typename Map::mapped_type* lookupKernel(const Map& map, const clang::FunctionDecl* k) {
  for (const clang::FunctionDecl* f : std::initializer_list<const clang::FunctionDecl*>{k->getCanonicalDecl(), k->getTemplateInstantiationPattern()}) {
    if (!f) continue;
    auto it = map.find(f->getCanonicalDecl());
    if (it != map.end()) return &it->second;
  }
  if (auto* prim = k->getPrimaryTemplate()) {
    auto it = map.find(prim->getTemplatedDecl()->getCanonicalDecl());
    if (it != map.end()) return &it->second;
  }
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

namespace {
// The buffer a host expression names: a device_vector (`d`, `d.begin()`, `&d[0]`,
// `thrust::raw_pointer_cast(&d[0])`) or a pointer variable initialised from one.
const clang::VarDecl* bufferOf(const clang::Expr* e, int depth = 0) {
  if (!e || depth > 4) return nullptr;
  struct Find : clang::RecursiveASTVisitor<Find> {
    const clang::VarDecl* found = nullptr;
    bool VisitDeclRefExpr(clang::DeclRefExpr* d) {
      auto* vd = llvm::dyn_cast<clang::VarDecl>(d->getDecl());
      if (!vd) return true;
      auto* rd = vd->getType().getNonReferenceType()->getAsCXXRecordDecl();
      if (rd && (rd->getName() == "device_vector" || rd->getName() == "universal_vector")) { found = vd; return false; }
      return true;
    }
  } f;
  f.TraverseStmt(const_cast<clang::Expr*>(e));
  if (f.found) return f.found;
  // `p + n` of an iterator or pointer: the buffer of `p`.
  e = e->IgnoreParenCasts();
  if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e); b && b->isAdditiveOp()) e = b->getLHS()->IgnoreParenCasts();
  if (auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e); oc && oc->getNumArgs() == 2 &&
      (oc->getOperator() == clang::OO_Plus || oc->getOperator() == clang::OO_Minus))
    e = oc->getArg(0)->IgnoreParenCasts();
  if (auto* ce = llvm::dyn_cast<clang::CXXConstructExpr>(e); ce && ce->getNumArgs() >= 1) return bufferOf(ce->getArg(0), depth + 1);
  auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e);
  auto* vd = dre ? llvm::dyn_cast<clang::VarDecl>(dre->getDecl()) : nullptr;
  if (!vd || reassigned(vd)) return nullptr;
  auto* rd = vd->getType().getNonReferenceType()->getAsCXXRecordDecl();
  if (rd && rd->getName() == "device_ptr" && vd->hasInit()) return bufferOf(vd->getInit(), depth + 1);
  if (vd->getType()->isPointerType()) {
    if (vd->hasInit())
      if (const clang::VarDecl* b = bufferOf(vd->getInit(), depth + 1)) return b;
    return vd;  // a raw device pointer: the buffer itself
  }
  return nullptr;
}

// Whether every store to parameter `p` in kernel `k`'s body stores 0 or 1 (a literal, a bool, a
// comparison or a logical operator, or a ?: of those), and there is at least one.
bool storesOnlyFlags(const clang::FunctionDecl* k, const clang::ParmVarDecl* p) {
  const clang::FunctionDecl* def = nullptr;
  if (!k->hasBody(def) || !def) return false;
  if (def != k && def->getNumParams() > p->getFunctionScopeIndex()) p = def->getParamDecl(p->getFunctionScopeIndex());
  struct Check : clang::RecursiveASTVisitor<Check> {
    const clang::ParmVarDecl* p;
    unsigned stores = 0;
    bool bad = false;
    static bool flag(const clang::Expr* e) {
      e = e->IgnoreParenImpCasts();
      if (auto* il = llvm::dyn_cast<clang::IntegerLiteral>(e)) return il->getValue() == 0 || il->getValue() == 1;
      if (llvm::isa<clang::CXXBoolLiteralExpr>(e)) return true;
      if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e)) return b->isComparisonOp() || b->isLogicalOp();
      if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e)) return u->getOpcode() == clang::UO_LNot;
      if (auto* c = llvm::dyn_cast<clang::ConditionalOperator>(e)) return flag(c->getTrueExpr()) && flag(c->getFalseExpr());
      return false;
    }
    bool refers(const clang::Expr* e) const {
      e = e->IgnoreParenImpCasts();
      if (auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) e = a->getBase()->IgnoreParenImpCasts();
      else if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u && u->getOpcode() == clang::UO_Deref) e = u->getSubExpr()->IgnoreParenImpCasts();
      else return false;
      auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e);
      return d && d->getDecl() == p;
    }
    bool VisitBinaryOperator(clang::BinaryOperator* b) {
      if (b->isAssignmentOp() && refers(b->getLHS())) {
        ++stores;
        if (b->getOpcode() != clang::BO_Assign || !flag(b->getRHS())) bad = true;
      }
      return true;
    }
    bool VisitUnaryOperator(clang::UnaryOperator* u) {
      if (u->isIncrementDecrementOp() && refers(u->getSubExpr())) bad = true;
      return true;
    }
    bool VisitCallExpr(clang::CallExpr* c) {  // passed on (to a helper or an atomic): not followed
      for (const auto* a : c->arguments())
        if (auto* d = llvm::dyn_cast<clang::DeclRefExpr>(a->IgnoreParenImpCasts()); d && d->getDecl() == p) bad = true;
      return true;
    }
  } c;
  c.p = p;
  c.TraverseStmt(def->getBody());
  return c.stores > 0 && !c.bad;
}
}  // namespace

LaunchIndex::LaunchIndex(clang::ASTContext& ctx) {
  struct V : clang::RecursiveASTVisitor<V> {
    clang::ASTContext* ctx;
    LaunchIndex* index;
    bool shouldVisitTemplateInstantiations() const { return true; }
    void record(const clang::FunctionDecl* k, const clang::Expr* blockArg, clang::SourceLocation at,
                const clang::Expr* gridArg = nullptr) {
      auto& sm = ctx->getSourceManager();
      // A launch in another file than the kernel (the includer that launches it) names that file.
      std::string where = fmt::format("launch at line {}", sm.getExpansionLineNumber(at));
      const clang::FunctionDecl* def = k->getDefinition() ? k->getDefinition() : k;
      if (sm.getFileID(sm.getExpansionLoc(at)) != sm.getFileID(sm.getExpansionLoc(def->getLocation()))) {
        llvm::StringRef file = sm.getFilename(sm.getExpansionLoc(at));
        where = fmt::format("launch at {}:{}", llvm::sys::path::filename(file).str(), sm.getExpansionLineNumber(at));
      }
      auto keys = [&](auto&& add) { forEachKernelKey(k, add); };
      unsigned d[3];
      if (!blockArg || !readBlockShape(blockArg, *ctx, d) || d[0] * d[1] * d[2] == 0 || d[0] * d[1] * d[2] > 1024) {
        // The axes known all the same (`b.x = 1; b.y = n;`), merged over the kernel's launches.
        std::array<unsigned, 3> p{0, 0, 0};
        bool some = blockArg && readBlockShape(blockArg, *ctx, p.data(), true);
        keys([&](const clang::FunctionDecl* f) {
          bool first = index->unreadable_.emplace(f, where).second;
          if (first && some) index->partial_[f] = p;
          else if (auto it = index->partial_.find(f); it != index->partial_.end())
            for (int i = 0; i < 3; ++i)
              if (!some || it->second[i] != p[i]) it->second[i] = 0;
        });
        return;
      }
      Shape s{d[0], d[1], d[2], where, blockArg->getSourceRange(), 0};
      unsigned g[3];
      if (gridArg && readBlockShape(gridArg, *ctx, g)) {
        s.gridBlocks = g[0] * g[1] * g[2];
        for (int i = 0; i < 3; ++i) s.grid[i] = g[i];
      }
      auto sameBlock = [&](const Shape& o) { return o.x == s.x && o.y == s.y && o.z == s.z; };
      auto mergeGrid = [&](Shape& o) {  // launches of one block shape with different grids: not known
        if (sameBlock(o) && !std::equal(o.grid, o.grid + 3, s.grid)) std::fill(o.grid, o.grid + 3, 0u);
      };
      keys([&](const clang::FunctionDecl* f) {
        auto [it, inserted] = index->shapes_.emplace(f, s);
        if (!inserted) mergeGrid(it->second);
        auto& v = index->allShapes_[f];
        bool known = false;
        for (auto& o : v) {
          if (sameBlock(o)) mergeGrid(o);
          known = known || sameBlock(o);
        }
        if (!known) v.push_back(s);
      });
    }
    // For allocation sizes: cudaMalloc'ed pointers and the calls of each function.
    std::map<const clang::VarDecl*, std::vector<const clang::Expr*>> mallocs;
    std::map<const clang::FunctionDecl*, std::vector<const clang::CallExpr*>> callsOf;
    std::vector<std::pair<const clang::FunctionDecl*, const clang::CallExpr*>> kernelCalls;
    void collect(const clang::CallExpr* call) {
      const clang::FunctionDecl* fd = call->getDirectCallee();
      if (!fd) return;
      // Host code only: device functions (barriers, math) are never a buffer's way to a launch.
      if (fd->hasAttr<clang::CUDADeviceAttr>() && !fd->hasAttr<clang::CUDAHostAttr>()) return;
      callsOf[fd->getCanonicalDecl()].push_back(call);
      if (!fd->getIdentifier()) return;  // operators, conversions
      std::string n = fd->getName().str();
      if ((n == "cudaMalloc" || n == "cudaMallocManaged") && call->getNumArgs() >= 2)
        if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(call->getArg(0)->IgnoreParenCasts()); u && u->getOpcode() == clang::UO_AddrOf)
          if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(u->getSubExpr()->IgnoreParenImpCasts()))
            if (auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl())) mallocs[vd].push_back(call->getArg(1));
    }
    bool VisitCUDAKernelCallExpr(clang::CUDAKernelCallExpr* call) {
      if (!call->containsErrors() && !call->isInstantiationDependent())
        if (const clang::FunctionDecl* k = call->getDirectCallee()) kernelCalls.push_back({k, call});
      // Clang's recovery (the config may not be a call) and template patterns (a dependent block
      // shape has no type yet; the instantiations are visited instead).
      if (call->containsErrors() || call->isInstantiationDependent()) return true;
      const clang::FunctionDecl* k = call->getDirectCallee();
      if (!k) return true;
      // The block is the second dim3 of the configuration call: (grid, block, ...) host side,
      // (func, params, grid, block, ...) for a device-side launch, which is how the device-side
      // parse sees a launch in a lambda (lambdas are __host__ __device__).
      const clang::CallExpr* cfg = call->getConfig();
      const clang::Expr* block = nullptr;
      const clang::Expr* grid = nullptr;
      unsigned dim3s = 0;
      for (unsigned i = 0; cfg && i < cfg->getNumArgs() && !block; ++i) {
        const clang::Expr* a = cfg->getArg(i);
        auto* rd = a->getType()->getAsCXXRecordDecl();
        if (rd && rd->getName() == "dim3" && ++dim3s == 2) block = a;
        else if (rd && rd->getName() == "dim3" && dim3s == 1) grid = a;
      }
      record(k, block, call->getBeginLoc(), grid);
      return true;
    }
    // cudaLaunchKernel(k, grid, block, ...) and cudaLaunchCooperativeKernel: the same shape rules.
    bool VisitCallExpr(clang::CallExpr* call) {
      if (!call->containsErrors() && !call->isInstantiationDependent()) collect(call);
      if (call->containsErrors() || call->isInstantiationDependent() || llvm::isa<clang::CUDAKernelCallExpr>(call)) return true;
      const clang::FunctionDecl* fd = call->getDirectCallee();
      if (!fd || call->getNumArgs() < 3) return true;
      std::string n = fd->getNameAsString();
      if (n == "cudaLaunchKernel" || n == "cudaLaunchCooperativeKernel") {
        if (const clang::FunctionDecl* k = kernelOf(call->getArg(0))) record(k, call->getArg(2), call->getBeginLoc(), call->getArg(1));
        return true;
      }
      // cudaLaunchKernelEx(&config, k, args...) / cudaLaunchKernelExC(&config, (void*)k, args): the
      // block is config.blockDim, set in the config's initialiser or member by member.
      if (n == "cudaLaunchKernelEx" || n == "cudaLaunchKernelExC") {
        const clang::FunctionDecl* k = kernelOf(call->getArg(1));
        if (!k) return true;
        const clang::Expr* block = configBlockDim(call->getArg(0));
        if (block) record(k, block, call->getBeginLoc());
        else record(k, nullptr, call->getBeginLoc());
      }
      return true;
    }
    // A function template first declared outside the traversal scope (a header the lint does not
    // cover) and defined here: the visitor reaches instantiations only from the first
    // declaration, so visit them from the definition too (explicit instantiations in this file).
    bool TraverseFunctionTemplateDecl(clang::FunctionTemplateDecl* d) {
      if (!clang::RecursiveASTVisitor<V>::TraverseFunctionTemplateDecl(d)) return false;
      if (d != d->getCanonicalDecl() && d->isThisDeclarationADefinition() && seenTemplates.insert(d->getCanonicalDecl()).second)
        for (clang::FunctionDecl* spec : d->getCanonicalDecl()->specializations())
          if (spec->isTemplateInstantiation()) TraverseDecl(spec);
      return true;
    }
    llvm::SmallPtrSet<const clang::FunctionTemplateDecl*, 8> seenTemplates;
    // Launches written in lambdas (`auto run = [&] { k<<<g, b>>>(...); };`).
    bool TraverseLambdaExpr(clang::LambdaExpr* l) {
      TraverseStmt(l->getBody());
      return true;
    }
  } v;
  v.ctx = &ctx;
  v.index = this;
  v.TraverseDecl(ctx.getTranslationUnitDecl());

  // Allocation sizes of the buffers each launch passes.
  std::function<uint64_t(const clang::Expr*)> constBytes = [&](const clang::Expr* e) -> uint64_t {
    e = e->IgnoreParenImpCasts();
    if (e->isValueDependent()) return 0;
    clang::Expr::EvalResult r;
    if (e->EvaluateAsInt(r, ctx)) return r.Val.getInt().isNegative() ? 0 : r.Val.getInt().getZExtValue();
    if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e)) {
      uint64_t x = constBytes(b->getLHS()), y = x ? constBytes(b->getRHS()) : 0;
      if (!x || !y) return 0;
      if (b->getOpcode() == clang::BO_Mul) return x * y;
      if (b->getOpcode() == clang::BO_Add) return x + y;
      return 0;
    }
    // `domain.ni` where `const int ni = NC + 1;` is a const member with an in-class initializer.
    if (auto* me = llvm::dyn_cast<clang::MemberExpr>(e))
      if (auto* fd = llvm::dyn_cast<clang::FieldDecl>(me->getMemberDecl()); fd && fd->getType().isConstQualified() && fd->getInClassInitializer())
        return constBytes(fd->getInClassInitializer());
    if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e))
      if (auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl()); vd && vd->getType().isConstQualified() && vd->hasInit())
        return constBytes(vd->getInit());
    return 0;
  };
  std::map<std::pair<const clang::VarDecl*, int>, uint64_t> extentOf;  // memo: a launch function passes
                                                                       // the same buffers to many launches
  std::function<uint64_t(const clang::Expr*, int)> extent = [&](const clang::Expr* e, int depth) -> uint64_t {
    auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenCasts());
    auto* var = dre ? llvm::dyn_cast<clang::VarDecl>(dre->getDecl()) : nullptr;
    if (!var) return 0;
    // Only buffers something allocates can have a size: skip the rest before any search.
    if (!llvm::isa<clang::ParmVarDecl>(var) && !v.mallocs.count(var)) return 0;
    auto memo = extentOf.find({var, depth});
    if (memo != extentOf.end()) return memo->second;
    uint64_t& out = extentOf[{var, depth}];
    out = 0;
    if (reassigned(var)) return 0;
    if (auto* pv = llvm::dyn_cast<clang::ParmVarDecl>(var)) {  // through a host function's parameter
      auto* fn = llvm::dyn_cast<clang::FunctionDecl>(pv->getDeclContext());
      if (!fn || depth >= 3 || fn->hasAttr<clang::CUDAGlobalAttr>()) return 0;
      auto it = v.callsOf.find(fn->getCanonicalDecl());
      if (it == v.callsOf.end() || it->second.empty()) return 0;
      uint64_t most = 0;
      for (const clang::CallExpr* c : it->second) {
        unsigned i = pv->getFunctionScopeIndex();
        uint64_t b = i < c->getNumArgs() ? extent(c->getArg(i), depth + 1) : 0;
        if (!b) return 0;
        most = std::max(most, b);
      }
      return extentOf[{var, depth}] = most;
    }
    auto it = v.mallocs.find(var);
    if (it == v.mallocs.end()) return 0;
    uint64_t most = 0;
    for (const clang::Expr* size : it->second) {
      uint64_t b = constBytes(size);
      if (!b) return 0;
      most = std::max(most, b);
    }
    return extentOf[{var, depth}] = most;
  };
  // Scans of flags: per launch, for each argument naming a buffer, the events before it in its
  // function (source order): the last scan writing the buffer, and the launch before that scan
  // that wrote the scan's input.
  const auto& sm = ctx.getSourceManager();
  auto scanOutput = [&](const clang::CallExpr* c, const clang::VarDecl*& in) -> const clang::VarDecl* {
    const clang::FunctionDecl* fd = c->getDirectCallee();
    if (!fd || c->getNumArgs() < 3 || !fd->getIdentifier()) return nullptr;
    std::string n = fd->getName().str(), q = fd->getQualifiedNameAsString();
    if (n != "exclusive_scan" && n != "inclusive_scan") return nullptr;
    if (q.find("thrust") == std::string::npos && q.find("std") == std::string::npos) return nullptr;
    unsigned first = 0;  // thrust's execution-policy overloads take the policy first
    if (c->getNumArgs() >= 4 && !bufferOf(c->getArg(0))) first = 1;
    in = bufferOf(c->getArg(first));
    return bufferOf(c->getArg(first + 2));
  };
  // The scans of the translation unit (usually none: then nothing more is done).
  struct Scan {
    const clang::CallExpr* call;
    const clang::VarDecl* out;
    const clang::VarDecl* in;
  };
  std::vector<Scan> scans;
  for (const auto& [fn, calls] : v.callsOf) {
    if (!fn->getIdentifier()) continue;
    std::string n = fn->getName().str();
    if (n != "exclusive_scan" && n != "inclusive_scan") continue;
    for (const clang::CallExpr* c : calls) {
      const clang::VarDecl* in = nullptr;
      if (const clang::VarDecl* out = scanOutput(c, in)) scans.push_back({c, out, in});
    }
  }
  auto flagsFact = [&](const clang::CallExpr* launch, unsigned i) {
    const clang::VarDecl* buf = bufferOf(launch->getArg(i));
    if (!buf) return false;
    const clang::CallExpr* lastScan = nullptr;
    const clang::VarDecl* scanIn = nullptr;
    for (const Scan& sc : scans) {
      if (sc.out != buf || !sm.isBeforeInTranslationUnit(sc.call->getBeginLoc(), launch->getBeginLoc())) continue;
      if (!lastScan || sm.isBeforeInTranslationUnit(lastScan->getBeginLoc(), sc.call->getBeginLoc())) lastScan = sc.call, scanIn = sc.in;
    }
    if (!lastScan || !scanIn) return false;
    // Nothing launched between the scan and this launch may write the buffer; the last launch
    // before the scan that gets its input must store only flags into it.
    const clang::CallExpr* producer = nullptr;
    unsigned producerArg = 0;
    for (const auto& [k2, call2] : v.kernelCalls) {
      for (unsigned j = 0; j < call2->getNumArgs(); ++j) {
        const clang::VarDecl* b = bufferOf(call2->getArg(j));
        if (!b) continue;
        bool afterScan = sm.isBeforeInTranslationUnit(lastScan->getBeginLoc(), call2->getBeginLoc()) &&
                         sm.isBeforeInTranslationUnit(call2->getBeginLoc(), launch->getBeginLoc());
        if (afterScan && b == buf && j < k2->getNumParams() && !k2->getParamDecl(j)->getType()->getPointeeType().isConstQualified())
          return false;
        if (b == scanIn && sm.isBeforeInTranslationUnit(call2->getBeginLoc(), lastScan->getBeginLoc()) &&
            (!producer || sm.isBeforeInTranslationUnit(producer->getBeginLoc(), call2->getBeginLoc())))
          producer = call2, producerArg = j;
      }
    }
    if (!producer) return false;
    const clang::FunctionDecl* pk = producer->getDirectCallee();
    return pk && producerArg < pk->getNumParams() && storesOnlyFlags(pk, pk->getParamDecl(producerArg));
  };
  for (const auto& [k, call] : scans.empty() ? decltype(v.kernelCalls){} : v.kernelCalls) {
    std::vector<uint8_t> flags(call->getNumArgs(), 0);
    for (unsigned i = 0; i < call->getNumArgs(); ++i)
      if (call->getArg(i)->getType()->isPointerType()) flags[i] = flagsFact(call, i);
    forEachKernelKey(k, [&](const clang::FunctionDecl* key) {
      auto [it, inserted] = prefixOfFlags_.emplace(key, flags);
      if (!inserted)
        for (size_t i = 0; i < it->second.size(); ++i) it->second[i] = it->second[i] && i < flags.size() && flags[i];
    });
  }
  for (const auto& [k, call] : v.kernelCalls) {
    std::vector<uint64_t> bytes(call->getNumArgs(), 0);
    for (unsigned i = 0; i < call->getNumArgs(); ++i)
      if (call->getArg(i)->getType()->isPointerType()) bytes[i] = extent(call->getArg(i), 0);
    forEachKernelKey(k, [&](const clang::FunctionDecl* key) {
      auto [it, inserted] = paramBytes_.emplace(key, bytes);
      if (!inserted)  // every launch must know it: the largest, or 0
        for (size_t i = 0; i < it->second.size(); ++i)
          it->second[i] = i < bytes.size() && it->second[i] && bytes[i] ? std::max(it->second[i], bytes[i]) : 0;
    });
  }
}


bool LaunchIndex::prefixOfFlags(const clang::FunctionDecl* k, unsigned index) const {
  const auto* v = lookupKernel(prefixOfFlags_, k);
  return v && index < v->size() && (*v)[index];
}

uint64_t LaunchIndex::allocatedBytes(const clang::FunctionDecl* k, unsigned index) const {
  const auto* v = lookupKernel(paramBytes_, k);
  return v && index < v->size() ? (*v)[index] : 0;
}

const LaunchIndex::Shape* LaunchIndex::find(const clang::FunctionDecl* k) const { return lookupKernel(shapes_, k); }

std::vector<LaunchIndex::Shape> LaunchIndex::all(const clang::FunctionDecl* k) const {
  const auto* v = lookupKernel(allShapes_, k);
  return v ? *v : std::vector<Shape>{};
}

const std::string* LaunchIndex::unreadable(const clang::FunctionDecl* k) const { return lookupKernel(unreadable_, k); }

const std::array<unsigned, 3>* LaunchIndex::partialShape(const clang::FunctionDecl* k) const {
  const auto* p = lookupKernel(partial_, k);
  return p && ((*p)[0] || (*p)[1] || (*p)[2]) ? p : nullptr;
}

}  // namespace gpuopt
