#include "rules/partial_warp_block.h"

#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>
#include <clang/AST/Stmt.h>
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "analyzer/rule/rule_context.h"
#include "rules/cost.h"
#include "analyzer/model/ast_util.h"
#include "rules/rule_util.h"

namespace gpuopt {

namespace {
// `if (threadIdx.x < 100) { work }` in a full block: the first n threads (n not a multiple of 32)
// do real work and the rest of the block nothing, so the warp holding thread n runs that work with
// lanes idle, as a block of n threads would. divergent-branch leaves such a split alone (one warp
// diverges and most lanes take it); this is the same waste as a ragged block, for that code.
bool longWork(const clang::Stmt* s) {
  if (!s) return false;
  if (llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt, clang::CXXForRangeStmt>(s)) return true;
  if (containsCall(s)) return true;
  for (const clang::Stmt* c : s->children())
    if (longWork(c)) return true;
  return false;
}

void checkWorkSplits(const KernelModel& m, RuleContext& rc, const RuleInfo& info) {
  std::set<const clang::Stmt*> done;
  for (const Branch& b : m.branches()) {
    if (b.isLoop || b.inLoop || !b.known || b.data || b.param || b.symbolic || !b.thenWork || b.elseWork) continue;
    if (!llvm::isa<clang::IfStmt>(b.stmt) || !done.insert(b.stmt).second) continue;
    // Long work only: a loop or a call of the program's own functions. A few loads and stores
    // (a table staged into shared memory by the first 49 threads) cost the idle lanes nothing.
    if (!longWork(llvm::cast<clang::IfStmt>(b.stmt)->getThen())) continue;
    if (!rc.inLintedFile(b.stmt->getBeginLoc())) continue;
    // The takers must be a prefix of the active threads, ending inside a warp.
    unsigned n = 0, active = 0;
    bool prefix = true, ended = false;
    for (unsigned t = 0; t < b.active.size(); ++t) {
      if (!b.active[t]) continue;
      ++active;
      bool takes = b.path[t] == 1;
      if (takes && ended) prefix = false;
      if (!takes) ended = true;
      n += takes;
    }
    if (!prefix || n < 32 || n % 32 == 0 || n >= active) continue;
    // Only a split of a block whose threads all reach it (the active threads are 0..active-1).
    if (active != m.threads()) continue;
    unsigned warp = n / 32, lanes = n % 32, idle = 32 - lanes;
    unsigned warpsRunning = warp + 1;
    double share = 100.0 * idle / (warpsRunning * 32.0);
    std::string cond = b.cond ? rc.text(b.cond) : std::string("the condition");
    std::string msg = fmt::format(
        "work split at {} threads, not a multiple of the 32-thread warp: only the first {} threads of the block run "
        "this path ('{}'), so warp {} runs it with {} of 32 lanes idle ({:.0f}% of the lanes of the {} warp{} running "
        "it), as a {}-thread block would{}",
        n, n, cond, warp, idle, share, warpsRunning, warpsRunning == 1 ? "" : "s", n, atContext(b.context));
    if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
    Diagnostic d = rc.make(info, rc.span(b.cond ? static_cast<const clang::Stmt*>(b.cond) : b.stmt), msg);
    // The cost is the idle lanes' share of the lanes running the path (below `min-impact`: a note).
    d.impact = share / 100.0;
    d.impactText = fmt::format("{:.0f}% of the lanes running it idle", share);
    scaleByProgramShare(m, d);
    d.fixHint = fmt::format("split the work at a multiple of 32 threads ({} or {}), or spread it over whole warps "
                            "(a loop with stride blockDim.x)", n / 32 * 32, (n / 32 + 1) * 32);
    rc.report(std::move(d));
  }
}
}  // namespace

namespace {
// Whether a function or one it calls (a few levels deep) calls printf.
bool printsOutput(const clang::FunctionDecl* fn, int depth) {
  if (!fn || depth > 3) return false;
  const clang::FunctionDecl* def = fn->getDefinition();
  if (!def || !def->getBody()) return false;
  bool found = false;
  std::vector<const clang::Stmt*> todo = {def->getBody()};
  while (!todo.empty() && !found) {
    const clang::Stmt* s = todo.back();
    todo.pop_back();
    if (!s) continue;
    if (const auto* ce = llvm::dyn_cast<clang::CallExpr>(s))
      if (const clang::FunctionDecl* callee = ce->getDirectCallee()) {
        if (callee->getName() == "printf" || callee->getName() == "vprintf") return true;
        if (callee != fn && printsOutput(callee, depth + 1)) return true;
      }
    for (const clang::Stmt* c : s->children()) todo.push_back(c);
  }
  return found;
}
}  // namespace

void PartialWarpBlockRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  checkWorkSplits(m, rc, kInfo);
  // Only a shape written in the code: a launch, or the thread count __launch_bounds__ promises
  // (a kernel declared for 100 threads runs 100-thread blocks), not an assumed one.
  unsigned threads = m.threads();
  clang::SourceRange where = m.blockRange();
  bool bounds = false;
  if (m.blockSource().rfind("launch", 0) != 0 || where.isInvalid()) {
    auto* lb = m.kernel()->getAttr<clang::CUDALaunchBoundsAttr>();
    clang::Expr::EvalResult r;
    if (!lb || !lb->getMaxThreads() || lb->getMaxThreads()->isValueDependent() ||
        !lb->getMaxThreads()->EvaluateAsInt(r, m.ast()))
      return;
    int64_t n = r.Val.getInt().getExtValue();
    if (n < 1 || n > 1024) return;
    threads = static_cast<unsigned>(n);
    where = lb->getRange();
    bounds = true;
  }
  if (threads % 32 == 0) return;
  // One thread per block (`<<<1, 1>>>`): a serial helper, an initialiser or a printing demo by
  // design, not a block-size choice; on real code every such finding was noise.
  if (threads == 1) return;
  // A kernel that touches no memory but its own (a printf demonstration of the thread
  // indices, cuda-samples simplePrintf's 2x2x2 block) has no work for the idle lanes to slow down.
  // Only when no parameter can carry an address either (all scalars): the model does not record
  // every access through a pointer member of a struct parameter (HeCBench hadamard's 2-thread
  // instantiations hold real work that way).
  const auto* fn = m.kernel();
  bool scalarParams = std::all_of(fn->param_begin(), fn->param_end(), [](const clang::ParmVarDecl* p) {
    clang::QualType t = p->getType();
    return t->isArithmeticType() || t->isEnumeralType();
  });
  if (scalarParams &&
      std::all_of(m.accesses().begin(), m.accesses().end(), [](const Access& a) { return a.space == MemSpace::Local; }))
    return;
  // Nor does one whose only way to give results besides its own variables is printing (scalar
  // parameters and a printf in it or a function it calls): a demonstration that prints which
  // thread runs (cuda-samples cdpSimplePrint's 2-thread blocks, which also number the blocks
  // with an atomic on a __device__ variable).
  if (scalarParams && printsOutput(fn, 0)) return;
  if (!rc.inLintedFile(where.getBegin())) return;
  unsigned warps = (threads + 31) / 32;
  unsigned idle = warps * 32 - threads;
  double share = 100.0 * idle / (warps * 32.0);
  unsigned down = threads / 32 * 32, up = warps * 32;
  std::string shape = bounds || (m.blockY() == 1 && m.blockZ() == 1) ? fmt::format("{} threads", threads)
                      : fmt::format("{}x{}x{} = {} threads", m.blockX(), m.blockY(), m.blockZ(), threads);
  std::string msg = fmt::format("{} of kernel '{}' has {}, not a multiple of the 32-thread warp: the block runs as {} "
                                "warp{} and the last one has {} of 32 lanes idle ({:.0f}% of the block's lanes do nothing, "
                                "in every block)",
                                bounds ? "__launch_bounds__" : "the block of this launch", m.kernel()->getNameAsString(),
                                shape, warps, warps == 1 ? "" : "s", idle, share);
  Diagnostic d = rc.make(kInfo, rc.span(where), msg);
  d.impact = share / 100.0;  // the block's idle lanes: what the waste costs
  d.impactText = fmt::format("{:.0f}% of the block's lanes idle", share);
  scaleByProgramShare(m, d);
  d.notes.push_back({rc.span(m.kernel()->getLocation()), "kernel declared here"});
  if (down > 0)
    d.fixHint = fmt::format("use a multiple of 32 threads per block ({} or {}) and guard the tail with 'if (i < n)'",
                            down, up);
  else
    d.fixHint = fmt::format("use at least 32 threads per block ({}) and guard the tail with 'if (i < n)'", up);
  // When the block size follows the data (one block per row of `threads` elements, a head size),
  // a padded block leaves the same lanes idle: r rows of work per block fill whole warps (precision
  // sample s5: ggml's fixup kernels launched with DV = 80 threads, HeCBench p4's 6).
  const unsigned r = 32 / std::gcd(threads, 32u);
  if (r > 1 && r * threads <= 1024)
    d.fixHint += fmt::format("; if each block's work is exactly {} elements (the block size follows the data), padding "
                             "leaves the same lanes idle: give each block {} rows of work instead ({} x {} = {} threads, "
                             "{} full warps)",
                             threads, r, r, threads, r * threads, r * threads / 32);
  rc.report(std::move(d));
}

}  // namespace gpuopt
