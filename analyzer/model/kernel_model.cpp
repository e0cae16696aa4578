#include "analyzer/model/kernel_model.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyzer/model/builder.h"

namespace gpuopt {

std::unique_ptr<KernelModel> KernelModel::build(const clang::FunctionDecl* kernel, clang::ASTContext& ctx,
                                                const ModelOptions& opts, const LaunchIndex& launches,
                                                const LaunchIndex::Shape* shape) {
  // One walk of the kernel over a block of the given shape; values that depend on blockIdx carry
  // their values in other blocks along (Value::alt), so each global access knows how its address
  // moves from block to block (races between blocks).
  auto walk = [&](unsigned x, unsigned y, unsigned z, std::string source, bool assumed, int64_t gridBlocks = 0,
                  const unsigned* grid = nullptr) {
    std::unique_ptr<KernelModel> m(new KernelModel());
    m->ctx_ = &ctx;
    m->kernel_ = kernel;
    for (unsigned i = 0; i < kernel->getNumParams(); ++i)  // the buffers' allocation sizes
      if (uint64_t b = launches.allocatedBytes(kernel, i)) m->paramBytes_[kernel->getParamDecl(i)] = b;
    for (unsigned i = 0; i < kernel->getNumParams(); ++i)
      if (launches.prefixOfFlags(kernel, i)) m->prefixOfFlags_.insert(kernel->getParamDecl(i));
    m->bx_ = x, m->by_ = y, m->bz_ = z;
    if (m->threads() == 0 || m->threads() > 1024) m->bx_ = 256, m->by_ = 1, m->bz_ = 1;
    m->blockSource_ = std::move(source);
    m->blockAssumed_ = assumed;
    if (grid) std::copy(grid, grid + 3, m->grid_);
    model_detail::Builder b(*m, ctx);
    b.setBlockSteps(opts.blockSteps && !assumed && gridBlocks != 1);
    b.run(kernel);
    if (m->truncated_)  // a walk cut short: steps of a partial walk are not trusted
      for (auto& a : m->accesses_) a.blockLinear = false;
    return m;
  };
  // Precedence (README "Block shapes"): a launch written in the code, then --block-dim (or the
  // configuration's block-dim), then __launch_bounds__, then the assumed default.
  if (const LaunchIndex::Shape* s = shape ? shape : launches.find(kernel)) {
    auto m = walk(s->x, s->y, s->z, s->where, false, s->gridBlocks, s->grid);
    m->blockRange_ = s->range;
    m->gridBlocks_ = s->gridBlocks;
    return m;
  }
  if (!opts.blockDimGiven) {
    if (auto* lb = kernel->getAttr<clang::CUDALaunchBoundsAttr>()) {
      clang::Expr::EvalResult r;
      if (lb->getMaxThreads() && !lb->getMaxThreads()->isValueDependent() && lb->getMaxThreads()->EvaluateAsInt(r, ctx)) {
        auto m = walk(static_cast<unsigned>(std::clamp<int64_t>(r.Val.getInt().getExtValue(), 1, 1024)), 1, 1,
                      "__launch_bounds__", false);
        m->blockRange_ = lb->getRange();
        return m;
      }
    }
  }
  bool assumed = !opts.blockDimGiven;
  std::string source = assumed ? "assumed" : "--block-dim";
  // The launch is in the file but its block size is a run-time value: say so.
  if (const std::string* u = assumed ? launches.unreadable(kernel) : nullptr)
    // (RuleContext merges instantiations whose findings differ only in this launch's place: keep
    // "the launch at ... has a block size known only" in step with rule_context.cpp.)
    source = "assumed: the " + *u + " has a block size known only at run time";
  // Axes the launch gives all the same (`b.x = 1; b.y = n;`): the one left is guessed (256
  // threads, fewer when the known axes would make the block larger than 1024).
  bool oneAxis = false;  // y and z known to be 1: only x is guessed
  if (const auto* p = assumed && !opts.blockDimGiven ? launches.partialShape(kernel) : nullptr) {
    int unknown = 0, axis = -1;
    for (int i = 0; i < 3; ++i)
      if (!(*p)[i]) ++unknown, axis = i;
    unsigned known = 1;
    for (int i = 0; i < 3; ++i) known *= (*p)[i] ? (*p)[i] : 1;
    if (unknown == 1 && known <= 1024) {
      unsigned d[3] = {(*p)[0], (*p)[1], (*p)[2]};
      d[axis] = std::max(1u, std::min(256u, 1024u / known));
      static const char* names[3] = {"x", "y", "z"};
      std::string given;
      for (int i = 0; i < 3; ++i)
        if (i != axis) given += fmt::format("{}{} = {}", given.empty() ? "" : ", ", names[i], d[i]);
      // (Only x unknown with y = z = 1 is the usual guess itself: `k<<<g, n>>>` needs no words.)
      // (It still gets the smaller 1-D guesses below.)
      const bool usual = axis == 0 && d[1] == 1 && d[2] == 1 && d[0] == opts.blockX && opts.blockY == 1 && opts.blockZ == 1;
      if (!usual) {
        auto m = walk(d[0], d[1], d[2], fmt::format("{}; {} from the launch, {} guessed", source, given, names[axis]), true);
        m->oneAxisGuessed_ = true;
        return m;
      }
      oneAxis = true;
    }
  }
  auto m = walk(opts.blockX, opts.blockY, opts.blockZ, source, assumed);
  m->oneAxisGuessed_ = oneAxis;
  // An assumed block that indexes a fixed-size array past its end is probably too large: try
  // smaller 1-D blocks and keep the largest that stays inside every array.
  if (assumed && !m->outOfBounds_.empty() && m->by_ == 1 && m->bz_ == 1) {
    for (unsigned x = m->bx_ / 2; x >= 8; x /= 2) {
      auto c = walk(x, 1, 1, "inferred: a larger block would index '" + m->outOfBounds_ + "' past its end", true);
      c->oneAxisGuessed_ = oneAxis;
      if (c->outOfBounds_.empty()) return c;
    }
  }
  return m;
}

std::string KernelModel::blockDescription() const {
  std::string shape = by_ == 1 && bz_ == 1 ? fmt::format("{}-thread", bx_)
                                           : bz_ == 1 ? fmt::format("{}x{}", bx_, by_) : fmt::format("{}x{}x{}", bx_, by_, bz_);
  if (blockAssumed_ && blockSource_.rfind("inferred", 0) == 0)
    return fmt::format("a {} block ({}; pass --block-dim)", shape, blockSource_);
  if (blockAssumed_ && blockSource_.rfind("assumed:", 0) == 0)
    return fmt::format("a {} block ({}; pass --block-dim)", shape, blockSource_);
  if (blockAssumed_) return fmt::format("a {} block (assumed; pass --block-dim or launch it in this file)", shape);
  return fmt::format("a {} block ({})", shape, blockSource_);
}

std::string KernelModel::threadName(unsigned t) const {
  if (by_ == 1 && bz_ == 1) return fmt::format("thread {}", t);
  if (bz_ == 1) return fmt::format("thread ({},{})", tx(t), ty(t));
  return fmt::format("thread ({},{},{})", tx(t), ty(t), tz(t));
}

const std::vector<KernelModel::Race>& KernelModel::sharedRaces() const {
  if (!racesDone_) races_ = findRaces(accesses_, MemSpace::Shared);
  racesDone_ = true;
  return races_;
}

const std::vector<KernelModel::Race>& KernelModel::globalRaces() const {
  if (!globalDone_) globalRaces_ = findRaces(accesses_, MemSpace::Global);
  globalDone_ = true;
  return globalRaces_;
}

const std::vector<CrossBlockRace>& KernelModel::crossBlockRaces() const {
  if (!crossDone_) crossRaces_ = findCrossBlockRaces(accesses_, barriers_, MemSpace::Global, grid_, blockBlind(kernel_));
  crossDone_ = true;
  return crossRaces_;
}

std::string elementName(const Access& a, int64_t byteAddr) {
  std::string name = a.baseName.empty() ? "memory" : a.baseName;
  const auto* vd = llvm::dyn_cast_or_null<clang::VarDecl>(a.base);
  if (vd && vd->getType()->isArrayType()) {
    auto& ctx = vd->getASTContext();
    // An array the code reads through another type (`extern __shared__ char buf[]` cast to
    // float*): the element in the units of the type the code uses, `((float*)buf)[5]`, not buf's.
    clang::QualType inner = vd->getType();
    while (const auto* at = ctx.getAsArrayType(inner)) inner = at->getElementType();
    int64_t innerSize = inner->isIncompleteType() ? 0 : ctx.getTypeSizeInChars(inner).getQuantity();
    bool member = a.expr && llvm::isa<clang::MemberExpr>(a.expr->IgnoreParenImpCasts());  // a field: not a cast
    if (a.expr && !member && inner->isScalarType() && a.elemSize && innerSize > 0 &&
        static_cast<int64_t>(a.elemSize) != innerSize) {
      clang::QualType used = a.expr->getType().getUnqualifiedType();
      if (used->isArrayType()) used = ctx.getBaseElementType(used);
      return fmt::format("(({}*){})[{}]", used.getAsString(ctx.getPrintingPolicy()), name, byteAddr / a.elemSize);
    }
  }
  if (vd && vd->getType()->isConstantArrayType()) {
    auto& ctx = vd->getASTContext();
    clang::QualType t = vd->getType();
    std::string idx;
    int64_t rem = byteAddr;
    while (auto* at = ctx.getAsConstantArrayType(t)) {
      clang::QualType el = at->getElementType();
      int64_t sz = ctx.getTypeSizeInChars(el).getQuantity();
      if (sz <= 0) break;
      idx += fmt::format("[{}]", rem / sz);
      rem %= sz;
      t = el;
    }
    return name + idx;
  }
  unsigned es = a.elemSize ? a.elemSize : 4;
  return fmt::format("{}[{}]", name, byteAddr / es);
}

}  // namespace gpuopt
