// Host-code helpers: the CUDA work of one loop iteration in program order, through helper
// functions (iterationEvents; see host_util.h).
#include "rules/host_util.h"

#include <clang/AST/DeclCXX.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Lex/Lexer.h>
#include <fmt/format.h>
#include <llvm/ADT/FoldingSet.h>

namespace gpuopt::host {

using namespace clang;

// ---- the work of one iteration ----------------------------------------------------------------

namespace {
bool startsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

struct Walker {
  ASTContext& ctx;
  std::vector<HostEvent> events;
  std::vector<const CallExpr*> via;
  std::set<const FunctionDecl*> active;

  HostEvent::Kind classify(const CallExpr* c, std::string& name, bool& enter) {
    enter = false;
    if (isa<CUDAKernelCallExpr>(c)) {
      name = calleeName(c);
      return HostEvent::Launch;
    }
    const FunctionDecl* fd = c->getDirectCallee();
    name = calleeName(c);
    // A call through a function pointer may launch anything: count it as device work.
    if (!fd && !isa<CXXPseudoDestructorExpr>(c->getCallee()->IgnoreParenImpCasts()) && !c->isTypeDependent()) {
      name = "an indirect call";
      return HostEvent::Library;
    }
    static const std::set<std::string> launches = {"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cudaGraphLaunch",
                                                   "cuLaunchKernel", "cudaLaunchKernelEx"};
    static const std::set<std::string> syncs = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaThreadSynchronize",
                                                "cudaEventSynchronize"};
    static const std::set<std::string> allocs = {"cudaMalloc",      "cudaMallocHost",  "cudaHostAlloc",
                                                 "cudaMallocManaged", "cudaMallocPitch", "cudaMalloc3D",
                                                 "cudaMallocArray", "cudaMalloc3DArray", "cudaHostRegister"};
    static const std::set<std::string> frees = {"cudaFree", "cudaFreeHost", "cudaFreeArray", "cudaHostUnregister"};
    if (launches.count(name)) return HostEvent::Launch;
    if (isCopyName(name)) return HostEvent::Copy;
    if (syncs.count(name)) return HostEvent::Sync;
    if (allocs.count(name)) return HostEvent::Alloc;
    if (frees.count(name)) return HostEvent::Free;
    if (startsWith(name, "cudaMemset")) return HostEvent::Memset;
    std::string q = fd ? fd->getQualifiedNameAsString() : std::string();
    for (const char* p : {"cublas", "cufft", "cusparse", "cusolver", "curandGenerate", "nccl", "cudnn", "thrust::", "cub::",
                          "MPI_"})
      if (startsWith(name, p) || startsWith(q, p)) return HostEvent::Library;
    enter = fd && fd->getDefinition() && fd->getDefinition()->hasBody() && !fd->hasAttr<CUDAGlobalAttr>() &&
            !ctx.getSourceManager().isInSystemHeader(fd->getDefinition()->getLocation());
    return HostEvent::Call;
  }

  void walk(const Stmt* s, const Stmt* nested, bool cond, unsigned depth) {
    if (!s || isa<LambdaExpr>(s)) return;
    if (auto* i = dyn_cast<IfStmt>(s)) {
      walk(i->getInit(), nested, cond, depth);
      if (i->getConditionVariableDeclStmt()) walk(i->getConditionVariableDeclStmt(), nested, cond, depth);
      walk(i->getCond(), nested, cond, depth);
      walk(i->getThen(), nested, true, depth);
      walk(i->getElse(), nested, true, depth);
      return;
    }
    if (auto* sw = dyn_cast<SwitchStmt>(s)) {
      walk(sw->getCond(), nested, cond, depth);
      walk(sw->getBody(), nested, true, depth);
      return;
    }
    if (auto* c = dyn_cast<AbstractConditionalOperator>(s)) {
      walk(c->getCond(), nested, cond, depth);
      walk(c->getTrueExpr(), nested, true, depth);
      walk(c->getFalseExpr(), nested, true, depth);
      return;
    }
    if (auto* b = dyn_cast<BinaryOperator>(s); b && b->isLogicalOp()) {
      walk(b->getLHS(), nested, cond, depth);
      walk(b->getRHS(), nested, true, depth);
      return;
    }
    const Stmt* inner = nested;
    if (!inner && isLoop(s) && canRepeat(ctx, s)) inner = s;
    if (auto* k = dyn_cast<CUDAKernelCallExpr>(s)) {
      for (unsigned a = 0; a < k->getNumArgs(); ++a) walk(k->getArg(a), inner, cond, depth);
    } else {
      for (const Stmt* child : s->children()) walk(child, inner, cond, depth);
    }
    auto* call = dyn_cast<CallExpr>(s);
    if (!call || call->containsErrors()) return;
    HostEvent ev;
    bool enter = false;
    ev.kind = classify(call, ev.name, enter);
    if (ev.kind == HostEvent::Call) {
      const FunctionDecl* def = call->getDirectCallee() ? call->getDirectCallee()->getDefinition() : nullptr;
      if (enter && depth > 0 && def && active.insert(def).second) {
        via.push_back(call);
        walk(def->getBody(), inner, cond, depth - 1);
        via.pop_back();
        active.erase(def);
      }
      return;
    }
    ev.call = call;
    ev.via = via;
    ev.nestedLoop = inner;
    ev.conditional = cond;
    if (ev.kind == HostEvent::Copy) describeCopy(ctx, call, ev.copy);
    events.push_back(std::move(ev));
  }
};
}  // namespace

std::vector<HostEvent> iterationEvents(ASTContext& ctx, const Stmt* loop, unsigned depth) {
  Walker w{ctx, {}, {}, {}};
  w.walk(loopBody(loop), nullptr, false, depth);
  return w.events;
}

}  // namespace gpuopt::host
