#include "rules/serialized_transfers.h"

#include <clang/ASTMatchers/ASTMatchFinder.h>
#include <clang/ASTMatchers/ASTMatchers.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <fmt/format.h>

#include "rules/cost.h"
#include "analyzer/rule/rule_context.h"
#include "rules/host_util.h"
#include "rules/unbatched_memcpy.h"

namespace gpuopt {
namespace {

using namespace clang;
using namespace clang::ast_matchers;
using namespace gpuopt::host;

std::string functionName(const FunctionDecl* fd) { return fd ? fd->getNameAsString() : std::string("the kernel it calls"); }

// `vars` grown by the variables of `body` initialised or assigned from one of them (plain and
// overloaded assignment), to a fixed point (four rounds); `keep` says which variables may join.
template <class Keep>
void growFrom(const Stmt* body, std::set<const VarDecl*>& vars, Keep keep) {
  struct Flow : RecursiveASTVisitor<Flow> {
    std::set<const VarDecl*>& vars;
    Keep& keep;
    bool grew = false;
    Flow(std::set<const VarDecl*>& v, Keep& k) : vars(v), keep(k) {}
    void add(const VarDecl* v, const Expr* from) {
      if (v && from && keep(v) && refersToAny(from, vars) && vars.insert(v).second) grew = true;
    }
    bool VisitBinaryOperator(BinaryOperator* b) {
      if (b->isAssignmentOp()) add(baseVar(b->getLHS()), b->getRHS());
      return true;
    }
    bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr* c) {
      if (c->isAssignmentOp() && c->getNumArgs() == 2) add(baseVar(c->getArg(0)), c->getArg(1));
      return true;
    }
    bool VisitVarDecl(VarDecl* v) {
      add(v, v->getInit());
      return true;
    }
  };
  for (int round = 0; round < 4 && body; ++round) {
    Flow f(vars, keep);
    f.TraverseStmt(const_cast<Stmt*>(body));
    if (!f.grew) break;
  }
}

// Whether the loop's condition, or a `break` condition in its body, reads `result` (the host buffer
// a copy in the loop fills) or a variable the body computes from it.
bool resultDecidesLoop(ASTContext& ctx, const Stmt* loop, const VarDecl* result) {
  if (!result) return false;
  std::set<const VarDecl*> from{result};
  // Variables assigned (or initialised) from the result inside the body, to a fixed point.
  const Stmt* body = loopBody(loop);
  growFrom(body, from, [](const VarDecl*) { return true; });
  const Expr* cond = nullptr;
  if (const auto* w = dyn_cast<WhileStmt>(loop)) cond = w->getCond();
  else if (const auto* d = dyn_cast<DoStmt>(loop)) cond = d->getCond();
  else if (const auto* f = dyn_cast<ForStmt>(loop)) cond = f->getCond();
  if (cond && refersToAny(cond, from)) return true;
  // `if (...) break;` (or return) directly in the body, not in a nested loop.
  struct Exits : RecursiveASTVisitor<Exits> {
    const std::set<const VarDecl*>& from;
    bool found = false;
    explicit Exits(const std::set<const VarDecl*>& f) : from(f) {}
    bool TraverseForStmt(ForStmt*) { return true; }
    bool TraverseWhileStmt(WhileStmt*) { return true; }
    bool TraverseDoStmt(DoStmt*) { return true; }
    bool TraverseCXXForRangeStmt(CXXForRangeStmt*) { return true; }
    bool TraverseLambdaExpr(LambdaExpr*) { return true; }
    bool VisitIfStmt(IfStmt* i) {
      if (!i->getCond() || !refersToAny(i->getCond(), from)) return true;
      struct Leaves : RecursiveASTVisitor<Leaves> {
        bool found = false;
        bool VisitBreakStmt(BreakStmt*) { return !(found = true); }
        bool VisitReturnStmt(ReturnStmt*) { return !(found = true); }
      };
      for (const Stmt* arm : {i->getThen(), i->getElse()}) {
        Leaves l;
        if (arm) l.TraverseStmt(const_cast<Stmt*>(arm));
        if (l.found) found = true;
      }
      return true;
    }
  } exits(from);
  (void)ctx;
  if (body) exits.TraverseStmt(const_cast<Stmt*>(body));
  return exits.found;
}

// What the launch does with the device buffer a copy in the loop fills (`buf`, a variable of the
// host code): which parameter of the kernel it becomes.
struct BufferUse {
  bool known = false;                   // the launch's arguments and the buffer are visible
  const FunctionDecl* kernel = nullptr;  // its definition
  const ParmVarDecl* param = nullptr;    // null when no argument names the buffer
};
// `buf` and the variables of `body` made from it (`Sys d = {(float4*)d_buf, ...}`, `float* q =
// d_buf + n`), to a fixed point: a launch passing any of them passes the buffer.
std::set<const VarDecl*> derivedFrom(const Stmt* body, const VarDecl* buf) {
  std::set<const VarDecl*> vars{buf};
  // Only what can hold the address: pointers, arrays, structs (`int k = result.first - buffer` is a
  // count, not the buffer: HeCBench remap).
  growFrom(body, vars, [](const VarDecl* v) {
    QualType t = v->getType().getNonReferenceType();
    return t->isPointerType() || t->isArrayType() || t->isRecordType() || t->isUndeducedAutoType();
  });
  return vars;
}

BufferUse bufferUse(ASTContext& ctx, const Stmt* loop, const CallExpr* launch, const std::vector<const CallExpr*>& via,
                    const VarDecl* buf) {
  BufferUse u;
  const auto* kc = dyn_cast_or_null<CUDAKernelCallExpr>(launch);
  // A buffer at namespace scope (a __constant__ or __device__ symbol) is read by name, not passed.
  if (!kc || !buf || !buf->hasLocalStorage()) return u;
  const FunctionDecl* fd = kc->getDirectCallee();
  if (!fd) return u;
  u.known = true;
  const FunctionDecl* def = nullptr;
  if (fd->hasBody(def)) u.kernel = def;
  const FunctionDecl* host = enclosingFunction(ctx, loop);
  std::set<const VarDecl*> vars = host && host->getBody() ? derivedFrom(host->getBody(), buf) : std::set<const VarDecl*>{buf};
  for (unsigned i = 0; i < kc->getNumArgs(); ++i)
    if (refersToAny(throughParams(kc->getArg(i), via), vars)) {
      if (u.kernel && i < u.kernel->getNumParams()) u.param = u.kernel->getParamDecl(i);
      else u.known = false;  // passed, but to a parameter we cannot see
      return u;
    }
  return u;
}

// Whether an index expression of the kernel depends on blockIdx (directly or through local
// variables initialised or assigned from it, a few levels deep): an element of the block's own.
bool fromBlockIdx(const Expr* e, const Stmt* body, int depth = 0) {
  if (!e || depth > 4) return false;
  struct Names : RecursiveASTVisitor<Names> {
    bool block = false;
    std::set<const VarDecl*> locals;
    bool VisitDeclRefExpr(DeclRefExpr* d) {
      if (auto* v = dyn_cast<VarDecl>(d->getDecl())) {
        if (v->getName() == "blockIdx") block = true;
        else if (v->hasLocalStorage() && !isa<ParmVarDecl>(v)) locals.insert(v);
      }
      return true;
    }
  } n;
  n.TraverseStmt(const_cast<Expr*>(e));
  if (n.block) return true;
  for (const VarDecl* v : n.locals) {
    if (v->getInit() && fromBlockIdx(v->getInit(), body, depth + 1)) return true;
    struct Sets : RecursiveASTVisitor<Sets> {
      const VarDecl* v;
      std::vector<const Expr*> rhs;
      bool VisitBinaryOperator(BinaryOperator* b) {
        if (b->isAssignmentOp())
          if (auto* d = dyn_cast<DeclRefExpr>(b->getLHS()->IgnoreParenImpCasts()); d && d->getDecl() == v) rhs.push_back(b->getRHS());
        return true;
      }
    } sets;
    sets.v = v;
    sets.TraverseStmt(const_cast<Stmt*>(body));
    for (const Expr* r : sets.rhs)
      if (fromBlockIdx(r, body, depth + 1)) return true;
  }
  return false;
}

// The first read of `p` in the kernel's body at an index that does not depend on blockIdx
// (`pos[j]` for every j of an all-pairs loop): a chunk of the buffer cannot be processed alone.
// Null when every subscript of `p` in the body depends on blockIdx, or `p` escapes (passed to a
// call, copied, offset), where nothing is said.
const ArraySubscriptExpr* foreignRead(const FunctionDecl* kernel, const ParmVarDecl* p) {
  if (!kernel || !p || !kernel->getBody()) return nullptr;
  struct Uses : RecursiveASTVisitor<Uses> {
    const ParmVarDecl* p;
    const Stmt* body;
    const ArraySubscriptExpr* foreign = nullptr;
    unsigned subscripts = 0, uses = 0;
    bool VisitArraySubscriptExpr(ArraySubscriptExpr* a) {
      if (auto* d = dyn_cast<DeclRefExpr>(a->getBase()->IgnoreParenImpCasts()); d && d->getDecl() == p) {
        ++subscripts;
        if (!foreign && !fromBlockIdx(a->getIdx(), body)) foreign = a;
      }
      return true;
    }
    bool VisitDeclRefExpr(DeclRefExpr* d) {
      if (d->getDecl() == p) ++uses;
      return true;
    }
  } u;
  u.p = p;
  u.body = kernel->getBody();
  u.TraverseStmt(kernel->getBody());
  if (u.uses != u.subscripts) return nullptr;  // used otherwise too: not judged
  return u.foreign;
}

}  // namespace

