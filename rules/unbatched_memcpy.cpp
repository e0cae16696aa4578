#include "rules/unbatched_memcpy.h"

#include <clang/AST/ExprCXX.h>
#include <clang/ASTMatchers/ASTMatchFinder.h>
#include <clang/ASTMatchers/ASTMatchers.h>
#include <fmt/format.h>

#include "rules/cost.h"
#include "analyzer/rule/rule_context.h"
#include "rules/host_util.h"

namespace gpuopt {
namespace {

using namespace clang;
using namespace clang::ast_matchers;
using namespace gpuopt::host;

// How far a pointer moves per iteration of `counter`: the counter's multiplier in its offset,
// counted in elements of `elemBytes` bytes. `mulExpr` is set when the multiplier is an expression
// (i * chunk), `mulConst` when it is a constant (i, i * 256).
struct Step {
  const Expr* mulExpr = nullptr;
  int64_t mulConst = 0;
  int64_t elemBytes = 0;
};

const Expr* resolve(ASTContext& ctx, const Expr* e, const VarDecl* counter) {
  for (int i = 0; i < 4 && e; ++i) {
    auto* dre = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts());
    auto* vd = dre ? dyn_cast<VarDecl>(dre->getDecl()) : nullptr;
    if (!vd || vd == counter) break;
    const Expr* init = fixedInit(ctx, vd);
    if (!init) break;
    e = init;
  }
  return e ? e->IgnoreParenImpCasts() : nullptr;
}

bool mentions(const Expr* e, const VarDecl* v) { return refersToAny(e, {v}); }

// The counter's multiplier in an integer offset: i -> 1, i * E -> E, E * i -> E, c + i * E -> E.
bool multiplier(ASTContext& ctx, const Expr* off, const VarDecl* counter, Step& st) {
  off = resolve(ctx, off, counter);
  if (!off) return false;
  if (auto* dre = dyn_cast<DeclRefExpr>(off); dre && dre->getDecl() == counter) {
    st.mulConst = 1;
    return true;
  }
  auto* b = dyn_cast<BinaryOperator>(off);
  if (!b) return false;
  const Expr* l = b->getLHS();
  const Expr* r = b->getRHS();
  if (b->getOpcode() == BO_Add || b->getOpcode() == BO_Sub) {
    bool inL = mentions(resolve(ctx, l, counter), counter), inR = mentions(resolve(ctx, r, counter), counter);
    if (inL == inR || (inR && b->getOpcode() == BO_Sub)) return false;
    return multiplier(ctx, inL ? l : r, counter, st);
  }
  if (b->getOpcode() == BO_Mul) {
    bool inL = mentions(resolve(ctx, l, counter), counter), inR = mentions(resolve(ctx, r, counter), counter);
    if (inL == inR) return false;
    const Expr* with = inL ? l : r;
    const Expr* other = inL ? r : l;
    Step inner;
    if (!multiplier(ctx, with, counter, inner)) return false;
    if (auto k = constInt(ctx, other)) {
      st.mulExpr = inner.mulExpr;
      st.mulConst = inner.mulConst * *k;
    } else if (!inner.mulExpr) {
      st.mulExpr = other->IgnoreParenImpCasts();
      st.mulConst = inner.mulConst;
    } else {
      return false;
    }
    return true;
  }
  return false;
}

int64_t pointeeBytes(ASTContext& ctx, QualType t) {
  QualType p = t->isPointerType() ? t->getPointeeType() : t->isArrayType() ? ctx.getAsArrayType(t)->getElementType() : QualType();
  if (p.isNull() || p->isVoidType() || p->isIncompleteType() || p->isDependentType()) return 0;
  return ctx.getTypeSizeInChars(p).getQuantity();
}

// `&p[off]`, `p + off`, `off + p`: the step of the pointer per iteration.
bool pointerStep(ASTContext& ctx, const Expr* ptr, const VarDecl* counter, Step& st) {
  const Expr* e = resolve(ctx, bare(ptr), counter);
  if (!e) return false;
  e = bare(e);
  if (auto* u = dyn_cast<UnaryOperator>(e); u && u->getOpcode() == UO_AddrOf) {
    auto* a = dyn_cast<ArraySubscriptExpr>(u->getSubExpr()->IgnoreParenImpCasts());
    if (!a) return false;
    st.elemBytes = ctx.getTypeSizeInChars(a->getType()).getQuantity();
    if (mentions(a->getBase(), counter)) return false;
    return multiplier(ctx, a->getIdx(), counter, st);
  }
  if (auto* b = dyn_cast<BinaryOperator>(e); b && b->getOpcode() == BO_Add) {
    const Expr* p = b->getLHS()->getType()->isPointerType() ? b->getLHS() : b->getRHS();
    const Expr* off = p == b->getLHS() ? b->getRHS() : b->getLHS();
    if (mentions(p, counter)) return false;
    st.elemBytes = pointeeBytes(ctx, p->getType());
    return st.elemBytes > 0 && multiplier(ctx, off, counter, st);
  }
  return false;
}

// Whether `bytes` equals the step in bytes (mulConst x mulExpr elements of elemBytes): constants,
// or E * sizeof(T) against a step of E elements of sizeof(T) bytes.
bool sameBytes(ASTContext& ctx, const Expr* bytes, const Step& st, const VarDecl* counter) {
  auto n = constInt(ctx, bytes);
  const int64_t unit = st.mulConst * st.elemBytes;
  if (!st.mulExpr) return n && *n == unit;
  if (auto k = constInt(ctx, st.mulExpr); k && n) return *n == *k * unit;
  const Expr* b = resolve(ctx, bytes, counter);
  const Expr* e = resolve(ctx, st.mulExpr, counter);
  if (unit == 1 && (sameExpr(ctx, b, st.mulExpr) || sameExpr(ctx, b, e))) return true;
  auto* mul = dyn_cast<BinaryOperator>(b);
  if (!mul || mul->getOpcode() != BO_Mul) return false;
  for (auto [count, size] : {std::pair{mul->getLHS(), mul->getRHS()}, std::pair{mul->getRHS(), mul->getLHS()}}) {
    auto sz = constInt(ctx, size);
    if (sz && *sz == unit &&
        (sameExpr(ctx, count, st.mulExpr) || sameExpr(ctx, resolve(ctx, count, counter), e)))
      return true;
  }
  return false;
}

// Consecutive iterations copy adjacent ranges of both buffers: each pointer advances by exactly
// the byte count per iteration of the loop's counter.
bool adjacentRanges(ASTContext& ctx, const CopyInfo& c, const Stmt* loop) {
  const VarDecl* counter = unitCounter(loop);
  if (!counter || !c.bytes || c.rows || !c.host() || !c.device()) return false;
  Step hs;
  if (!pointerStep(ctx, c.host(), counter, hs) || !sameBytes(ctx, c.bytes, hs, counter)) return false;
  if (c.symbol) {
    if (!c.symOffset || isa<CXXDefaultArgExpr>(c.symOffset)) return false;
    Step ds;
    ds.elemBytes = 1;
    ds.mulConst = 1;
    return multiplier(ctx, c.symOffset, counter, ds) && sameBytes(ctx, c.bytes, ds, counter);
  }
  Step ds;
  return pointerStep(ctx, c.device(), counter, ds) && sameBytes(ctx, c.bytes, ds, counter);
}

const char* dirText(Dir d) {
  return d == Dir::HostToDevice ? "host to device" : d == Dir::DeviceToHost ? "device to host" : "between host and device";
}

}  // namespace

