// The kernel model: what every thread of one block computes, evaluated over the Clang AST.
//
// Each integer expression is evaluated for every thread of the assumed block (all warps), under
// an active mask that follows control flow (if/switch/?:, loops, break/continue/return).
// Thread and block indices, constants, locals, loop variables and calls into __device__
// functions are followed. Kernel parameters and blockIdx/gridDim are uniform symbols with
// representative values; values loaded from memory are data (per-thread unless every thread
// loaded the same address). The walk records every memory access (global/shared, address per
// thread), every branch (which threads took it), and every barrier, in program order, with the
// block-barrier interval ("epoch") and per-warp __syncwarp count of each access.
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/model_options.h"

namespace gpuopt {

enum class MemSpace { Global, Shared, Local, Constant, Unknown };
std::string_view memSpaceName(MemSpace s);

using Mask = std::vector<uint8_t>;

// A per-thread value.
struct Value {
  std::vector<int64_t> v;   // one entry per thread of the block
  bool known = false;       // concrete for every active thread
  bool data = false;        // derived from a per-thread memory load (data-dependent)
  bool symbolic = false;    // depends on a uniform symbol's representative value
  bool param = false;       // ... of a kernel parameter or a uniform load (blockIdx/gridDim: symbolic only)
  std::string strideSym;    // uniform symbol scaling a thread-varying term ("height")
  // Pointers.
  bool isPtr = false;
  const clang::ValueDecl* base = nullptr;  // the array / pointer parameter the pointer is into
  std::string baseName;
  MemSpace space = MemSpace::Unknown;
  uint64_t pointee = 0;      // pointee size in bytes
  bool ptrVolatile = false;
  // Cooperative groups: the number of threads of the group this object is (0 = not known).
  unsigned group = 0;
  // The same for every thread, even when not known (a float loaded from one address).
  bool same = false;
};

struct Access {
  const clang::Expr* expr = nullptr;  // the subscript / dereference / member expression
  const clang::ValueDecl* base = nullptr;
  std::string baseName;
  MemSpace space = MemSpace::Unknown;
  bool isRead = false, isWrite = false, isAtomic = false, isVolatile = false;
  unsigned elemSize = 0;
  Mask mask;                  // threads performing it
  std::vector<int64_t> addr;  // byte offset from the base, per thread
  bool known = false, data = false, symbolic = false;
  std::string strideSym;
  std::vector<int64_t> stored;  // value written (when known), per thread
  bool storedKnown = false;
  bool storedSame = false;      // every thread writes the same value
  unsigned epoch = 0;                // block-barrier interval
  std::vector<unsigned> warpEpoch;   // per warp: warp-level syncs passed
  unsigned seq = 0;                  // program order
  std::string context;               // loop iteration, e.g. "s = 16"
  const clang::FunctionDecl* function = nullptr;  // function the access is written in
  // Lines of the conditions around it that the model could not decide (data-dependent): the
  // access is recorded for every thread, but some may not perform it.
  std::vector<unsigned> guards;
};

struct Branch {
  const clang::Stmt* stmt = nullptr;  // IfStmt, ConditionalOperator, SwitchStmt, loop
  const clang::Expr* cond = nullptr;
  Mask active;                 // threads evaluating the condition
  std::vector<int> path;       // per thread: path taken (0 = else/exit, 1 = then/continue, n = case)
  bool known = false, data = false, symbolic = false;
  bool param = false;          // depends on a kernel parameter: bounds guards and the like are not judged
  bool isLoop = false;
  bool inLoop = false;         // inside a loop of the kernel
  bool thenWork = false, elseWork = false;  // the paths do real work
  std::string context;
};

struct Barrier {
  const clang::Expr* call = nullptr;
  bool blockLevel = true;  // false: warp-level (__syncwarp, tile.sync(), *_sync intrinsics)
  std::string name;
  Mask active;             // threads reaching it
  Mask alive;              // threads that have not exited the kernel
  unsigned seq = 0;
  std::string context;
};

// Which launches in the translation unit give each kernel's block shape.
class LaunchIndex {
 public:
  explicit LaunchIndex(clang::ASTContext& ctx);
  struct Shape {
    unsigned x = 0, y = 1, z = 1;
    std::string where;  // "launch at line N"
  };
  // nullptr when no launch of `kernel` with a readable block shape exists.
  const Shape* find(const clang::FunctionDecl* kernel) const;
  // Every distinct readable block shape `kernel` is launched with (the first launch of each).
  std::vector<Shape> all(const clang::FunctionDecl* kernel) const;
  // A launch of `kernel` whose block shape could not be read (a run-time value, a function
  // pointer): "launch at line N", or nullptr.
  const std::string* unreadable(const clang::FunctionDecl* kernel) const;