void SerializedTransfersRule::checkTranslationUnit(ASTContext& ctx, RuleContext& rc) {
  // Copies that are all below the small-copy threshold (a flag, a counter) have nothing to hide
  // behind a kernel; option `small-bytes`, the same default as unbatched-memcpy's.
  const int64_t small =
      static_cast<int64_t>(rc.option(kInfo, "small-bytes", static_cast<double>(UnbatchedMemcpyRule::kSmallBytes)));
  // Loops of host code only: the bodies of host functions are searched, not the kernels' (cheaper
  // than asking every loop of the file for its function through the parent map).
  std::vector<const Stmt*> loops;
  for (const auto& f : match(functionDecl(isDefinition()).bind("f"), ctx)) {
    const FunctionDecl* fn = f.getNodeAs<FunctionDecl>("f");
    if (!fn->hasBody() || fn->hasAttr<CUDAGlobalAttr>() || (fn->hasAttr<CUDADeviceAttr>() && !fn->hasAttr<CUDAHostAttr>()))
      continue;
    for (const auto& node :
         match(findAll(stmt(anyOf(forStmt(), whileStmt(), doStmt(), cxxForRangeStmt())).bind("loop")), *fn->getBody(), ctx))
      loops.push_back(node.getNodeAs<Stmt>("loop"));
  }
  std::set<const Stmt*> done;
  for (const Stmt* loop : loops) {
    if (!done.insert(loop).second || !rc.inLintedFile(loop->getBeginLoc()) || !canRepeat(ctx, loop)) continue;
    auto events = iterationEvents(ctx, loop);
    // Only work the iteration always does, outside loops nested in it (those are judged alone).
    auto counts = [&](const HostEvent& e) { return !e.conditional && !e.nestedLoop; };
    auto big = [&](const HostEvent& e) {
      auto b = copyBytes(ctx, e.copy);
      if (!b && e.copy.bytes && !e.copy.rows) b = constInt(ctx, throughParams(e.copy.bytes, e.via));
      return !b || *b >= small;
    };
    const HostEvent *in = nullptr, *launch = nullptr, *out = nullptr, *sync = nullptr;
    for (const auto& e : events) {
      if (!counts(e)) continue;
      if (e.kind == HostEvent::Copy && e.copy.dir == Dir::HostToDevice && big(e) && !launch && !in) in = &e;
      else if (e.kind == HostEvent::Launch && in && !launch) launch = &e;
      else if (e.kind == HostEvent::Copy && e.copy.dir == Dir::DeviceToHost && big(e) && launch && !out) out = &e;
      else if (e.kind == HostEvent::Sync && !sync) sync = &e;
    }
    if (!in || !launch || !out) continue;
    // A loop the copied-back data decides (`while (changed)`, `if (h[0] == 0) break;`, with
    // `changed` computed from it) runs its iterations one after another whatever the streams: the
    // next launch needs the host to have read this one's result. Nothing to overlap.
    if (resultDecidesLoop(ctx, loop, baseVar(throughParams(out->copy.dst, out->via)))) continue;
    // A copy the kernel does not read (no argument of the launch names its buffer): nothing the
    // kernel waits for, so no chunking to advise (precision sample s5: HeCBench remap).
    const BufferUse use = bufferUse(ctx, loop, launch->call, launch->via, baseVar(throughParams(in->copy.dst, in->via)));
    if (use.known && !use.param) continue;
    const ArraySubscriptExpr* foreign = use.known ? foreignRead(use.kernel, use.param) : nullptr;
    // Streams that change from one iteration to the next already let iterations overlap.
    auto varying = loopVaryingVars(loop);
    auto streamOf = [&](const HostEvent* e) -> const Expr* {
      const Expr* s = e->kind == HostEvent::Launch ? launchStream(e->call) : e->copy.stream;
      return s ? throughParams(s, e->via) : nullptr;
    };
    bool alternate = false;
    for (const HostEvent* e : {in, launch, out})
      if (refersToAny(streamOf(e), varying)) alternate = true;
    if (alternate) continue;
    bool blocking = !in->copy.async || !out->copy.async;
    bool allDefault = isDefaultStream(ctx, streamOf(in)) && isDefaultStream(ctx, streamOf(launch)) &&
                      isDefaultStream(ctx, streamOf(out));
    bool oneStream = true;
    const Expr* first = streamOf(in);
    for (const HostEvent* e : {launch, out})
      if (!(isDefaultStream(ctx, first) && isDefaultStream(ctx, streamOf(e))) && !sameExpr(ctx, first, streamOf(e)))
        oneStream = false;
    std::string how;
    if (blocking)
      how = fmt::format("with blocking {}", !in->copy.async ? in->copy.fn : out->copy.fn);
    else if (allDefault)
      how = "with cudaMemcpyAsync on the default stream, which waits for all other work";
    else if (oneStream && sync)
      how = fmt::format("on the one stream '{}' with a {} every iteration",
                        spelled(ctx, first).empty() ? rc.text(first) : spelled(ctx, first), sync->name);
    else
      continue;
    std::optional<int64_t> trips = tripCount(ctx, loop);
    // The kernel itself, also for a launch through a function pointer or cudaLaunchKernel.
    std::string kernel = launchedKernelName(launch->call);
    if (kernel.empty()) kernel = launch->name.empty() ? functionName(launch->call->getDirectCallee()) : launch->name;
    bool named = kernel.rfind("the kernel", 0) != 0;
    std::string msg = fmt::format(
        "loop copies to the device, launches {} and copies back {}{}: each step waits for the one before, so the "
        "transfers never overlap the kernel and the copy engines idle while it runs",
        named ? "'" + kernel + "'" : kernel, how, trips ? fmt::format(" ({} iterations)", *trips) : std::string());
    Diagnostic d = rc.make(kInfo, rc.span(SourceRange(loop->getBeginLoc(), loop->getBeginLoc())), msg);
    auto where = [&](const HostEvent* e) -> const Stmt* { return e->via.empty() ? e->call : e->via.front(); };
    auto note = [&](const HostEvent* e, std::string text) {
      if (!e->via.empty())
        if (const FunctionDecl* fn = enclosingFunction(ctx, e->call)) text += fmt::format(" (in '{}')", fn->getNameAsString());
      d.notes.push_back({rc.span(e->call), text});
      if (!e->via.empty()) d.notes.push_back({rc.span(where(e)), "reached through this call"});
    };
    note(in, fmt::format("copies to the device here ({})", in->copy.fn));
    note(launch, fmt::format("launches {} here", named ? "'" + kernel + "'" : kernel));
    note(out, fmt::format("copies back here ({})", out->copy.fn));
    if (sync && !blocking && !allDefault) note(sync, fmt::format("waits here ({})", sync->name));
    setHostImpact(true, d);  // the loop launches a kernel every iteration
    if (foreign) {
      // Every block reads elements outside its own (an all-pairs loop, a gather): chunks of the
      // input cannot run alone, so the chunk-per-stream advice does not fit (precision sample s5:
      // Learn-CUDA n-body).
      d.message += fmt::format("; '{}' reads '{}' at indices that do not depend on blockIdx, so a chunk of the copy "
                               "cannot be processed on its own", kernel, rc.text(foreign));
      d.notes.push_back({rc.span(foreign), "read here, at an element every block may need"});
      d.fixHint = "chunking does not fit a kernel that needs the whole input: keep the data on the device between "
                  "iterations when the host does not change it, or overlap the next iteration's copy with this kernel "
                  "(two buffers and two streams: copy input k+1 while kernel k runs), from pinned memory";
      rc.report(std::move(d));
      continue;
    }
    d.fixHint = "split the data into chunks and give each chunk its own non-default stream (cudaStreamCreate; stream[k "
                "% 4]): cudaMemcpyAsync in, kernel, cudaMemcpyAsync out, from pinned memory (cudaMallocHost), and "
                "synchronise once after the loop, so one chunk's copies overlap another's kernel (lecture 000, 2.4)";
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
