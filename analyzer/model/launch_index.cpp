// Launch discovery: one walk of the translation unit collects every launch and what the host
// does (calls, assignments to variables at namespace scope, allocations); then each launch is
// resolved with HostValues (launch_eval.h: through launch wrappers' call sites, dead launches
// dropped) into the block shape (and grid) per kernel; the buffer facts are launch_buffers.cpp's.
#include "analyzer/model/launch_index.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <fmt/format.h>

#include <functional>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Support/Path.h>

#include "analyzer/model/ast_util.h"
#include "analyzer/model/launch_detail.h"
#include "analyzer/model/launch_eval.h"

#include <algorithm>
#include <functional>
#include <set>

namespace gpuopt {

using namespace launch_detail;

LaunchIndex::LaunchIndex(clang::ASTContext& ctx, const ProgramCalls* program) {
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
    // For the buffer facts: cudaMalloc'ed pointers, the calls of each function, every launch (the
    // calls are also how a launch wrapper's parameters are bound to each caller's arguments).
    HostCalls host;
    void collect(const clang::CallExpr* call) {
      const clang::FunctionDecl* fd = call->getDirectCallee();
      if (!fd) return;
      // Host code only: device functions (barriers, math) are never a buffer's way to a launch.
      if (fd->hasAttr<clang::CUDADeviceAttr>() && !fd->hasAttr<clang::CUDAHostAttr>()) return;
      host.callsOf[fd->getCanonicalDecl()].push_back(call);
      if (!fd->getIdentifier()) return;  // operators, conversions
      std::string n = fd->getName().str();
      if ((n == "cudaMalloc" || n == "cudaMallocManaged") && call->getNumArgs() >= 2)
        if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(call->getArg(0)->IgnoreParenCasts()); u && u->getOpcode() == clang::UO_AddrOf)
          if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(u->getSubExpr()->IgnoreParenImpCasts()))
            if (auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl())) host.mallocs[vd].push_back(call->getArg(1));
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
      // Its address taken (`cudaMallocPitch(&p, &gPitchBytes, ...)`, `read(&gSize)`): the callee may
      // write it, so its value is not the initialiser's (it is the call's, known only at run time).
      if (u->getOpcode() == clang::UO_AddrOf && !u->isInstantiationDependent() &&
          !u->getSubExpr()->getType().isConstQualified())
        globalSet(u->getSubExpr(), nullptr);
      return true;
    }
    // ... likewise bound to a non-const reference parameter (`readPitch(gPitch)` with `size_t&`).
    void referenceArguments(const clang::CallExpr* call) {
      const clang::FunctionDecl* fd = call->getDirectCallee();
      if (!fd) return;
      const unsigned shift = llvm::isa<clang::CXXOperatorCallExpr>(call) && llvm::isa<clang::CXXMethodDecl>(fd) ? 1 : 0;
      for (unsigned i = shift; i < call->getNumArgs() && i - shift < fd->getNumParams(); ++i) {
        clang::QualType pt = fd->getParamDecl(i - shift)->getType();
        if (pt->isLValueReferenceType() && !pt->getPointeeType().isConstQualified()) globalSet(call->getArg(i), nullptr);
      }
    }
    bool VisitCUDAKernelCallExpr(clang::CUDAKernelCallExpr* call) {
      // Clang's recovery (the config may not be a call) and template patterns (a dependent block
      // shape has no type yet; the instantiations are visited instead). Errors in the kernel's
      // arguments alone (an undeclared `HasNeighbor(...)` from a missing mpi.h: the NVIDIA blog's
      // CUDA-aware MPI sample, tenth stop check) leave the kernel and its shape readable: the
      // launch counts, and those arguments are not known.
      // (Such a call's type is error-dependent, so it is instantiation-dependent too: the config and
      // the callee decide.)
      if (call->containsErrors()) {
        const clang::CallExpr* cfg = call->getConfig();
        if (!cfg || cfg->containsErrors() || cfg->isInstantiationDependent() || call->getCallee()->containsErrors() ||
            call->getCallee()->isInstantiationDependent() || !call->getDirectCallee())
          return true;
      } else if (call->isInstantiationDependent()) {
        return true;
      }
      if (const clang::FunctionDecl* k = call->getDirectCallee()) host.kernelCalls.push_back({k, call});
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
      if (!llvm::isa<clang::CXXOperatorCallExpr>(call) || !llvm::cast<clang::CXXOperatorCallExpr>(call)->isAssignmentOp())
        referenceArguments(call);
      if (auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(call); oc && oc->isAssignmentOp() && oc->getNumArgs() == 2)
        globalSet(oc->getArg(0), oc->getOperator() == clang::OO_Equal ? oc->getArg(1) : nullptr);
      if (llvm::isa<clang::CUDAKernelCallExpr>(call)) return true;
      const clang::FunctionDecl* fd = call->getDirectCallee();
      if (!fd || call->getNumArgs() < 3 || !fd->getIdentifier()) return true;
      llvm::StringRef n = fd->getName();
      // The runtime's own C++ wrappers (cudaLaunchKernelEx calling cudaLaunchKernelExC in
      // cuda_runtime.h): the launch is the user's call of the wrapper, recorded itself.
      if (ctx->getSourceManager().isInSystemHeader(ctx->getSourceManager().getExpansionLoc(call->getBeginLoc()))) return true;
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
    // A generic lambda (`[&](auto k) { k<<<g, b>>>(...); }`): its body is a pattern whose launches
    // are dependent; those of each instantiation of its call operator are the launches.
    bool TraverseLambdaExpr(clang::LambdaExpr* l) {
      TraverseStmt(l->getBody());
      if (clang::FunctionTemplateDecl* t = l->getDependentCallOperator())
        for (clang::FunctionDecl* spec : t->specializations())
          if (spec->getBody()) TraverseStmt(spec->getBody());
      return true;
    }
  } v;
  HostValues hv(ctx);
  v.ctx = &ctx;
  v.index = this;
  v.hv = &hv;
  v.TraverseDecl(ctx.getTranslationUnitDecl());
  hv.setCalls(&v.host.callsOf);
  // (After the unit's own calls are all known: callsOf keeps its answers with the program's added.)
  hv.setProgram(program);
  for (const Site& site : v.sites) resolveLaunch(ctx, hv, site.call, site.callee, site.block, site.grid, site.config);

  // Allocation sizes and prefix sums of flags of the buffers each launch passes.
  readBufferFacts(ctx, v.host);
  // How the kernels launched here weigh against one another (launch_weights.cpp).
  weighKernels(ctx, hv);
  programFacts_ = hv.programFacts();
}

