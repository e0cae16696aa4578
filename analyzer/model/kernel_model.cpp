#include "analyzer/model/kernel_model.h"

#include <clang/AST/RecordLayout.h>

#include <clang/AST/RecursiveASTVisitor.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "analyzer/model/builder.h"
#include "analyzer/model/coverage.h"

namespace gpuopt {

namespace {
// Whether `from`'s body calls `to`, directly or through the functions it calls.
bool callsTransitively(const clang::FunctionDecl* from, const clang::FunctionDecl* to) {
  struct Calls : clang::RecursiveASTVisitor<Calls> {
    std::vector<const clang::FunctionDecl*> callees;
    bool VisitCallExpr(clang::CallExpr* c) {
      if (const clang::FunctionDecl* f = c->getDirectCallee()) callees.push_back(f->getCanonicalDecl());
      return true;
    }
  };
  std::set<const clang::FunctionDecl*> seen{from->getCanonicalDecl()};
  std::vector<const clang::FunctionDecl*> todo{from};
  while (!todo.empty() && seen.size() < 512) {
    const clang::FunctionDecl* def = nullptr;
    const clang::FunctionDecl* f = todo.back();
    todo.pop_back();
    if (!f->hasBody(def) || !def) continue;
    Calls v;
    v.TraverseStmt(def->getBody());
    for (const clang::FunctionDecl* c : v.callees) {
      if (c == to->getCanonicalDecl()) return true;
      if (seen.insert(c).second) todo.push_back(c);
    }
  }
  return false;
}
}  // namespace

// The per-kernel --block-dim, by the kernel's name (qualified or not).
static const std::array<unsigned, 3>* kernelBlock(const clang::FunctionDecl* kernel, const ModelOptions& opts) {
  if (opts.kernelBlocks.empty()) return nullptr;
  for (const std::string& n : {kernel->getNameAsString(), kernel->getQualifiedNameAsString()}) {
    auto it = opts.kernelBlocks.find(n);
    if (it != opts.kernelBlocks.end()) return &it->second;
  }
  return nullptr;
}

bool KernelModel::shapeGiven(const clang::FunctionDecl* kernel, const ModelOptions& opts, const LaunchIndex& launches) {
  return launches.find(kernel) || kernelBlock(kernel, opts) || opts.blockDimGiven;
}

std::unique_ptr<KernelModel> KernelModel::build(const clang::FunctionDecl* kernel, clang::ASTContext& ctx,
                                                const ModelOptions& opts, const LaunchIndex& launches,
                                                const LaunchIndex::Shape* shape) {
  if (const LaunchIndex::Shape* s = shape ? shape : launches.find(kernel)) {
    auto m = walk(kernel, ctx, opts, launches, s->x, s->y, s->z, s->where, false, s->gridBlocks, s->grid);
    m->blockRange_ = s->range;
    m->gridBlocks_ = s->gridBlocks;
    return m;
  }
  if (const auto* b = kernelBlock(kernel, opts))
    return walk(kernel, ctx, opts, launches, (*b)[0], (*b)[1], (*b)[2], "--block-dim", false);
  if (opts.blockDimGiven)
    return walk(kernel, ctx, opts, launches, opts.blockX, opts.blockY, opts.blockZ, "--block-dim", false);
  std::string why;
  ShapeFacts f = shapeFacts(kernel, ctx, opts, launches, &why);
  return buildGuess(kernel, ctx, opts, launches, plausibleShapes(f).front(), why);
}

bool KernelModel::blockAxisLinearOnly(int axis) const {
  return usesBlockAxis(axis) && !readsBlockAxisBeyondLinear(kernel_, axis);
}

ShapeFacts KernelModel::shapeFacts(const clang::FunctionDecl* kernel, clang::ASTContext& ctx, const ModelOptions& opts,
                                   const LaunchIndex& launches, std::string* why) {
  ShapeFacts f;
  f.defaultThreads = 256;
  // The axes the code the model sees reads (a call it cannot see into does not make a shape of
  // several dimensions plausible: with it, the rows such a guess adds are never told apart).
  for (int a = 1; a < 3; ++a) {
    f.usesAxis[a] = readsThreadAxis(kernel, a, nullptr, /*unseenRead=*/false);
    f.linearOnly[a] = f.usesAxis[a] && !readsThreadAxis(kernel, a, nullptr, /*unseenRead=*/false, /*skipLinear=*/true);
  }
  std::string reason = fmt::format("no launch of '{}' in this file", kernel->getNameAsString());
  if (const std::string* u = launches.unreadable(kernel)) {
    // (RuleContext merges instantiations whose findings differ only in this launch's place: keep
    // "the launch at ... has a block size known only" in step with rule_context.cpp.)
    reason = "the " + *u + " has a block size known only at run time";
    if (const auto* p = launches.partialShape(kernel)) {
      static const char* names[3] = {"x", "y", "z"};
      std::string given;
      for (int i = 0; i < 3; ++i) {
        f.known[i] = (*p)[i];
        if ((*p)[i]) given += fmt::format("{}{} = {}", given.empty() ? "" : ", ", names[i], (*p)[i]);
      }
      if (!given.empty()) reason += " (it gives " + given + ")";
    }
  }
  if (auto* lb = kernel->getAttr<clang::CUDALaunchBoundsAttr>()) {
    clang::Expr::EvalResult r;
    if (lb->getMaxThreads() && !lb->getMaxThreads()->isValueDependent() && lb->getMaxThreads()->EvaluateAsInt(r, ctx)) {
      int64_t n = r.Val.getInt().getExtValue();
      if (n >= 1 && n <= 1024) {
        f.maxThreads = static_cast<unsigned>(n);
        reason += fmt::format("; __launch_bounds__({}) bounds its thread count, not its shape", n);
      }
    }
  }
  if (why) *why = reason;
  return f;
}

std::unique_ptr<KernelModel> KernelModel::buildGuess(const clang::FunctionDecl* kernel, clang::ASTContext& ctx,
                                                     const ModelOptions& opts, const LaunchIndex& launches,
                                                     const ShapeGuess& g, const std::string& why) {
  auto m = walk(kernel, ctx, opts, launches, g.x, g.y, g.z, "assumed: " + why, true);
  // A 1-D guess that indexes a fixed-size array past its end is too large: the largest smaller one
  // that stays inside every array.
  if (m->outOfBounds() && g.y == 1 && g.z == 1)
    for (unsigned x = g.x / 2; x >= 8; x /= 2) {
      auto c = walk(kernel, ctx, opts, launches, x, 1, 1,
                          "inferred: a larger block would index '" + m->outOfBounds_ + "' past its end; " + why, true);
      if (!c->outOfBounds()) return c;
    }
  return m;
}

// One walk of the kernel over a block of the given shape; values that depend on blockIdx carry
// their values in other blocks along (Value::alt), so each global access knows how its address
// moves from block to block (races between blocks).
std::unique_ptr<KernelModel> KernelModel::walk(const clang::FunctionDecl* kernel, clang::ASTContext& ctx,
                                               const ModelOptions& opts, const LaunchIndex& launches, unsigned x,
                                               unsigned y, unsigned z, std::string source, bool assumed,
                                               int64_t gridBlocks, const unsigned* grid) {
  std::unique_ptr<KernelModel> m(new KernelModel());
  m->ctx_ = &ctx;
  m->kernel_ = kernel;
  for (unsigned i = 0; i < kernel->getNumParams(); ++i)  // the buffers' allocation sizes
    if (uint64_t b = launches.allocatedBytes(kernel, i)) m->paramBytes_[kernel->getParamDecl(i)] = b;
  for (unsigned i = 0; i < kernel->getNumParams(); ++i)
    if (launches.prefixOfFlags(kernel, i)) m->prefixOfFlags_.insert(kernel->getParamDecl(i));
  for (unsigned i = 0; i < kernel->getNumParams(); ++i)
    if (launches.viewStride(kernel, i)) m->viewStrides_.insert(kernel->getParamDecl(i));
  for (unsigned i = 0; i < kernel->getNumParams(); ++i)
    if (auto c = launches.argumentConstant(kernel, i)) m->paramConsts_[kernel->getParamDecl(i)] = *c;
  m->program_ = launches.programShare(kernel);
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
  // Rows (layers) of a shape the kernel cannot tell apart repeat one another's work. Under a
  // guessed shape, an axis the walk never read is one only the guess made longer than 1 (a call the
  // model cannot see, a function pointer, may read it): threads differing only along it are left
  // alone too, as a race between them would depend on the guess (issue 26).
  for (int axis = 1; axis < 3; ++axis)
    m->dupAxis_[axis] = (axis == 1 ? m->by_ : m->bz_) > 1 && !m->threadAxes_[axis] && (assumed || !readsThreadAxis(kernel, axis));
  if (m->dupAxis_[1] || m->dupAxis_[2]) {
    m->sameWork_.resize(m->threads());
    for (unsigned t = 0; t < m->threads(); ++t)
      m->sameWork_[t] = m->tx(t) + m->bx_ * (m->dupAxis_[1] ? 0 : m->ty(t)) + m->bx_ * m->by_ * (m->dupAxis_[2] ? 0 : m->tz(t));
  }
  return m;
}

KernelModel::Coverage KernelModel::coverage() const {
  Coverage c;
  const auto& sm = ctx_->getSourceManager();
  struct Item {
    clang::SourceLocation loc;
    const clang::FunctionDecl* fn;
    bool ok;
    std::string reason;
  };
  std::vector<Item> items;
  for (const SourceAccess& a : sourceAccesses(kernel_, *ctx_)) {
    ++c.total;
    auto um = unmodelled_.find(a.expr);
    bool ok = (reached_.count(a.expr) || decided_.count(a.expr)) && um == unmodelled_.end();
    c.reached += ok;
    std::string reason;
    if (!ok) {
      auto ni = notInlined_.find(a.function ? a.function->getCanonicalDecl() : nullptr);
      // A function only a function that was not walked calls (f10 under f9, past the depth limit):
      // not walked for the same reason.
      if (ni == notInlined_.end() && a.function)
        for (auto it = notInlined_.begin(); it != notInlined_.end() && ni == notInlined_.end(); ++it)
          if (callsTransitively(it->first, a.function)) ni = it;
      if (um != unmodelled_.end() && um->second.rfind("inline PTX ", 0) == 0)
        reason = fmt::format("{} reads or writes memory the model does not evaluate", um->second);
      else if (um != unmodelled_.end())
        reason = fmt::format("'{}' reads or writes memory inside a library call the model does not follow", um->second);
      else if (ni != notInlined_.end())
        reason = fmt::format("'{}' was not walked: {}", a.function->getNameAsString(), ni->second);
      else if (truncated_)
        reason = !truncatedBy_.empty() ? truncatedBy_
                                       : "the walk stopped at its step limit before reaching them (the kernel is too long to walk whole)";
      else
        reason = "no walked path reached them";
    }
    items.push_back({sm.getExpansionLoc(a.expr->getBeginLoc()), a.function, ok, std::move(reason)});
  }
  std::stable_sort(items.begin(), items.end(), [&](const Item& x, const Item& y) {
    return sm.isBeforeInTranslationUnit(x.loc, y.loc);
  });
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].ok) continue;
    Unanalysed u;
    u.fid = sm.getFileID(items[i].loc);
    u.file = sm.getFilename(items[i].loc).str();
    u.firstLine = u.lastLine = sm.getExpansionLineNumber(items[i].loc);
    u.function = items[i].fn ? items[i].fn->getNameAsString() : "";
    u.reason = items[i].reason;
    // A run of unreached accesses of one function, for one reason, with nothing reached between.
    size_t j = i + 1;
    for (; j < items.size() && !items[j].ok && items[j].fn == items[i].fn && items[j].reason == items[i].reason &&
           sm.getFileID(items[j].loc) == sm.getFileID(items[i].loc);
         ++j)
      u.lastLine = sm.getExpansionLineNumber(items[j].loc);
    i = j - 1;
    // Accesses of one line split by reached ones of that line (a sorting network's compare-and-swap
    // unrolled: some calls walked, some past the depth limit): one entry per lines and reason.
    bool same = false;
    for (auto& m : c.missed)
      if (m.fid == u.fid && m.function == u.function && m.reason == u.reason && u.firstLine <= m.lastLine + 1 &&
          m.firstLine <= u.lastLine + 1) {
        m.firstLine = std::min(m.firstLine, u.firstLine);
        m.lastLine = std::max(m.lastLine, u.lastLine);
        same = true;
        break;
      }
    if (!same) c.missed.push_back(std::move(u));
  }
  return c;
}

