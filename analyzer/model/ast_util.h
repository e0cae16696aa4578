// Small questions about the Clang AST that the kernel model asks: what lies under implicit nodes,
// what a cooperative-groups type is, whether a statement does real work.
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Expr.h>
#include <clang/AST/Type.h>

#include <set>
#include <string>

namespace gpuopt {

// The expression under parentheses, cleanups, temporaries, constant wrappers, substituted template
// parameters and no-op implicit casts.
const clang::Expr* strip(const clang::Expr* e);
// Name of the record type of an expression (through pointers / references).
std::string recordName(clang::QualType t);
// The tile size of a cooperative_groups::thread_block_tile<N> (32 when not a tile type).
unsigned tileSizeOf(clang::QualType t);

enum class GroupKind { None, Block, Warp, Grid };
// What kind of cooperative group a type is.
GroupKind groupKind(clang::QualType t);

// Whether a statement calls one of the program's own functions (not intrinsics, cooperative-groups
// accessors or library calls).
bool containsCall(const clang::Stmt* s);

// Calls the kernel model evaluates by name as one memory access at the call (calls.cpp), not by
// walking a body a header may give them: atomics, `__ld*` loads, nvcc's `__nv_atomic_*` built-ins,
// the cache-hinted stores. The count of source accesses (coverage.cpp) takes them alike.
// Inline PTX that reads or writes memory (`ld.global.nc.v4.f32 ... [%4];`, `ldmatrix...`,
// `cp.async...`, `st.shared...`, `atom...`, `red...`): the first such instruction's mnemonic
// (`ldmatrix.sync.aligned.x4.m8n8.shared.b16`) and the operand the statement names as its address
// (`[%N]`; the first input when none is), which the model does not evaluate as an access: the
// coverage counts it, and names it as not analysed. Empty and null otherwise.
struct AsmMemory {
  std::string instruction;
  const clang::Expr* address = nullptr;
  // What the model evaluates of it (walker.cpp), set when the statement holds one memory
  // instruction, unpredicated, whose addressing it reads: an `ld`/`ld.global.nc`/`st`/`ldu` of a
  // type and vector width, an `atom`/`red`, `ldmatrix`/`stmatrix` (`.x1`/`.x2`/`.x4` of 8x8 b16
  // matrices: 16 bytes per lane at the row address of lanes 0-7, 0-15 or 0-31), `cp.async.ca|cg`
  // (a store to shared memory and a load of global memory, 4, 8 or 16 bytes).
  struct Operand {
    int index = -1;      // the asm operand (outputs numbered first), -1 = none
    int64_t offset = 0;  // `[%1+16]`: bytes past it
  };
  bool modelled = false;
  Operand dst;                  // the address it reads or writes (cp.async: the shared destination)
  Operand src;                  // cp.async: the global address it reads
  int sizeOperand = -1;         // cp.async: the operand giving its size (`%2`), when not a literal
  char space = 0;               // 'g' global, 's' shared, 'l' local, 'c' constant, 0 = generic (the pointer's)
  unsigned bytes = 0;           // per lane
  unsigned lanes = 32;          // lanes whose address it uses (ldmatrix .x1: 8)
  bool read = false, write = false, atomic = false;
  bool isVolatile = false;      // `.volatile`, `.cg`/`.cv`/`.wt` (past L1), `.relaxed`/`.acquire`/`.release`
};
AsmMemory asmMemory(const clang::GCCAsmStmt* as);

// The members of a C++ atomic type (cuda::atomic, cuda::atomic_ref, std::atomic) that touch the
// object: load, store, exchange, fetch_*, compare_exchange_*.
bool atomicMemberName(llvm::StringRef name);

enum class NamedAccess { None, Atomic, Load, ScopedAtomic, HintedStore };
NamedAccess namedAccess(const std::string& name, unsigned numArgs);
// Whether a statement does "real work": memory access, call, loop, or several statements.
bool doesRealWork(const clang::Stmt* s);
// Memory operations a thread performs in a statement: each element subscript (`t[z][0][x]` once),
// dereference or `->` once, twice when it is the target of a compound assignment or ++/-- (a read
// and a write); of `c ? a : b` the larger arm; a call of the program's own function counts its
// body (3 levels deep).
unsigned memoryOps(const clang::Stmt* s);
// Whether one path of an if is work that serialises a divergent warp: a loop, at least 3 memory
// operations, or at least 8 statements, counting the bodies of the program's functions it calls (a
// call through a pointer or of a function with no body here counts as a loop). Shorter paths (a
// guarded store, a halo load and store, a register swap, a one-line integer helper) are predicated
// or turned into selects by nvcc, so the other lanes lose nothing.
bool isBranchWork(const clang::Stmt* s, clang::ASTContext& ctx);
// Whether some case of a switch does work: a memory access, a loop, a call of a function that
// does, or a long run of statements. A switch whose cases only pick a value among registers
// (`case 1: return r.y;`, as cuda-samples' shfl_scan selects a member) compiles to selects.
bool switchArmsWork(const clang::SwitchStmt* ss, clang::ASTContext& ctx);
// Whether a statement can leave it other than by falling off its end: return, break, continue,
// goto (not looking into lambdas).
bool hasJump(const clang::Stmt* s);
// The variables a statement assigns (`=`, compound assignment, `++`/`--`), not looking into calls.
std::set<const clang::VarDecl*> assignedVars(const clang::Stmt* s);
// Whether a function's name says it reads a clock, a timer, the SM id or random state (`clock64`,
// `curand_uniform`, `getTime`): two calls with the same arguments need not give the same value.
bool namesClockOrRandom(llvm::StringRef name);
// Whether a kernel computes the same in every block: neither it nor a function it calls (their
// bodies followed, system headers' included) names blockIdx, reads a block or clock register in
// inline PTX (%ctaid, %smid, %clock, %globaltimer), calls a clock or random function, or calls
// through a pointer or a project function whose body is not here.
bool blockBlind(const clang::FunctionDecl* kernel);
// Whether anything the kernel runs (its body and every function it calls, library code included)
// can tell the threads of its block apart along `axis` (1: y, 2: z): threadIdx.y (.z) or threadIdx
// as a whole, a linear rank (cooperative groups' thread_rank, thread_index, a tile's
// meta_group_rank), inline PTX reading %tid, %laneid, %warpid or a lane mask, a call through a
// pointer or of a project function whose body is not here. `atomics`: whether it performs atomics.
// `unseenRead`: whether a call the model cannot see into (a function pointer, a function of the
// project defined in another file) counts as reading the axis (true: the safe answer for rules; the
// shape guess passes false, so code that visibly reads only threadIdx.x is guessed one-dimensional;
// it also leaves out the lane registers of inline PTX, which tell lanes apart by their linear
// place, not by the axis). `skipLinear`: reads inside the block's linear thread index
// (`threadIdx.x + blockDim.x * threadIdx.y`, its z term) do not count: such code works with a 1-D
// block as with any other.
bool readsThreadAxis(const clang::FunctionDecl* kernel, int axis, bool* atomics = nullptr, bool unseenRead = true,
                     bool skipLinear = false);
// Whether the kernel (or a function it calls whose body is here) reads blockIdx.y (axis 1) or
// blockIdx.z (2) other than in the block's linear place in its grid, `blockIdx.x + blockIdx.y *
// gridDim.x` (and its z term: a 1-D index over a 2-D grid, darknet's cuda_gridsize launches).
bool readsBlockAxisBeyondLinear(const clang::FunctionDecl* kernel, int axis);

// A loop that waits for the other blocks of the grid, a hand-written grid barrier: it stores
// nothing to memory, polls memory other blocks write (through a volatile pointer, an atomic, or an
// inline-PTX load) or fences (`__threadfence()`), and exits on a condition over what it read,
// in a function (`fn`) that also performs an atomic (the blocks' arrival count): `do {
// __threadfence(); asm volatile("ld.global.cg.b32 %0, [%1];" ...); } while (retired != 0);`.
bool spinWaitsForGrid(const clang::Stmt* loop, const clang::FunctionDecl* fn);

}  // namespace gpuopt
