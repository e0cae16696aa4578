// What the kernel model records while it walks a kernel, in program order: every memory access,
// every branch and every barrier, each with the threads of the block involved.
#pragma once
#include <clang/AST/Expr.h>
#include <clang/AST/Stmt.h>

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/model/value.h"

namespace gpuopt {

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
  const clang::NamedDecl* strideSrc = nullptr;  // the kernel parameter strideSym came from, if one
  int64_t strideVal = 0;  // strideSym's stand-in value (a product of parameters: 4096 * 4096), 0 if not kept
  std::vector<int64_t> stored;  // value written (when known), per thread
  bool storedKnown = false;
  bool storedSame = false;      // every thread writes the same value
  std::vector<uint64_t> storedTag;  // value numbers of the value written when not known (value.h), per thread
  bool storedBlock = true;           // the value written may differ between blocks (depends on blockIdx)
  unsigned epoch = 0;                // block-barrier interval
  std::vector<unsigned> warpEpoch;   // per warp: warp-level syncs passed
  unsigned seq = 0;                  // program order
  std::string context;               // loop iteration, e.g. "s = 16"
  const clang::FunctionDecl* function = nullptr;  // function the access is written in
  const clang::Expr* callSite = nullptr;  // in a helper: the call in the kernel's own body that reached it
  // Lines of the conditions around it that the model could not decide (data-dependent): the
  // access is recorded for every thread, but some may not perform it.
  std::vector<unsigned> guards;
  // Lines of the guards among them that select a thread by key (`if (rowIdx[e] == pivot)`: a
  // value each thread loaded from its own element equal to one value of the block): with
  // distinct keys (the row indices of a sparse column) at most one thread passes.
  std::vector<unsigned> selectGuards;
  // ... with one value per warp compared (`cols[e] == row`, a row per warp): at most one thread of
  // each warp passes.
  std::vector<unsigned> warpSelectGuards;
  // A store of `x += 0` and the like: per thread, whether it writes back the value it read (empty
  // when no thread does). A read racing with it sees the same value either way.
  std::vector<uint8_t> unchanged;
  // Inside a loop whose trip count the model could not fix (a bound over a parameter or data):
  // the compiler cannot unroll it, so an index that changes between its iterations is a run-time
  // index even when each walked iteration has a known value.
  bool inRuntimeLoop = false;
  bool launchArg = false;  // the address depends on a launch-argument constant (Value::launchArg)
  // Which iteration of the innermost such loop it was recorded in (numbered through the walk), 0
  // outside one: an index that repeats the same addresses in every iteration does not move with it.
  unsigned runtimeIter = 0;
  // A data-dependent index with a known number of possible values (`v & 3`: 4), else 0.
  int64_t dataValues = 0;
  // An address not known per thread (data-dependent): per-thread value numbers of it, 0 = none
  // (empty when no thread has one). Threads with equal numbers touch one address.
  std::vector<uint64_t> addrTag;
  // ... and, when known, each thread's address as a known byte distance from a numbered one
  // (Value::affBase): threads with equal bases touch addresses that far apart.
  std::vector<uint64_t> addrBase;
  std::vector<int64_t> addrOff;
  // A data-dependent address that moves at most this many bytes from one thread to the next (an
  // output position read from a prefix sum of flags), else 0.
  int64_t stepBound = 0;
  // How the address moves with the block index: bytes per +1 of blockIdx.x / blockIdx.y, per
  // thread (from the address's values in other blocks, Value::alt). Only meaningful when
  // `blockLinear` (global memory; the same threads do it in every block; address linear in
  // blockIdx.x).
  std::vector<int64_t> stepX, stepY;
  bool blockLinear = false;
  // The address differs between blocks (it is made from blockIdx, or from a value loaded at a
  // block's own address): Value::block of the address.
  bool addrBlock = false;
  // Under a condition that is the same for every thread of a block but depends on blockIdx
  // (`if (blockIdx.x == 0)`): only some blocks perform it.
  bool blockGuarded = false;
  // The address depends on a kernel parameter's or a uniform load's representative value (one
  // stand-in for a value known only at run time): whether two threads meet there is not decided.
  bool paramAddr = false;
  // ... and how the lanes' addresses differ depends on that stand-in too (Value::paramLanes); when
  // clear, the stand-in is an offset all lanes share (`&smem[3 * tile * d] + lane * 32`).
  bool paramLanes = false;
  const clang::NamedDecl* paramSrc = nullptr;  // the parameter (or uniformly loaded array) it depends on
  // Under a condition only a failed check takes (`if (t[i] != i)`, `if (fabsf(a - b) > tol)` on
  // data): verification code that runs rarely, not the kernel's work.
  bool failureGuard = false;
  // Recorded by threads the model let in although the condition around it (over representative
  // values) let none in (walker.cpp: a guard never hides a body): the mask is a guess.
  bool approxMask = false;
  // Recorded in the second or a later iteration of a loop whose trip count is known only at run
  // time (a bound over a parameter's stand-in or over data): the line of the innermost such loop,
  // else 0. A race that needs this access exists only when that loop runs more than once
  // (`for (b = threadIdx.x; b < count; b += blockDim.x) out[blockIdx.x * 256 + b]` reaches the next
  // block's elements only for count > 256).
  unsigned laterIterLine = 0;
  // The undecided conditions around it that every thread of the block decides alike (a parameter,
  // a uniform load: `if (numCodes % 4 == 0)`), as (walk of the if, 1 then / 2 else): two accesses
  // in different arms of one walk never run in the same block.
  std::vector<std::pair<unsigned, uint8_t>> uniformArms;
  // Per thread: the index is past the bound of the constant array it subscripts (a variable or a
  // member of a struct, outermost dimension), empty when no thread's is. Such a thread's address
  // is not an element of the array: under stand-in values (a loop to a parameter the code bounds
  // elsewhere, `assert(n < 255)`) it lands on the next member, which is not a race on the array.
  std::vector<uint8_t> outside;
  // An access of inline PTX: its instruction (`ldmatrix.sync.aligned.m8n8.x4.shared.b16`,
  // `cp.async.cg.shared.global`), empty for C++ code.
  std::string instruction;
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
  unsigned maxTrips = 0;       // loops: the most iterations a thread ran, when every thread left
                               // before the walk's limit; 0 = not known
  std::string context;
};

struct Barrier {
  const clang::Expr* call = nullptr;
  bool blockLevel = true;  // false: warp-level (__syncwarp, tile.sync(), *_sync intrinsics)
  bool gridLevel = false;  // a grid-wide sync (cooperative groups' grid.sync()): orders blocks too
  std::string name;
  Mask active;             // threads reaching it
  Mask alive;              // threads that have not exited the kernel
  unsigned seq = 0;
  std::string context;
};

// Describes an element of an array in C syntax from a byte offset: "tile[3][4]" or "arr[7]".
std::string elementName(const Access& a, int64_t byteAddr);
// The size of an element of the array or pointer the access is into, as declared (`float* c`: 4;
// `half smem[]`: 2); the access's own size when the base is not a declared array or pointer (a
// member, a loaded pointer) or its element type is not known. An access of another width
// (`FLOAT4(c[i])`, a 16-byte cp.async) differs from it.
int64_t declaredElementSize(const Access& a);

}  // namespace gpuopt