void LaunchIndex::record(clang::ASTContext& ctx, const clang::FunctionDecl* k, bool ok, const unsigned d[3], bool some,
                         const unsigned p[3], const std::string& where, clang::SourceRange range, bool gridKnown,
                         const unsigned g[3]) {
  auto keys = [&](auto&& add) { forEachKernelKey(k, add); };
  if (auto* prim = k->getPrimaryTemplate()) {
    auto& specs = launchedSpecs_[prim->getTemplatedDecl()->getCanonicalDecl()];
    if (std::find(specs.begin(), specs.end(), k->getCanonicalDecl()) == specs.end()) specs.push_back(k->getCanonicalDecl());
  }
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
    // The integer arguments too (`axpy<<<g, b>>>(n, x, incx)` in a wrapper whose callers pass
    // `incx`): they decide strides and guards.
    if (const auto* kc = llvm::dyn_cast<clang::CUDAKernelCallExpr>(call))
      for (unsigned i = 0; i < kc->getNumArgs(); ++i)
        if (kc->getArg(i)->getType()->isIntegralOrEnumerationType() && !kc->getArg(i)->isValueDependent())
          (void)hv.integer(kc->getArg(i), env);
    // What the launch needs comes from the parameters of the outermost function: follow each of its
    // call sites (as deep as the host facts are followed: three calls), those of the program's
    // other files included (HostValues::setProgram).
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
      for (const auto* k : kernels) {
        deadLaunched_.insert(k->getCanonicalDecl());
        deadAt_.emplace(k->getCanonicalDecl(), call);
      }
      return;
    }
    unsigned p[3] = {0, 0, 0};
    bool some = false;
    if (!ok) some = block ? hv.shape(block, env, p, true) : config && hv.memberShape(config, "blockDim", call, env, p, true);
    // Where: the launch, or for a launch through a wrapper the outermost call that gave it its values.
    // (Only when the block needed it: a grid from the caller's argument leaves the launch the place.)
    const clang::Expr* at = call;
    unsigned here[3] = {0, 1, 1};
    const bool blockHere = block && ok && hv.shape(block, HostValues::Env{{env[0].fn, nullptr}}, here) &&
                           std::equal(here, here + 3, d);
    if (!blockHere)
      for (const auto& f : env)
        if (f.call && !hv.external(f.call)) at = f.call;
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
      LaunchRun run{call, {}, gridKnown ? g[0] * g[1] * g[2] : 0u, ok ? d[0] * d[1] * d[2] : 0u};
      for (const auto& f : env)
        if (f.call) run.via.push_back(f.call);
      runs_[k->getCanonicalDecl()].push_back(std::move(run));
      // The integer arguments, as the launch passes them (through the wrapper's parameters).
      // (And which of them are a tensor view's stride: HostValues::viewStride.)
      std::vector<std::optional<int64_t>> args(def->getNumParams());
      std::vector<uint8_t> strides(def->getNumParams(), 0);
      if (const auto* kc = llvm::dyn_cast<clang::CUDAKernelCallExpr>(call))
        for (unsigned i = 0; i < args.size() && i < kc->getNumArgs(); ++i)
          if (def->getParamDecl(i)->getType()->isIntegralOrEnumerationType() && !kc->getArg(i)->isValueDependent()) {
            args[i] = hv.integer(kc->getArg(i), env);
            strides[i] = hv.viewStride(kc->getArg(i), env);
          } else if (def->getParamDecl(i)->getType()->isPointerType() && !kc->getArg(i)->isValueDependent()) {
            // A null pointer every launch passes (`NULL` for an optional index vector, through
            // the launch wrapper's parameter: ccminer's g_nonceVector, seventh stop check): the
            // kernel's `p != NULL` tests are decided. Any other pointer value is not a constant.
            // A wrapper's parameter: the argument of the call in `env`, else of every call site.
            std::function<bool(const clang::Expr*, int)> isNull = [&](const clang::Expr* e, int depth) {
              e = e->IgnoreParenImpCasts();
              if (e->isNullPointerConstant(ctx, clang::Expr::NPC_ValueDependentIsNotNull) != clang::Expr::NPCK_NotNull)
                return true;
              const auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e);
              const auto* pv = dre ? llvm::dyn_cast<clang::ParmVarDecl>(dre->getDecl()) : nullptr;
              const auto* fn = pv ? llvm::dyn_cast<clang::FunctionDecl>(pv->getDeclContext()) : nullptr;
              if (!fn || depth >= 3) return false;
              const unsigned idx = pv->getFunctionScopeIndex();
              for (const auto& f : env)
                if (f.fn && f.call && f.fn->getCanonicalDecl() == fn->getCanonicalDecl())
                  return idx < f.call->getNumArgs() && isNull(f.call->getArg(idx), depth + 1);
              const auto& calls = hv.callsOf(fn);
              if (calls.empty()) return false;
              for (const clang::CallExpr* c : calls)
                if (idx >= c->getNumArgs() || !isNull(c->getArg(idx), depth + 1)) return false;
              return true;
            };
            if (isNull(kc->getArg(i), 0)) args[i] = 0;
          }
      recordArguments(k, std::move(args));
      forEachKernelKey(k, [&](const clang::FunctionDecl* key) {
        auto [it, inserted] = viewStrides_.emplace(key, strides);
        if (!inserted)  // every launch must pass one
          for (size_t i = 0; i < it->second.size(); ++i) it->second[i] = it->second[i] && i < strides.size() && strides[i];
      });
    }
  };
  go(HostValues::Env{{hv.enclosingFunction(call), nullptr}}, 0);
}