 private:
  std::map<const clang::FunctionDecl*, Shape> shapes_;
  std::map<const clang::FunctionDecl*, std::string> unreadable_;
  std::map<const clang::FunctionDecl*, std::vector<Shape>> allShapes_;
};

class KernelModel {
 public:
  // `shape`: one of the kernel's launch shapes (LaunchIndex::all) instead of the first found.
  static std::unique_ptr<KernelModel> build(const clang::FunctionDecl* kernel, clang::ASTContext& ctx,
                                            const ModelOptions& opts, const LaunchIndex& launches,
                                            const LaunchIndex::Shape* shape = nullptr);

  const clang::FunctionDecl* kernel() const { return kernel_; }
  clang::ASTContext& ast() const { return *ctx_; }
  unsigned blockX() const { return bx_; }
  unsigned blockY() const { return by_; }
  unsigned blockZ() const { return bz_; }
  unsigned threads() const { return bx_ * by_ * bz_; }
  unsigned warps() const { return (threads() + 31) / 32; }
  // Where the block shape came from: "launch at line 42", "__launch_bounds__", "assumed".
  const std::string& blockSource() const { return blockSource_; }
  bool blockAssumed() const { return blockAssumed_; }
  // "a 256x1x1 block (assumed; pass --block-dim)" for messages.
  std::string blockDescription() const;

  const std::vector<Access>& accesses() const { return accesses_; }
  const std::vector<Branch>& branches() const { return branches_; }
  const std::vector<Barrier>& barriers() const { return barriers_; }
  bool truncated() const { return truncated_; }

  // Thread coordinates.
  unsigned tx(unsigned t) const { return t % bx_; }
  unsigned ty(unsigned t) const { return (t / bx_) % by_; }
  unsigned tz(unsigned t) const { return t / (bx_ * by_); }
  std::string threadName(unsigned t) const;  // "thread 5" or "thread (3,1)"

  // Shared-memory races: two threads touching the same byte in the same barrier interval, at
  // least one writing, not ordered by a warp-level sync. One entry per pair of expressions.
  // Benign and not reported: every thread storing the same value (a shared scalar set by all),
  // and a read by a thread that itself stored that same value there before.
  struct Race {
    const Access* first = nullptr;   // earlier in program order
    const Access* second = nullptr;  // later
    unsigned t1 = 0, t2 = 0;         // thread of first / second
    int64_t byteAddr = 0;            // the element thread t2 touches (bytes from the array base)
    int64_t firstByteAddr = 0;       // the element thread t1 touches
    bool sameWarp = false;
    bool possible = false;           // under a condition the model could not decide
    bool warpSynchronous = false;    // both accesses run in a single warp only
  };
  const std::vector<Race>& sharedRaces() const;

  // Public for the builder.
  clang::ASTContext* ctx_ = nullptr;
  const clang::FunctionDecl* kernel_ = nullptr;
  unsigned bx_ = 256, by_ = 1, bz_ = 1;
  std::string blockSource_;
  bool blockAssumed_ = false;
  std::vector<Access> accesses_;
  std::vector<Branch> branches_;
  std::vector<Barrier> barriers_;
  bool truncated_ = false;
  std::string outOfBounds_;  // an array indexed past its declared size (name), if any
  mutable bool racesDone_ = false;
  mutable std::vector<Race> races_;
};

// Floor division (addresses can be negative when index arithmetic wraps).
inline int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Whether a statement does "real work": memory access, call, loop, or several statements.
bool doesRealWork(const clang::Stmt* s);
bool containsCall(const clang::Stmt* s);

// Describes an element of an array in C syntax from a byte offset: "tile[3][4]" or "arr[7]".
std::string elementName(const Access& a, int64_t byteAddr);

}  // namespace gpuopt
