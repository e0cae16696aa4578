#include "analyzer/model/launch_index.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <fmt/format.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Support/Path.h>

#include "analyzer/model/ast_util.h"
#include "analyzer/model/launch_eval.h"

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

}  // namespace

// Reads a block-shape expression: an integer, a dim3(...) temporary or a dim3 variable.
bool readBlockShape(const clang::Expr* e, clang::ASTContext& ctx, unsigned dims[3], bool partial) {
  HostValues hv(ctx);
  return hv.shape(e, {}, dims, partial);
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
  // A launch as written: the callee (a kernel, or a pointer or parameter holding one), its block and
  // grid expressions (for cudaLaunchKernelEx, the configuration whose blockDim / gridDim they are).
  struct Site {
    const clang::Expr* call = nullptr;
    const clang::Expr* callee = nullptr;
    const clang::Expr* block = nullptr;
    const clang::Expr* grid = nullptr;
    const clang::Expr* config = nullptr;
  };
  struct V : clang::RecursiveASTVisitor<V> {
    clang::ASTContext* ctx;
    LaunchIndex* index;
    HostValues* hv;
    bool shouldVisitTemplateInstantiations() const { return true; }
    std::vector<Site> sites;
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
    // Assignments to variables at namespace scope (`gBlock = dim3(16, 16);` in a set-up function,
    // `gBlock.x = 16;`), wherever they are.
    void globalSet(const clang::Expr* lhs, const clang::Expr* rhs) {
      lhs = lhs->IgnoreParenImpCasts();
      std::string member;
      if (auto* me = llvm::dyn_cast<clang::MemberExpr>(lhs); me && !me->isArrow()) {
        member = me->getMemberDecl()->getNameAsString();
        lhs = me->getBase()->IgnoreParenImpCasts();
      }
      auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(lhs);
      auto* v = dre ? llvm::dyn_cast<clang::VarDecl>(dre->getDecl()) : nullptr;
      if (v && v->hasGlobalStorage() && !v->isStaticLocal()) hv->noteGlobalSet(v, member, rhs);
    }
    bool VisitBinaryOperator(clang::BinaryOperator* b) {
      if (b->isAssignmentOp() && !b->isInstantiationDependent())
        globalSet(b->getLHS(), b->getOpcode() == clang::BO_Assign ? b->getRHS() : nullptr);
      return true;
    }
    bool VisitUnaryOperator(clang::UnaryOperator* u) {
      if (u->isIncrementDecrementOp() && !u->isInstantiationDependent()) globalSet(u->getSubExpr(), nullptr);
      return true;
    }
    bool VisitCUDAKernelCallExpr(clang::CUDAKernelCallExpr* call) {
      // Clang's recovery (the config may not be a call) and template patterns (a dependent block
      // shape has no type yet; the instantiations are visited instead).
      if (call->containsErrors() || call->isInstantiationDependent()) return true;
      if (const clang::FunctionDecl* k = call->getDirectCallee()) kernelCalls.push_back({k, call});
      // The block is the second dim3 of the configuration call: (grid, block, ...) host side,
      // (func, params, grid, block, ...) for a device-side launch, which is how the device-side
      // parse sees a launch in a lambda (lambdas are __host__ __device__).
      const clang::CallExpr* cfg = call->getConfig();
      Site site;
      site.call = call;
      site.callee = call->getCallee();
      unsigned dim3s = 0;
      for (unsigned i = 0; cfg && i < cfg->getNumArgs() && !site.block; ++i) {
        const clang::Expr* a = cfg->getArg(i);
        auto* rd = a->getType()->getAsCXXRecordDecl();
        if (rd && rd->getName() == "dim3" && ++dim3s == 2) site.block = a;
        else if (rd && rd->getName() == "dim3" && dim3s == 1) site.grid = a;
      }
      sites.push_back(site);
      return true;
    }
    // cudaLaunchKernel(k, grid, block, ...) and cudaLaunchCooperativeKernel: the same shape rules.
    bool VisitCallExpr(clang::CallExpr* call) {
      if (call->containsErrors() || call->isInstantiationDependent()) return true;
      collect(call);
      if (auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(call); oc && oc->isAssignmentOp() && oc->getNumArgs() == 2)
        globalSet(oc->getArg(0), oc->getOperator() == clang::OO_Equal ? oc->getArg(1) : nullptr);
      if (llvm::isa<clang::CUDAKernelCallExpr>(call)) return true;
      const clang::FunctionDecl* fd = call->getDirectCallee();
      if (!fd || call->getNumArgs() < 3 || !fd->getIdentifier()) return true;
      llvm::StringRef n = fd->getName();
      if (n == "cudaLaunchKernel" || n == "cudaLaunchCooperativeKernel") sites.push_back({call, call->getArg(0), call->getArg(2), call->getArg(1), nullptr});
      // cudaLaunchKernelEx(&config, k, args...) / cudaLaunchKernelExC(&config, (void*)k, args): the
      // block is config.blockDim, set in the config's initialiser, member by member, or by a helper.
      if (n == "cudaLaunchKernelEx" || n == "cudaLaunchKernelExC") sites.push_back({call, call->getArg(1), nullptr, nullptr, call->getArg(0)});
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
  HostValues hv(ctx);
  v.ctx = &ctx;
  v.index = this;
  v.hv = &hv;
  v.TraverseDecl(ctx.getTranslationUnitDecl());
  hv.setCalls(&v.callsOf);
  for (const Site& site : v.sites) resolveLaunch(ctx, hv, site.call, site.callee, site.block, site.grid, site.config);

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


void LaunchIndex::record(clang::ASTContext& ctx, const clang::FunctionDecl* k, bool ok, const unsigned d[3], bool some,
                         const unsigned p[3], const std::string& where, clang::SourceRange range, bool gridKnown,
                         const unsigned g[3]) {
  auto keys = [&](auto&& add) { forEachKernelKey(k, add); };
  if (!ok || d[0] * d[1] * d[2] == 0 || d[0] * d[1] * d[2] > 1024) {
    // The axes known all the same (`b.x = 1; b.y = n;`), merged over the kernel's launches.
    std::array<unsigned, 3> pa{some ? p[0] : 0, some ? p[1] : 0, some ? p[2] : 0};
    keys([&](const clang::FunctionDecl* f) {
      bool first = unreadable_.emplace(f, where).second;
      if (first && some) partial_[f] = pa;
      else if (auto it = partial_.find(f); it != partial_.end())
        for (int i = 0; i < 3; ++i)
          if (!some || it->second[i] != pa[i]) it->second[i] = 0;
    });
    return;
  }
  Shape s{d[0], d[1], d[2], where, range, 0};
  if (gridKnown) {
    s.gridBlocks = g[0] * g[1] * g[2];
    for (int i = 0; i < 3; ++i) s.grid[i] = g[i];
  }
  auto sameBlock = [&](const Shape& o) { return o.x == s.x && o.y == s.y && o.z == s.z; };
  auto mergeGrid = [&](Shape& o) {  // launches of one block shape with different grids: not known
    if (sameBlock(o) && !std::equal(o.grid, o.grid + 3, s.grid)) std::fill(o.grid, o.grid + 3, 0u);
  };
  keys([&](const clang::FunctionDecl* f) {
    auto [it, inserted] = shapes_.emplace(f, s);
    if (!inserted) mergeGrid(it->second);
    auto& v = allShapes_[f];
    bool known = false;
    for (auto& o : v) {
      if (sameBlock(o)) mergeGrid(o);
      known = known || sameBlock(o);
    }
    if (!known) v.push_back(s);
  });
}

void LaunchIndex::resolveLaunch(clang::ASTContext& ctx, HostValues& hv, const clang::Expr* call, const clang::Expr* callee,
                                const clang::Expr* block, const clang::Expr* grid, const clang::Expr* config) {
  auto& sm = ctx.getSourceManager();
  int contexts = 0;
  std::function<void(const HostValues::Env&, int)> go = [&](const HostValues::Env& env, int depth) {
    if (++contexts > 64) return;
    hv.clearMissing();
    const bool dead = hv.dead(call, env);
    std::vector<const clang::FunctionDecl*> kernels = hv.kernels(callee, env);
    unsigned d[3] = {0, 1, 1}, g[3] = {0, 1, 1};
    const clang::Expr* origin = nullptr;
    bool ok = block ? hv.shape(block, env, d, false, &origin)
                    : config && hv.memberShape(config, "blockDim", call, env, d);
    bool gridKnown = grid ? hv.shape(grid, env, g) : config && hv.memberShape(config, "gridDim", call, env, g);
    // What the launch needs comes from the parameters of the outermost function: follow each of its
    // call sites (as deep as the host facts are followed: three calls).
    const clang::FunctionDecl* missing = hv.missing();
    if (missing && depth < 3 && !env.back().call && env.back().fn && missing->getCanonicalDecl() == env.back().fn->getCanonicalDecl()) {
      const auto& calls = hv.callsOf(missing);
      if (!calls.empty()) {
        for (const clang::CallExpr* c : calls) {
          HostValues::Env e2 = env;
          e2.back().call = c;
          e2.push_back({hv.enclosingFunction(c), nullptr});
          go(e2, depth + 1);
        }
        return;
      }
    }
    if (dead) {
      for (const auto* k : kernels) deadLaunched_.insert(k->getCanonicalDecl());
      return;
    }
    unsigned p[3] = {0, 0, 0};
    bool some = false;
    if (!ok) some = block ? hv.shape(block, env, p, true) : config && hv.memberShape(config, "blockDim", call, env, p, true);
    // Where: the launch, or for a launch through a wrapper the outermost call that gave it its values.
    const clang::Expr* at = call;
    for (const auto& f : env)
      if (f.call) at = f.call;
    std::string where;
    for (const auto* k : kernels) {
      liveLaunched_.insert(k->getCanonicalDecl());
      const clang::FunctionDecl* def = k->getDefinition() ? k->getDefinition() : k;
      clang::SourceLocation loc = sm.getExpansionLoc(at->getBeginLoc());
      if (sm.getFileID(loc) != sm.getFileID(sm.getExpansionLoc(def->getLocation())))
        where = fmt::format("launch at {}:{}", llvm::sys::path::filename(sm.getFilename(loc)).str(), sm.getExpansionLineNumber(loc));
      else
        where = fmt::format("launch at line {}", sm.getExpansionLineNumber(loc));
      if (at != call && env[0].fn && env[0].fn->getIdentifier()) where += fmt::format(" through '{}'", env[0].fn->getName().str());
      clang::SourceRange range = origin ? origin->getSourceRange() : block ? block->getSourceRange() : config ? config->getSourceRange() : call->getSourceRange();
      record(ctx, k, ok, d, some, p, where, range, gridKnown, g);
    }
  };
  go(HostValues::Env{{hv.enclosingFunction(call), nullptr}}, 0);
}

bool LaunchIndex::onlyDead(const clang::FunctionDecl* k) const {
  const clang::FunctionDecl* c = k->getCanonicalDecl();
  return deadLaunched_.count(c) && !liveLaunched_.count(c);
}

bool LaunchIndex::prefixOfFlags(const clang::FunctionDecl* k, unsigned index) const {
  const auto* v = lookupKernel(prefixOfFlags_, k);
  return v && index < v->size() && (*v)[index];
}

uint64_t LaunchIndex::allocatedBytes(const clang::FunctionDecl* k, unsigned index) const {
  const auto* v = lookupKernel(paramBytes_, k);
  return v && index < v->size() ? (*v)[index] : 0;
}

const LaunchIndex::Shape* LaunchIndex::find(const clang::FunctionDecl* k) const {
  return onlyDead(k) ? nullptr : lookupKernel(shapes_, k);
}

std::vector<LaunchIndex::Shape> LaunchIndex::all(const clang::FunctionDecl* k) const {
  const auto* v = onlyDead(k) ? nullptr : lookupKernel(allShapes_, k);
  return v ? *v : std::vector<Shape>{};
}

const std::string* LaunchIndex::unreadable(const clang::FunctionDecl* k) const {
  return onlyDead(k) ? nullptr : lookupKernel(unreadable_, k);
}

const std::array<unsigned, 3>* LaunchIndex::partialShape(const clang::FunctionDecl* k) const {
  const auto* p = onlyDead(k) ? nullptr : lookupKernel(partial_, k);
  return p && ((*p)[0] || (*p)[1] || (*p)[2]) ? p : nullptr;
}

}  // namespace gpuopt
