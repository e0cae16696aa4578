// Helpers shared by the host rules (pageable-memcpy, unbatched-memcpy, serialized-transfers,
// alloc-in-loop): loops that can repeat, the loops around a call reached through helper functions,
// the CUDA runtime calls of a loop iteration in program order, and what a copy call copies.
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Expr.h>
#include <clang/AST/Stmt.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpuopt::host {

// Through parens, casts, '&', '*', subscripts and pointer arithmetic to the variable (or call)
// that a pointer expression is based on: `&h[i * n] + 4` -> `h`.
const clang::Expr* strip(const clang::Expr* e);
// Parens and casts only.
const clang::Expr* bare(const clang::Expr* e);
std::string calleeName(const clang::CallExpr* c);
// The kernel a launch calls: `k<<<...>>>`, a launch through a function pointer (`(*fp)<<<...>>>`,
// `cudaLaunchKernel((void*)k, ...)`, a pointer variable initialised with a kernel), named by the
// kernel; a pointer passed in as a parameter is named as such ("the kernel 'fn' points to").
// Empty: not found.
std::string launchedKernelName(const clang::CallExpr* launch);
const clang::FunctionDecl* enclosingFunction(clang::ASTContext& ctx, const clang::Stmt* s);
bool isLoop(const clang::Stmt* s);
const clang::Stmt* loopBody(const clang::Stmt* loop);
// Whether a loop can run its body more than once: `do { ... } while (0)` (the error-check macro
// idiom, CHECK(cudaMemcpy(...))) runs it once; a loop whose condition is constant false, never.
bool canRepeat(clang::ASTContext& ctx, const clang::Stmt* loop);
// Whether a loop is a capped retry: its condition is `!done && attempt < N` (N a constant of at most
// 16, the conjuncts in any order) and its body sets `done`. It normally runs once (AMGX's "double
// the workspace and try again" loops); host rules treat its body as straight code.
bool cappedRetry(clang::ASTContext& ctx, const clang::Stmt* loop);
// The innermost loop around `s` inside its function that can run more than once and is not a
// capped retry, or null.
const clang::Stmt* enclosingLoop(clang::ASTContext& ctx, const clang::Stmt* s);
// Whether `s` runs only under a condition inside `loop` (then/else of an `if`, a `case`, one arm
// of `?:` or the right side of `&&`/`||`); the condition of an `if` itself runs every time.
bool conditionalIn(clang::ASTContext& ctx, const clang::Stmt* s, const clang::Stmt* loop);
// Structural equality (parens and implicit casts ignored).
bool sameExpr(clang::ASTContext& ctx, const clang::Expr* a, const clang::Expr* b);
// A constant integer value, if the expression has one.
std::optional<int64_t> constInt(clang::ASTContext& ctx, const clang::Expr* e);
// How many times a `for (i = a; i < b; ++i)` loop runs when a and b are constants. `bound`: at most
// how many, also when the condition is a conjunction with such a bound (`i < 4 && i < n`).
std::optional<int64_t> tripCount(clang::ASTContext& ctx, const clang::Stmt* loop, bool bound = false);
// The counter of `for (... i ...; ...; ++i)` (also i++, i += 1, i = i + 1), or null.
const clang::VarDecl* unitCounter(const clang::Stmt* loop);
// Variables a loop changes from one iteration to the next: declared inside it, or assigned,
// incremented or (with `addressTaken`) passed by address (&v) inside it.
std::set<const clang::VarDecl*> loopVaryingVars(const clang::Stmt* loop, bool addressTaken = true);
// Whether `e` refers to one of `vars`.
bool refersToAny(const clang::Expr* e, const std::set<const clang::VarDecl*>& vars);
// The initialiser of a local variable that its function never assigns again (so the variable
// always holds it), or null.
const clang::Expr* fixedInit(clang::ASTContext& ctx, const clang::VarDecl* vd);
// The source text of an expression as written, also inside a macro argument (CHECK(cudaMalloc(&d,
// n)) names 'd', not the macro call); empty when it cannot be had.
std::string spelled(clang::ASTContext& ctx, const clang::Expr* e);
// "4 bytes", "16 KiB", "1.5 MiB".
std::string bytesText(int64_t bytes);