void LaunchIndex::recordArguments(const clang::FunctionDecl* k, std::vector<std::optional<int64_t>> values) {
  forEachKernelKey(k, [&](const clang::FunctionDecl* key) {
    auto [it, inserted] = argConsts_.emplace(key, values);
    if (!inserted)  // every launch must pass the same value
      for (size_t i = 0; i < it->second.size(); ++i)
        if (i >= values.size() || it->second[i] != values[i]) it->second[i].reset();
  });
}

std::optional<int64_t> LaunchIndex::argumentConstant(const clang::FunctionDecl* k, unsigned index) const {
  if (notLaunched(k)) return std::nullopt;
  const auto* v = lookupKernel(argConsts_, k);
  return v && index < v->size() ? (*v)[index] : std::nullopt;
}

bool LaunchIndex::viewStride(const clang::FunctionDecl* k, unsigned index) const {
  if (notLaunched(k)) return false;
  const auto* v = lookupKernel(viewStrides_, k);
  return v && index < v->size() && (*v)[index];
}

const clang::Expr* LaunchIndex::onlyDeadLaunch(const clang::FunctionDecl* k) const {
  if (!k || !onlyDead(k)) return nullptr;
  auto it = deadAt_.find(k->getCanonicalDecl());
  return it == deadAt_.end() ? nullptr : it->second;
}