std::string KernelModel::blockDescription() const {
  std::string shape = by_ == 1 && bz_ == 1 ? fmt::format("{}-thread", bx_)
                                           : bz_ == 1 ? fmt::format("{}x{}", bx_, by_) : fmt::format("{}x{}x{}", bx_, by_, bz_);
  if (blockAssumed_) return fmt::format("a {} block ({}; pass --block-dim {}=X,Y,Z)", shape, blockSource_, kernel_->getNameAsString());
  return fmt::format("a {} block ({})", shape, blockSource_);
}

std::string KernelModel::threadName(unsigned t) const {
  if (by_ == 1 && bz_ == 1) return fmt::format("thread {}", t);
  if (bz_ == 1) return fmt::format("thread ({},{})", tx(t), ty(t));
  return fmt::format("thread ({},{},{})", tx(t), ty(t), tz(t));
}

const std::vector<KernelModel::Race>& KernelModel::sharedRaces() const {
  if (!racesDone_) races_ = findRaces(accesses_, MemSpace::Shared, sameWork_.empty() ? nullptr : &sameWork_);
  racesDone_ = true;
  return races_;
}

const std::vector<KernelModel::Race>& KernelModel::globalRaces() const {
  if (!globalDone_) globalRaces_ = findRaces(accesses_, MemSpace::Global, sameWork_.empty() ? nullptr : &sameWork_);
  globalDone_ = true;
  return globalRaces_;
}