// The calls of every function of the translation unit's linted code, by callee.
// Built on the first question (a traversal of the whole translation unit, instantiations and
// implicit code included): a rule that finds no call to ask about pays nothing for it.
class CallIndex {
 public:
  explicit CallIndex(clang::ASTContext& ctx) : ctx_(ctx) {}
  const std::vector<const clang::CallExpr*>& callsOf(const clang::FunctionDecl* fd) const;

 private:
  void build() const;
  clang::ASTContext& ctx_;
  mutable bool built_ = false;
  mutable std::map<const clang::FunctionDecl*, std::vector<const clang::CallExpr*>> calls_;
};

// A loop that runs `s` over and over: directly around it, or around a call of the function that
// contains it (through at most three helper levels).
struct LoopSite {
  const clang::Stmt* loop = nullptr;
  std::vector<const clang::CallExpr*> via;  // helper calls from the loop inwards; empty: direct
  // The statement inside the loop's own function that stands for `s`: `s` itself, or via.front().
  const clang::Stmt* anchor() const;
};
std::vector<LoopSite> loopSites(clang::ASTContext& ctx, const CallIndex& index, const clang::Stmt* s,
                                unsigned depth = 3);

// What a cudaMemcpy* call copies.
enum class Dir { HostToDevice, DeviceToHost, Default, Other };
struct CopyInfo {
  const clang::CallExpr* call = nullptr;
  std::string fn;
  bool async = false;
  bool symbol = false;                  // cudaMemcpyToSymbol / FromSymbol
  Dir dir = Dir::Other;
  const clang::Expr* dst = nullptr;     // null for cudaMemcpy3D*
  const clang::Expr* src = nullptr;
  const clang::Expr* bytes = nullptr;   // the byte count (the width for 2D); null for 3D
  const clang::Expr* rows = nullptr;    // 2D: the height
  const clang::Expr* symOffset = nullptr;
  const clang::Expr* stream = nullptr;  // null: none given (the default stream)
  const clang::Expr* host() const { return dir == Dir::HostToDevice ? src : dir == Dir::DeviceToHost ? dst : nullptr; }
  const clang::Expr* device() const { return dir == Dir::HostToDevice ? dst : dir == Dir::DeviceToHost ? src : nullptr; }
};
bool isCopyName(const std::string& fn);
bool describeCopy(clang::ASTContext& ctx, const clang::CallExpr* call, CopyInfo& out);
// The byte count when it is constant (width * height for 2D).
std::optional<int64_t> copyBytes(clang::ASTContext& ctx, const CopyInfo& c);
// Whether a stream argument names the legacy default stream (missing, 0, nullptr, cudaStreamLegacy).
bool isDefaultStream(clang::ASTContext& ctx, const clang::Expr* stream);

// The CUDA work of one loop iteration, in program order, following calls into functions defined
// in the translation unit (at most `depth` levels). Lambdas are not entered.
struct HostEvent {
  // Library: device work or communication through a library (cuBLAS, cuFFT, thrust, NCCL, MPI, ...).
  enum Kind { Copy, Launch, Sync, Alloc, Free, Memset, Library, Call } kind;
  const clang::CallExpr* call = nullptr;
  std::vector<const clang::CallExpr*> via;  // helper calls from the loop body inwards
  const clang::Stmt* nestedLoop = nullptr;  // the outermost loop inside the body around it, if any
  bool conditional = false;                 // only under a condition inside the body
  CopyInfo copy;                            // kind == Copy
  std::string name;                         // the API or kernel name
};
std::vector<HostEvent> iterationEvents(clang::ASTContext& ctx, const clang::Stmt* loop, unsigned depth = 3);
// An expression inside a helper reached through `via` (calls from the loop inwards), with a helper
// parameter replaced by the argument its caller passes (repeatedly, outwards).
const clang::Expr* throughParams(const clang::Expr* e, const std::vector<const clang::CallExpr*>& via);
// The variable an expression stores into or reads from: through strip() and member accesses.
const clang::VarDecl* baseVar(const clang::Expr* e);
// Whether the loop body writes host memory based on `v` (assignments, ++/--, or passing it to a
// function other than a CUDA copy as a pointer or reference to non-const).
bool writesTo(clang::ASTContext& ctx, const clang::Stmt* loop, const clang::VarDecl* v);
// The stream argument of a launch `k<<<g, b, shmem, stream>>>` or cudaLaunchKernel (null: default).
const clang::Expr* launchStream(const clang::CallExpr* launch);

}  // namespace gpuopt::host
