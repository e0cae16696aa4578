// Launch discovery: one walk of the translation unit records the block shape (and grid) of each
// launch per kernel, and what the buffer facts need (launch_buffers.cpp); block-shape expressions
// are read in launch_shapes.cpp.
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

#include <functional>
#include <set>

namespace gpuopt {

using namespace launch_detail;

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
    // For the buffer facts: cudaMalloc'ed pointers, the calls of each function, every launch.
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
    bool VisitCUDAKernelCallExpr(clang::CUDAKernelCallExpr* call) {
      if (!call->containsErrors() && !call->isInstantiationDependent())
        if (const clang::FunctionDecl* k = call->getDirectCallee()) host.kernelCalls.push_back({k, call});
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

  // Allocation sizes and prefix sums of flags of the buffers each launch passes.
  readBufferFacts(ctx, v.host);
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