bool LaunchIndex::onlyDead(const clang::FunctionDecl* k) const {
  const clang::FunctionDecl* c = k->getCanonicalDecl();
  return deadLaunched_.count(c) && !liveLaunched_.count(c);
}

namespace {
// The non-type template arguments of a function template's instantiation (integers, declarations,
// packs flattened), as text to compare; types are left out.
std::string valueArguments(const clang::FunctionDecl* f) {
  std::string out;
  std::function<void(const clang::TemplateArgument&)> add = [&](const clang::TemplateArgument& a) {
    switch (a.getKind()) {
      case clang::TemplateArgument::Integral: out += "i" + llvm::toString(a.getAsIntegral(), 10) + ","; break;
      case clang::TemplateArgument::Declaration: out += fmt::format("d{},", static_cast<const void*>(a.getAsDecl()->getCanonicalDecl())); break;
      case clang::TemplateArgument::NullPtr: out += "n,"; break;
      case clang::TemplateArgument::Pack:
        for (const auto& e : a.pack_elements()) add(e);
        break;
      default: break;
    }
  };
  if (const clang::TemplateArgumentList* args = f->getTemplateSpecializationArgs())
    for (const auto& a : args->asArray()) add(a);
  return out;
}
}  // namespace

bool LaunchIndex::otherInstantiationsOnly(const clang::FunctionDecl* k) const {
  const clang::FunctionTemplateDecl* prim = k->getPrimaryTemplate();
  if (!prim) return false;
  auto it = launchedSpecs_.find(prim->getTemplatedDecl()->getCanonicalDecl());
  if (it == launchedSpecs_.end()) return false;
  const std::string mine = valueArguments(k);
  for (const clang::FunctionDecl* f : it->second)
    if (f == k->getCanonicalDecl() || valueArguments(f) == mine) return false;
  return true;
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
  return notLaunched(k) ? nullptr : lookupKernel(shapes_, k);
}

std::vector<LaunchIndex::Shape> LaunchIndex::all(const clang::FunctionDecl* k) const {
  const auto* v = notLaunched(k) ? nullptr : lookupKernel(allShapes_, k);
  return v ? *v : std::vector<Shape>{};
}

const std::string* LaunchIndex::unreadable(const clang::FunctionDecl* k) const {
  return notLaunched(k) ? nullptr : lookupKernel(unreadable_, k);
}

const std::array<unsigned, 3>* LaunchIndex::partialShape(const clang::FunctionDecl* k) const {
  const auto* p = notLaunched(k) ? nullptr : lookupKernel(partial_, k);
  return p && ((*p)[0] || (*p)[1] || (*p)[2]) ? p : nullptr;
}

}  // namespace gpuopt
