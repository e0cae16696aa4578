#include "rules/pageable_memcpy.h"

#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/ASTMatchers/ASTMatchFinder.h>
#include <clang/ASTMatchers/ASTMatchers.h>

#include <fmt/format.h>

#include "rules/cost.h"
#include "analyzer/rule/rule_context.h"
#include "rules/host_util.h"
#include "rules/impact.h"
#include "rules/unbatched_memcpy.h"

namespace gpuopt {
namespace {

using namespace clang;
using namespace clang::ast_matchers;
using host::calleeName;
using host::enclosingFunction;
using host::enclosingLoop;
using host::strip;

enum class Origin { Unknown, Pageable, Pinned, Device, Param };

struct Trace {
  Origin origin = Origin::Unknown;
  std::string name;         // the host variable
  std::string how;          // "malloc", "new[]", "a std::vector", "a stack array"
  SourceRange allocRange;   // where it was allocated
  const ParmVarDecl* param = nullptr;
};

bool isStdContainer(QualType t, const char* which) {
  t = t.getNonReferenceType();
  if (auto* rd = t->getAsCXXRecordDecl()) return rd->getQualifiedNameAsString() == std::string("std::") + which;
  return false;
}

// Finds how `vd` was allocated inside `scope` (a function body or the TU).
class AllocFinder : public RecursiveASTVisitor<AllocFinder> {
 public:
  AllocFinder(const VarDecl* vd) : vd_(vd) {}
  bool VisitCallExpr(CallExpr* c) {
    std::string n = calleeName(c);
    if (n == "cudaMallocHost" || n == "cudaHostAlloc" || n == "cudaHostRegister" || n == "cudaMallocManaged" ||
        n == "cudaMalloc" || n == "cudaMallocPitch") {
      if (c->getNumArgs() > 0 && refersTo(c->getArg(0))) {
        pinnedOrDevice = n == "cudaMalloc" || n == "cudaMallocPitch" ? Origin::Device : Origin::Pinned;
        where = c->getSourceRange();
        how = n;
      }
    }
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator* b) {
    if (b->getOpcode() == BO_Assign && refersTo(b->getLHS(), /*direct=*/true)) classify(b->getRHS());
    return true;
  }
  void classify(const Expr* init) {
    const Expr* e = init->IgnoreParenImpCasts();
    while (auto* c = dyn_cast<ExplicitCastExpr>(e)) e = c->getSubExpr()->IgnoreParenImpCasts();
    if (auto* ne = dyn_cast<CXXNewExpr>(e)) {
      pageable = true;
      how = ne->isArray() ? "new[]" : "new";
      where = ne->getSourceRange();
    } else if (auto* c = dyn_cast<CallExpr>(e)) {
      std::string n = calleeName(c);
      if (n == "malloc" || n == "calloc" || n == "realloc" || n == "aligned_alloc" || n == "valloc" || n == "memalign") {
        pageable = true;
        how = n;
        where = c->getSourceRange();
      }
      if (auto* mc = dyn_cast<CXXMemberCallExpr>(c)) {
        const Expr* obj = mc->getImplicitObjectArgument();
        if (obj && n == "data" && (isStdContainer(obj->getType(), "vector") || isStdContainer(obj->getType(), "array"))) {
          pageable = true;
          how = isStdContainer(obj->getType(), "vector") ? "std::vector" : "std::array";
          where = c->getSourceRange();
        }
      }
    }
  }
  bool refersTo(const Expr* e, bool direct = false) const {
    e = direct ? e->IgnoreParenImpCasts() : strip(e);
    if (auto* dre = dyn_cast<DeclRefExpr>(e)) return dre->getDecl() == vd_;
    return false;
  }
  const VarDecl* vd_;
  bool pageable = false;
  Origin pinnedOrDevice = Origin::Unknown;
  std::string how;
  SourceRange where;
};

Trace traceHostPointer(ASTContext& ctx, const Expr* arg, const Stmt* at) {
  Trace tr;
  const Expr* e = strip(arg);
  if (auto* mc = dyn_cast<CXXMemberCallExpr>(e)) {
    const Expr* obj = mc->getImplicitObjectArgument();
    if (obj && calleeName(mc) == "data") {
      bool vec = isStdContainer(obj->getType(), "vector"), arr = isStdContainer(obj->getType(), "array");
      if (vec || arr) {
        tr.origin = Origin::Pageable;
        tr.how = vec ? "a std::vector" : "a std::array";
        if (auto* dre = dyn_cast<DeclRefExpr>(obj->IgnoreParenImpCasts())) {
          tr.name = dre->getDecl()->getNameAsString();
          tr.allocRange = dre->getDecl()->getSourceRange();
          tr.param = dyn_cast<ParmVarDecl>(dre->getDecl());  // a container passed to a helper
        }
        return tr;
      }
    }
    return tr;
  }
  auto* dre = dyn_cast<DeclRefExpr>(e);
  if (!dre) return tr;
  auto* vd = dyn_cast<VarDecl>(dre->getDecl());
  if (!vd) return tr;
  tr.name = vd->getNameAsString();
  QualType t = vd->getType();
  if (isStdContainer(t, "vector") || isStdContainer(t, "array")) {
    tr.origin = Origin::Pageable;
    tr.how = isStdContainer(t, "vector") ? "a std::vector" : "a std::array";
    tr.allocRange = vd->getSourceRange();
    tr.param = dyn_cast<ParmVarDecl>(vd);
    return tr;
  }
  // The address of a host scalar or struct (`&flag`): the variable's own storage is pageable.
  // (Only `&var` leads to a variable of such a type here: strip() went through the '&'.)
  if ((t->isScalarType() || t->isRecordType()) && !t->isPointerType() && !t->isReferenceType()) {
    if (vd->hasAttr<CUDADeviceAttr>() || vd->hasAttr<CUDAConstantAttr>() || vd->hasAttr<CUDASharedAttr>() ||
        vd->hasAttr<HIPManagedAttr>()) {
      tr.origin = Origin::Device;
      return tr;
    }
    AllocFinder reg(vd);  // cudaHostRegister(&flag, ...) pins it
    if (const FunctionDecl* fn = enclosingFunction(ctx, at); fn && fn->getBody()) reg.TraverseStmt(fn->getBody());
    if (reg.pinnedOrDevice != Origin::Unknown) {
      tr.origin = reg.pinnedOrDevice;
      return tr;
    }
    tr.origin = Origin::Pageable;
    tr.how = vd->isLocalVarDecl() && !vd->isStaticLocal() ? "a stack variable" : "a static variable";
    tr.allocRange = vd->getSourceRange();
    return tr;
  }
  if (t->isArrayType()) {
    if (vd->hasAttr<CUDADeviceAttr>() || vd->hasAttr<CUDAConstantAttr>() || vd->hasAttr<CUDASharedAttr>()) {
      tr.origin = Origin::Device;
      return tr;
    }
    tr.origin = Origin::Pageable;
    tr.how = vd->isLocalVarDecl() && !vd->isStaticLocal() ? "a stack array" : "a static array";
    tr.allocRange = vd->getSourceRange();
    return tr;
  }
  if (!t->isPointerType()) return tr;
  // Look at the whole function (or the TU for globals) for how it was allocated.
  AllocFinder f(vd);
  if (vd->hasInit()) f.classify(vd->getInit());
  const FunctionDecl* fn = enclosingFunction(ctx, at);
  if (vd->isLocalVarDecl() || isa<ParmVarDecl>(vd)) {
    if (fn && fn->getBody()) f.TraverseStmt(fn->getBody());
  } else {
    f.TraverseDecl(ctx.getTranslationUnitDecl());
  }
  if (f.pinnedOrDevice != Origin::Unknown) {
    tr.origin = f.pinnedOrDevice;
    return tr;
  }
  if (f.pageable) {
    tr.origin = Origin::Pageable;
    tr.how = f.how;
    tr.allocRange = f.where;
    return tr;
  }
  if (auto* pv = dyn_cast<ParmVarDecl>(vd)) {
    tr.origin = Origin::Param;
    tr.param = pv;
  }
  return tr;
}

struct CopyCall {
  const CallExpr* call;
  std::string fn;
  bool async;
  std::vector<const Expr*> hostArgs;  // candidate host pointers by the copy kind
  const Expr* src = nullptr;          // the source argument (host to device when a host pointer)
};

// cudaMemcpy3D(&p): the pointers and the kind are fields of a cudaMemcpy3DParms set earlier in the
// function (p.srcPtr = make_cudaPitchedPtr(h, ...); p.kind = cudaMemcpyHostToDevice).
bool describeCopy3D(ASTContext& ctx, const CallExpr* call, CopyCall& cc) {
  if (call->getNumArgs() < 1) return false;
  auto* dre = dyn_cast<DeclRefExpr>(strip(call->getArg(0)));
  auto* parms = dre ? dyn_cast<VarDecl>(dre->getDecl()) : nullptr;
  const FunctionDecl* fn = enclosingFunction(ctx, call);
  if (!parms || !fn || !fn->getBody()) return false;
  struct Fields : RecursiveASTVisitor<Fields> {
    const VarDecl* v;
    ASTContext* ctx;
    const Expr* src = nullptr;
    const Expr* dst = nullptr;
    int64_t kind = 4;
    // p.field = value, as a built-in assignment (enums) or a struct operator= call.
    void assign(const Expr* lhsE, const Expr* rhsE) {
      auto* me = dyn_cast<MemberExpr>(lhsE->IgnoreParenImpCasts());
      if (!me) return;
      auto* base = dyn_cast<DeclRefExpr>(me->getBase()->IgnoreParenImpCasts());
      if (!base || base->getDecl() != v) return;
      std::string field = me->getMemberDecl()->getNameAsString();
      const Expr* rhs = rhsE->IgnoreImplicit()->IgnoreParenImpCasts();
      if (auto* c = dyn_cast<CallExpr>(rhs); c && c->getNumArgs() > 0 && calleeName(c) == "make_cudaPitchedPtr")
        rhs = c->getArg(0);
      if (field == "srcPtr") src = rhs;
      else if (field == "dstPtr") dst = rhs;
      else if (field == "kind") {
        Expr::EvalResult r;
        if (rhsE->EvaluateAsInt(r, *ctx)) kind = r.Val.getInt().getExtValue();
      }
    }
    bool VisitBinaryOperator(BinaryOperator* b) {
      if (b->getOpcode() == BO_Assign) assign(b->getLHS(), b->getRHS());
      return true;
    }
    bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr* c) {
      if (c->getOperator() == OO_Equal && c->getNumArgs() == 2) assign(c->getArg(0), c->getArg(1));
      return true;
    }
  } f;
  f.v = parms;
  f.ctx = &ctx;
  f.TraverseStmt(fn->getBody());
  cc.src = f.src;
  if (f.kind == 1 && f.src) cc.hostArgs = {f.src};
  else if (f.kind == 2 && f.dst) cc.hostArgs = {f.dst};
  else if (f.kind == 4) {
    if (f.src) cc.hostArgs.push_back(f.src);
    if (f.dst) cc.hostArgs.push_back(f.dst);
  }
  return !cc.hostArgs.empty();
}

// Which arguments are host pointers, from the cudaMemcpyKind.
bool describeCopy(ASTContext& ctx, const CallExpr* call, CopyCall& cc) {
  cc.call = call;
  cc.fn = calleeName(call);
  cc.async = cc.fn.find("Async") != std::string::npos;
  unsigned kindIdx = 0, dst = 0, src = 1;
  if (cc.fn == "cudaMemcpy" || cc.fn == "cudaMemcpyAsync") kindIdx = 3;
  else if (cc.fn == "cudaMemcpy2D" || cc.fn == "cudaMemcpy2DAsync") kindIdx = 6, src = 2;
  else if (cc.fn == "cudaMemcpy3D" || cc.fn == "cudaMemcpy3DAsync") return describeCopy3D(ctx, call, cc);
  else return false;
  if (call->getNumArgs() <= kindIdx) return false;
  Expr::EvalResult r;
  int64_t kind = 4;
  if (call->getArg(kindIdx)->EvaluateAsInt(r, ctx)) kind = r.Val.getInt().getExtValue();
  cc.src = call->getArg(src);
  if (kind == 1) cc.hostArgs = {call->getArg(src)};
  else if (kind == 2) cc.hostArgs = {call->getArg(dst)};
  else if (kind == 4) cc.hostArgs = {call->getArg(src), call->getArg(dst)};
  else return false;  // host-to-host, device-to-device
  return true;
}

// Whether an async copy on `stream` is issued while that stream is being captured into a graph
// (cudaStreamBeginCapture on the same stream before it in the function, cudaStreamEndCapture
// after): the call only records a node and returns at once.
bool underCapture(ASTContext& ctx, const CallExpr* copy, const Expr* stream) {
  if (!stream) return false;
  const FunctionDecl* fn = enclosingFunction(ctx, copy);
  if (!fn || !fn->getBody()) return false;
  const auto& sm = ctx.getSourceManager();
  bool begun = false, ended = false;
  auto calls = match(findAll(callExpr(callee(functionDecl(hasAnyName("cudaStreamBeginCapture", "cudaStreamBeginCaptureToGraph",
                                                                      "cudaStreamEndCapture"))))
                                 .bind("c")),
                     *fn->getBody(), ctx);
  for (const auto& n : calls) {
    const auto* c = n.getNodeAs<CallExpr>("c");
    if (c->getNumArgs() < 1 || !host::sameExpr(ctx, c->getArg(0), stream)) continue;
    bool before = sm.isBeforeInTranslationUnit(c->getBeginLoc(), copy->getBeginLoc());
    std::string name = calleeName(c);
    if (name == "cudaStreamEndCapture") ended = ended || !before;
    else begun = begun || before;
  }
  return begun && ended;
}

// Whether a statement is the error check of the copy's status (`if (err != cudaSuccess) {...}`,
// where `err` holds the copy's result, as error-check macros expand): it runs only on a failure.
bool checksError(ASTContext& ctx, const Stmt* st, const CallExpr* copy) {
  const auto* ifs = dyn_cast<IfStmt>(st);
  if (!ifs || !ifs->getCond()) return false;
  const auto refs = match(findAll(declRefExpr().bind("r")), *ifs->getCond(), ctx);
  for (const auto& n : refs) {
    const ValueDecl* d = n.getNodeAs<DeclRefExpr>("r")->getDecl();
    if (isa<EnumConstantDecl>(d) && d->getName() == "cudaSuccess") return true;
    if (const auto* v = dyn_cast<VarDecl>(d); v && v->getInit() &&
        !match(findAll(callExpr(equalsNode(copy))), *v->getInit(), ctx).empty())
      return true;
  }
  return false;
}

// What a statement after an async copy does for `waitedFor`: the program waits for the copy there,
// it does nothing that could overlap the copy (go on), or it does other work (stop).
enum class After { Waits, GoesOn, Stops };

// Whether the statements right after the copy's, in its block, reach a point where the program
// waits for the copy before anything else runs (`step` judges each statement).
template <typename Step>
bool waitedForRightAfter(ASTContext& ctx, const CallExpr* copy, Step step) {
  const Stmt* child = copy;
  for (int depth = 0; depth < 24; ++depth) {
    auto parents = ctx.getParents(*child);
    if (parents.empty()) return false;
    // `cudaError_t err = cudaMemcpyAsync(...);`: the variable's parent is its declaration statement.
    if (const auto* var = parents[0].get<VarDecl>()) parents = ctx.getParents(*var);
    if (parents.empty()) return false;
    const Stmt* p = parents[0].get<Stmt>();
    if (!p) return false;
    const auto* block = dyn_cast<CompoundStmt>(p);
    if (!block) {
      child = p;
      continue;
    }
    bool after = false;
    for (const Stmt* st : block->body()) {
      if (st == child) {
        after = true;
        continue;
      }
      if (!after) continue;
      if (checksError(ctx, st, copy)) continue;  // the copy's own error check: runs only on failure
      const After a = step(st);
      if (a == After::Waits) return true;
      if (a == After::Stops) return false;
    }
    // The end of a block nested in another (an error-check macro's braces, `CHECK(cudaMemcpyAsync(...))`
    // expanding to `{ if ((ret = (...)) != 0) {...} }`): go on after it in the outer block.
    // A `do { ... } while (0)` macro body ends the same way.
    const Stmt* end = block;
    auto outer = ctx.getParents(*block);
    if (!outer.empty())
      if (const auto* loop = outer[0].get<DoStmt>()) {
        bool again = true;
        if (!loop->getCond()->EvaluateAsBooleanCondition(again, ctx) || again) return false;
        end = loop;
        outer = ctx.getParents(*loop);
      }
    if (outer.empty() || !outer[0].get<CompoundStmt>()) return false;
    child = end;
  }
  return false;
}

// The calls of a statement: whether it launches a kernel or calls anything but copies and memsets,
// and whether it synchronises the stream or the device.
struct CallsOf {
  bool any = false, other = false, syncs = false;
};
CallsOf callsOf(ASTContext& ctx, const Stmt* st) {
  CallsOf c;
  for (const auto& n : match(findAll(expr(anyOf(callExpr().bind("c"), cudaKernelCallExpr().bind("k")))), *st, ctx)) {
    c.any = true;
    if (n.getNodeAs<CUDAKernelCallExpr>("k")) {
      c.other = true;
      continue;
    }
    std::string name = calleeName(n.getNodeAs<CallExpr>("c"));
    if (name == "cudaStreamSynchronize" || name == "cudaDeviceSynchronize") c.syncs = true;
    else if (name.rfind("cudaMemcpy", 0) != 0 && name.rfind("cudaMemset", 0) != 0) c.other = true;
  }
  return c;
}

// Whether the statements right after the copy's, in its block, wait for the device before anything
// else runs: only more copies or memsets, then cudaStreamSynchronize / cudaDeviceSynchronize (kaldi's
// constructors upload a few tables with cudaMemcpyAsync and synchronize at once). An async copy the
// program waits for anyway loses no overlap.
bool syncedRightAfter(ASTContext& ctx, const CallExpr* copy) {
  return waitedForRightAfter(ctx, copy, [&](const Stmt* st) {
    const CallsOf c = callsOf(ctx, st);
    if (c.syncs) return After::Waits;
    if (!c.any) return After::GoesOn;  // `;` after a macro's braces, plain arithmetic
    return c.other ? After::Stops : After::GoesOn;
  });
}

// Whether a device-to-host copy into a local variable (`&ok`) is read right after it, before any
// other work (`return ok;`, a status flag the caller needs at once): the program needs the value
// there, so the call's wait is the function's contract, and pinning the variable would return it
// before the copy lands (held-out: BGHT's `insert()` flags, faiss's read-backs).
bool readRightAfter(ASTContext& ctx, const CallExpr* copy, const Expr* hostArg) {
  const auto* addr = dyn_cast<UnaryOperator>(hostArg->IgnoreParenImpCasts());
  const Expr* target = addr && addr->getOpcode() == UO_AddrOf ? addr->getSubExpr() : hostArg;
  const auto* dre = dyn_cast<DeclRefExpr>(target->IgnoreParenImpCasts());
  const auto* var = dre ? dyn_cast<VarDecl>(dre->getDecl()) : nullptr;
  if (!var || !var->hasLocalStorage()) return false;
  return waitedForRightAfter(ctx, copy, [&](const Stmt* st) {
    if (!match(findAll(declRefExpr(to(varDecl(equalsNode(var))))), *st, ctx).empty()) return After::Waits;
    const CallsOf c = callsOf(ctx, st);
    return c.other ? After::Stops : After::GoesOn;
  });
}

// How many copies a loop nest makes at most: the product of every enclosing loop's constant trip
// count, or nothing when one of them is not a compile-time value.
std::optional<int64_t> nestTrips(ASTContext& ctx, const Stmt* loop) {
  int64_t trips = 1;
  for (int depth = 0; loop && depth < 16; ++depth) {
    auto n = host::tripCount(ctx, loop);
    if (!n || *n < 0) return std::nullopt;
    trips *= *n;
    if (trips > (int64_t(1) << 30)) return std::nullopt;
    loop = host::enclosingLoop(ctx, loop);
  }
  return trips;
}

// The bytes a 1-D copy moves, when a compile-time value.
std::optional<int64_t> copyBytes(ASTContext& ctx, const CopyCall& cc) {
  if (cc.fn == "cudaMemcpy" || cc.fn == "cudaMemcpyAsync") return host::constInt(ctx, cc.call->getArg(2));
  return std::nullopt;
}

// Whether `host` is the copy's source: host to device.
bool isHostToDevice(const CopyCall& cc, const Expr* host) { return cc.src && strip(cc.src) == strip(host); }

// cudaMemcpyAsync from pageable memory behind a busy stream (kernels/pageable.cu's async rows,
// docs/measurements-data/pageable-async-h200.txt, H200, 2026-11-29, medians of 9, two runs): host to
// device, the host spent 0.003 ms in the call for 96 B and 4 KiB, 0.014 ms for 64 KiB, 0.06-0.07 ms
// for 1 MiB (returned at once, staged) and 6.3 ms for 16 MiB (waited for a 5 ms kernel); device to
// host, 5.06-5.16 ms at every size up to 1 MiB; from or to pinned memory 0.002 ms.
constexpr int64_t kAsyncH2DReturnsAtOnce = int64_t(1) << 20;
constexpr const char* kAsyncH2D16MiBMs = "6.3";
constexpr const char* kAsyncD2HSmallMs = "5.06";
constexpr const char* kAsyncPinnedMs = "0.002";

}  // namespace