void UnbatchedMemcpyRule::checkTranslationUnit(ASTContext& ctx, RuleContext& rc) {
  const int64_t small = static_cast<int64_t>(rc.option(kInfo, "small-bytes", static_cast<double>(kSmallBytes)));
  const CallIndex index(ctx);
  auto copies = match(callExpr(callee(functionDecl(hasAnyName(
                                   "cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2D", "cudaMemcpy2DAsync",
                                   "cudaMemcpyToSymbol", "cudaMemcpyToSymbolAsync", "cudaMemcpyFromSymbol",
                                   "cudaMemcpyFromSymbolAsync"))))
                          .bind("copy"),
                      ctx);
  std::set<std::pair<const Stmt*, const Stmt*>> done;
  for (const auto& node : copies) {
    const auto* call = node.getNodeAs<CallExpr>("copy");
    CopyInfo c;
    if (call->containsErrors() || !describeCopy(ctx, call, c) || c.dir == Dir::Other || !c.bytes) continue;
    for (const LoopSite& site : loopSites(ctx, index, call)) {
      const Stmt* anchor = site.via.empty() ? call : site.via.front();
      if (!rc.inLintedFile(anchor->getBeginLoc()) || !done.insert({anchor, site.loop}).second) continue;
      // A copy made only on some iterations (periodic output, a condition) is not one per iteration.
      if (conditionalIn(ctx, anchor, site.loop)) continue;
      auto events = iterationEvents(ctx, site.loop);
      bool ownEventFound = false, conditional = false, deviceWork = false;
      for (const auto& ev : events) {
        if (ev.call == call && ev.via == site.via) ownEventFound = true, conditional = ev.conditional;
        if (ev.kind == HostEvent::Launch || ev.kind == HostEvent::Library) deviceWork = true;
      }
      if (!ownEventFound || conditional) continue;
      // A loop over GPUs (cudaSetDevice with an argument that changes each iteration): each copy
      // goes to another device, so there is nothing to batch.
      if (const Stmt* body = loopBody(site.loop)) {
        auto vars = loopVaryingVars(site.loop, /*addressTaken=*/false);
        bool perDevice = false;
        for (const auto& m : match(findAll(callExpr(callee(functionDecl(hasName("cudaSetDevice")))).bind("dev")), *body, ctx))
          if (const auto* sd = m.getNodeAs<CallExpr>("dev"); sd->getNumArgs() > 0 && refersToAny(sd->getArg(0), vars))
            perDevice = true;
        if (perDevice) continue;
      }
      // One copy per iteration is needed when the data is produced between copies: a kernel (or a
      // library call) runs in the iteration, or the host writes the buffer being sent.
      if (deviceWork) continue;
      const Expr* hostPtr = c.host() ? throughParams(c.host(), site.via) : nullptr;
      if (c.dir != Dir::DeviceToHost && hostPtr && writesTo(ctx, site.loop, baseVar(hostPtr))) continue;
      if (c.dir == Dir::Default && !c.host()) continue;
      // Copies issued on a stream that changes every iteration are a pipeline's chunks.
      if (c.stream) {
        const Expr* s = throughParams(c.stream, site.via);
        if (refersToAny(s, loopVaryingVars(site.loop))) continue;
      }
      std::optional<int64_t> bytes = copyBytes(ctx, c);
      if (!bytes && site.via.size() > 0 && !c.rows) bytes = constInt(ctx, throughParams(c.bytes, site.via));
      // Small copies count only when they move different data each iteration: the same bytes
      // copied again (a flag polled while a kernel runs) cannot be batched.
      auto varying = loopVaryingVars(site.loop, /*addressTaken=*/false);
      bool moves = refersToAny(throughParams(c.dst, site.via), varying) ||
                   refersToAny(throughParams(c.src, site.via), varying) ||
                   (c.symOffset && refersToAny(throughParams(c.symOffset, site.via), varying));
      bool isSmall = bytes && *bytes < small && moves;
      bool adjacent = site.via.empty() && adjacentRanges(ctx, c, site.loop);
      if (!isSmall && !adjacent) continue;
      std::optional<int64_t> trips = tripCount(ctx, site.loop);
      auto name = [&](const Expr* e) {
        std::string s = spelled(ctx, e);
        return s.empty() ? rc.text(e) : s;
      };
      std::string size = bytes ? bytesText(*bytes) : "'" + name(c.bytes) + "' bytes";
      std::string per = trips ? fmt::format("on each of {} iterations", *trips) : "on every iteration";
      std::string msg;
      if (site.via.empty())
        msg = fmt::format("{} in a loop copies {} {} {}", c.fn, size, dirText(c.dir), per);
      else
        msg = fmt::format("call to '{}' in a loop makes a {} of {} {} {}",
                          site.via.front()->getDirectCallee()->getNameAsString(), c.fn, size, dirText(c.dir), per);
      if (adjacent) {
        std::string total = trips && bytes ? " (" + bytesText(*trips * *bytes) + ")" : "";
        msg += fmt::format(", and consecutive iterations copy adjacent ranges of '{}' and '{}': one copy of the whole "
                           "range{} does the same work",
                           name(host::strip(c.host())), name(c.symbol ? c.dst : host::strip(c.device())), total);
        if (trips && *trips > 1) msg += fmt::format(" without {} of the per-copy latencies", *trips - 1);
      }
      if (isSmall)
        msg += fmt::format("; a copy below {} costs mostly its fixed latency, not its bytes", bytesText(small));
      Diagnostic d = rc.make(kInfo, rc.span(anchor), msg);
      setHostImpact(loopHasDeviceWork(ctx, site.loop), d);
      if (d.impact < 1) {  // a setup loop of many copies still pays every copy's latency once: not demoted
        d.impact = 0.5;
        d.impactText = "a loop without device work (setup): runs once";
      }
      if (!site.via.empty()) d.notes.push_back({rc.span(call), fmt::format("the copy is made here, by '{}'", c.fn)});
      d.notes.push_back({rc.span(SourceRange(site.loop->getBeginLoc(), site.loop->getBeginLoc())),
                         trips ? fmt::format("inside this loop ({} iterations)", *trips) : "inside this loop"});
      if (adjacent)
        d.fixHint = fmt::format("copy the whole range with one {} {} the loop ({} x the per-iteration size), from "
                                "pinned memory",
                                c.async ? c.fn : std::string("cudaMemcpy"),
                                c.dir == Dir::DeviceToHost ? "after" : "before",
                                trips ? std::to_string(*trips) : std::string("iterations"));
      else
        d.fixHint = "pack the pieces into one pinned staging buffer (cudaMallocHost) and move it with one copy, or "
                    "keep the data on the device";
      rc.report(std::move(d));
    }
  }
}

}  // namespace gpuopt