const std::vector<CrossBlockRace>& KernelModel::crossBlockRaces() const {
  if (!crossDone_) crossRaces_ = findCrossBlockRaces(accesses_, barriers_, MemSpace::Global, grid_, blockBlind(kernel_));
  crossDone_ = true;
  return crossRaces_;
}

int64_t KernelModel::gridStandIn(int axis) const {
  int64_t g = gridDim(axis);
  return g > model_detail::kBlockIdxRep + 2 ? 0 : model_detail::kGridDimRep;
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
    if (a.expr && !member && a.instruction.empty() && inner->isScalarType() && a.elemSize && innerSize > 0 &&
        static_cast<int64_t>(a.elemSize) != innerSize) {
      clang::QualType used = a.expr->getType().getUnqualifiedType();
      if (used->isArrayType()) used = ctx.getBaseElementType(used);
      return fmt::format("(({}*){})[{}]", used.getAsString(ctx.getPrintingPolicy()), name, byteAddr / a.elemSize);
    }
  }
  if (vd && (vd->getType()->isConstantArrayType() || vd->getType()->isRecordType()) && byteAddr >= 0) {
    // Through arrays and the members of structs (`lists.first[32]`, `boxes[3].y1`): the element
    // the code names, not a flat index into the object.
    auto& ctx = vd->getASTContext();
    clang::QualType t = vd->getType();
    std::string idx;
    int64_t rem = byteAddr;
    for (int depth = 0; depth < 16; ++depth) {
      if (auto* at = ctx.getAsConstantArrayType(t)) {
        clang::QualType el = at->getElementType();
        int64_t sz = ctx.getTypeSizeInChars(el).getQuantity();
        if (sz <= 0) break;
        idx += fmt::format("[{}]", rem / sz);
        rem %= sz;
        t = el;
        continue;
      }
      const auto* rd = t->getAsRecordDecl();
      if (!rd || !rd->isCompleteDefinition() || rd->isInvalidDecl() || rd->isUnion()) break;
      const clang::ASTRecordLayout& layout = ctx.getASTRecordLayout(rd);
      const clang::FieldDecl* hit = nullptr;
      int64_t hitOff = 0;
      for (const clang::FieldDecl* f : rd->fields()) {
        if (f->isBitField() || f->getType()->isIncompleteType()) continue;
        int64_t off = static_cast<int64_t>(layout.getFieldOffset(f->getFieldIndex()) / 8);
        int64_t sz = ctx.getTypeSizeInChars(f->getType()).getQuantity();
        if (rem >= off && rem < off + sz) hit = f, hitOff = off;
      }
      if (!hit || hit->getName().empty()) break;
      idx += "." + hit->getNameAsString();
      rem -= hitOff;
      t = hit->getType();
    }
    if (vd->getType()->isConstantArrayType() || !idx.empty()) return name + idx;
  }
  unsigned es = a.elemSize ? a.elemSize : 4;
  // An access of inline PTX (a 16-byte cp.async into `extern __shared__ half smem[]`): the element
  // in the units the array is declared in, not in the instruction's width.
  if (!a.instruction.empty())
    if (int64_t sz = declaredElementSize(a); sz > 0) es = static_cast<unsigned>(sz);
  return fmt::format("{}[{}]", name, byteAddr / es);
}

int64_t declaredElementSize(const Access& a) {
  const auto* dd = llvm::dyn_cast_or_null<clang::DeclaratorDecl>(a.base);
  if (!dd) return static_cast<int64_t>(a.elemSize);
  auto& ctx = dd->getASTContext();
  clang::QualType el = dd->getType();
  if (const auto* at = ctx.getAsArrayType(el)) el = ctx.getBaseElementType(at);
  else if (el->isPointerType()) el = el->getPointeeType();
  else return static_cast<int64_t>(a.elemSize);
  if (el.isNull() || el->isIncompleteType() || el->isVoidType() || el->isDependentType()) return static_cast<int64_t>(a.elemSize);
  return ctx.getTypeSizeInChars(el).getQuantity();
}

}  // namespace gpuopt