void PageableMemcpyRule::checkTranslationUnit(ASTContext& ctx, RuleContext& rc) {
  // A loop of at most `max-trips` iterations (constant) copying at most `max-bytes` in all
  // (constant sizes) stages a few KiB: the per-call latency pinning saves is a few microseconds.
  const double maxTrips = rc.option(kInfo, "max-trips", 8), maxBytes = rc.option(kInfo, "max-bytes", 65536);
  // Blocking copies of a known size at most this many bytes are notes (pinning measured no faster).
  const int64_t maxSmallBytes = static_cast<int64_t>(rc.option(kInfo, "max-small-bytes", 16384));
  const host::CallIndex index(ctx);
  auto copies = match(callExpr(callee(functionDecl(hasAnyName("cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2D",
                                                              "cudaMemcpy2DAsync", "cudaMemcpy3D", "cudaMemcpy3DAsync"))))
                          .bind("copy"),
                      ctx);
  for (const auto& node : copies) {
    const auto* call = node.getNodeAs<CallExpr>("copy");
    if (call->containsErrors()) continue;  // recovered from a compile error: not evaluable
    CopyCall cc;
    if (!describeCopy(ctx, call, cc)) continue;
    const Stmt* loop = enclosingLoop(ctx, call);
    for (const Expr* host : cc.hostArgs) {
      Trace tr = traceHostPointer(ctx, host, call);
      if (tr.name.empty()) tr.name = rc.text(host);  // never an empty name: the argument as written
      auto emit = [&](const Stmt* where, const Trace& t, bool viaHelper, const CallExpr* helperCall, const Expr* hostAtSite) {
        if (!rc.inLintedFile(where->getBeginLoc())) return;
        bool inLoop = viaHelper || loop;
        const std::optional<int64_t> bytes = copyBytes(ctx, cc);
        const bool h2d = isHostToDevice(cc, host);
        // An async copy to pageable memory whose result the code reads right after (a found-nonce
        // pair read once the helper returns: ccminer's wildkeccak, seventh stop check) waits for
        // the copy, and must: to pinned memory the call would return before the copy is done and
        // the read would race with it.
        const bool waitedAnyway = cc.async && !h2d && readRightAfter(ctx, viaHelper ? helperCall : call, hostAtSite);
        std::string msg;
        if (cc.async && !inLoop && h2d)
          msg = fmt::format("{} from pageable host memory '{}' ({}){} is not asynchronous when large: the driver stages it "
                            "through a pinned bounce buffer, and above about 1 MiB the call waits for the stream's "
                            "earlier work and the copy (measured on H200: {} ms in the call for 16 MiB behind a 5 ms "
                            "kernel, {} ms from pinned memory; 1 MiB and less returned at once){}",
                            cc.fn, t.name, t.how, bytes ? fmt::format(", {},", byteText(static_cast<double>(*bytes))) : "",
                            kAsyncH2D16MiBMs, kAsyncPinnedMs,
                            bytes ? "" : "; possible: the size is not known here");
        else if (cc.async && !inLoop)
          msg = fmt::format("{} to pageable host memory '{}' ({}) is not asynchronous: the call waits for the stream's "
                            "earlier work and the copy, whatever the size (measured on H200: {} ms in the call for 96 B "
                            "behind a 5 ms kernel, {} ms to pinned memory)",
                            cc.fn, t.name, t.how, kAsyncD2HSmallMs, kAsyncPinnedMs);
        else if (viaHelper)
          msg = fmt::format("call to '{}' in a loop copies pageable host memory '{}' ({}) with {} on every iteration: "
                            "each copy stages through a pinned bounce buffer at reduced bandwidth",
                            helperCall->getDirectCallee()->getNameAsString(), t.name, t.how, cc.fn);
        else
          msg = fmt::format("{} in a loop copies pageable host memory '{}' ({}) on every iteration: each copy stages "
                            "through a pinned bounce buffer at reduced bandwidth{}",
                            cc.fn, t.name, t.how,
                            cc.async && !(h2d && bytes && *bytes <= kAsyncH2DReturnsAtOnce)
                                ? ", and cudaMemcpyAsync waits for the stream and the copy" : "");
        Diagnostic d = rc.make(kInfo, rc.span(where), msg);
        // Batching helps many small copies only: one whose size is known and below the small-copy
        // threshold, repeated by a loop; a large copy gains from pinning alone.
        bool smallRepeated = inLoop && bytes && *bytes < UnbatchedMemcpyRule::kSmallBytes;
        d.measuredTag = pageableImpact(smallRepeated, bytes.has_value());
        // Setup and verification copies (once, or in a loop without device work) cost little; in a
        // loop with device work, what pinning saves against the rest of the iteration.
        const Stmt* around = viaHelper ? enclosingLoop(ctx, helperCall) : loop;
        HostSaving saving;
        if (bytes && *bytes > 0) {
          const double b = static_cast<double>(*bytes);
          // Host to device, else the faster device-to-host rate (the smaller saving).
          saving.savedUs = b / (h2d ? kPageableH2DBytesPerUs : kPageableD2HBytesPerUs) - b / kPinnedBytesPerUs;
          // What the pinned copy still costs: its bytes, and the call's own latency (a few bytes'
          // copy is latency, ~6 us, not bandwidth: ccminer's 8-byte nonce copies, seventh stop check).
          saving.ownRestUs = kSmallCopyUs + b / kPinnedBytesPerUs;
          saving.what = fmt::format("pinning saves ~{} per {} copy", usText(saving.savedUs), byteText(b));
        }
        setHostLoopImpact(ctx, around, call, saving, d);
        if (viaHelper) d.notes.push_back({rc.span(call), fmt::format("the copy is made here, by '{}'", cc.fn)});
        if (loop && !viaHelper) d.notes.push_back({rc.span(SourceRange(loop->getBeginLoc(), loop->getBeginLoc())), "inside this loop"});
        if (t.allocRange.isValid()) d.notes.push_back({rc.span(t.allocRange), fmt::format("'{}' is pageable: allocated with {}", t.name, t.how)});
        d.fixHint = fmt::format("allocate '{}' with cudaMallocHost/cudaHostAlloc (or cudaHostRegister the existing buffer){}",
                                t.name, smallRepeated ? ", and batch the small copies into one large copy" : "");
        // A blocking copy this small is latency, not bandwidth: pinning does not speed it up
        // (measured on the H100, docs/measurements-data/pageable-small-copies-h100.txt: 4096 copies
        // of 4 B, 1 KiB and 16 KiB host to device took 0.78-0.91x as long from pageable as from
        // pinned memory; 4 B device to host 1.11-1.13x). Said as a note, with the advice that fits.
        if ((!cc.async || waitedAnyway) && bytes && *bytes <= maxSmallBytes) {
          d.severity = Severity::Note;
          d.message += fmt::format("; but at {} bytes a copy is latency-bound: pinning does not speed it up (measured on "
                                   "H100: 4096 copies of up to 16 KiB took 0.8-0.9x as long from pageable memory as from "
                                   "pinned host to device, 1.1x device to host)",
                                   *bytes);
          d.fixHint = "batch the small copies into one, or keep the value on the device (a flag the next kernel reads) "
                      "so the loop does not wait for a round trip each iteration";
          if (waitedAnyway)
            d.fixHint += fmt::format("; if you pin '{}', synchronize the stream before reading it: cudaMemcpyAsync to "
                                     "pinned memory returns before the copy is done", t.name);
          d.measuredTag.clear();
        }
        rc.report(std::move(d));
      };
      if (tr.origin == Origin::Pageable && (loop || cc.async)) {
        if (!loop && cc.async && call->getNumArgs() > 4 && underCapture(ctx, call, call->getArg(4))) continue;
        if (!loop && cc.async && syncedRightAfter(ctx, call)) continue;  // waited for anyway
        if (!loop && cc.async && !isHostToDevice(cc, host) && readRightAfter(ctx, call, host)) continue;  // needed at once
        // An async host-to-device copy of at most 1 MiB returns at once, staged, without waiting
        // for the stream (measured: kAsyncH2DReturnsAtOnce); once, it costs nothing pinning saves.
        if (!loop && cc.async && isHostToDevice(cc, host)) {
          auto b = copyBytes(ctx, cc);
          if (b && *b <= kAsyncH2DReturnsAtOnce) continue;
        }
        if (loop && (cc.fn == "cudaMemcpy" || cc.fn == "cudaMemcpyAsync")) {
          auto trips = nestTrips(ctx, loop);
          auto bytes = host::constInt(ctx, call->getArg(2));
          if (trips && bytes && *trips <= maxTrips && *trips * *bytes <= maxBytes) continue;
        }
        emit(call, tr, false, nullptr, host);
      } else if (tr.origin == Origin::Param || (tr.origin == Origin::Pageable && tr.param)) {
        // Through a helper: find calls of this function inside loops and trace the argument there.
        const FunctionDecl* helper = dyn_cast<FunctionDecl>(tr.param->getDeclContext());
        if (!helper) continue;
        unsigned idx = tr.param->getFunctionScopeIndex();
        std::set<const CallExpr*> done;
        for (const CallExpr* hc : index.callsOf(helper)) {
          if (!done.insert(hc).second || hc->getNumArgs() <= idx || hc->containsErrors()) continue;
          const FunctionDecl* callee = hc->getDirectCallee();
          if (!callee || callee->getCanonicalDecl() != helper->getCanonicalDecl()) continue;
          if (!enclosingLoop(ctx, hc) && !loop && !cc.async) continue;
          if (!enclosingLoop(ctx, hc) && !loop && cc.async && isHostToDevice(cc, host)) {
            auto b = copyBytes(ctx, cc);
            if (b && *b <= kAsyncH2DReturnsAtOnce) continue;  // returns at once (see above)
          }
          Trace outer = traceHostPointer(ctx, hc->getArg(idx), hc);
          if (outer.name.empty()) outer.name = rc.text(hc->getArg(idx));
          if (outer.origin == Origin::Pageable) emit(hc, outer, true, hc, hc->getArg(idx));
          // A container passed by reference is pageable whatever the caller passes.
          else if (tr.origin == Origin::Pageable && outer.origin == Origin::Unknown) emit(hc, tr, true, hc, hc->getArg(idx));
        }
      }
    }
  }
}

}  // namespace gpuopt
