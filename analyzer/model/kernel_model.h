// The kernel model: what every thread of one block computes, evaluated over the Clang AST.
// This header is the read-only interface rules use; the pieces behind it live in analyzer/model/:
//   value.h         the per-thread value domain (Value, Mask, LaneDomain)
//   records.h       what the walk records: Access, Branch, Barrier
//   builder.h       the walk (expressions, operators, lvalues, memory, calls, intrinsics, walker .cpp);
//                   private to the model
//   launch_index.h  which block shapes each kernel is launched with (launch_shapes.cpp reads them,
//                   launch_buffers.cpp the host's facts about each buffer argument)
//   races.h         race analysis, a query over the recorded accesses
//   ast_util.h      small AST questions (strip, cooperative-groups types, "real work")
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
#include <set>
#include <string>
#include <vector>

#include "analyzer/model/ast_util.h"
#include "analyzer/model/launch_index.h"
#include "analyzer/model/races.h"
#include "analyzer/model/records.h"
#include "analyzer/model/shapes.h"
#include "analyzer/model/value.h"
#include "analyzer/model/model_options.h"

namespace gpuopt {

namespace model_detail {
class Builder;
}

class KernelModel {
 public:
  // The kernel under a block shape the code or the user gives: `shape` (one of the kernel's launch
  // shapes, LaunchIndex::all), else the first launch found, else --block-dim for this kernel or for
  // every kernel (a launch in the code wins over --block-dim). Without any of them, the primary
  // plausible shape (see shapeFacts; the engine evaluates the others with buildGuess).
  static std::unique_ptr<KernelModel> build(const clang::FunctionDecl* kernel, clang::ASTContext& ctx,
                                            const ModelOptions& opts, const LaunchIndex& launches,
                                            const LaunchIndex::Shape* shape = nullptr);
  // Whether the code or the options give the kernel's block shape (a launch, --block-dim).
  static bool shapeGiven(const clang::FunctionDecl* kernel, const ModelOptions& opts, const LaunchIndex& launches);
  // What the code says of the shape when it is not given (axes a launch gives, __launch_bounds__,
  // the axes the kernel reads), and why it is not given, for messages ("no launch of 'k' in this
  // file", "the launch at line 305 has a block size known only at run time").
  static ShapeFacts shapeFacts(const clang::FunctionDecl* kernel, clang::ASTContext& ctx, const ModelOptions& opts,
                               const LaunchIndex& launches, std::string* why);
  // The kernel under a guessed shape (blockAssumed()).
  static std::unique_ptr<KernelModel> buildGuess(const clang::FunctionDecl* kernel, clang::ASTContext& ctx,
                                                 const ModelOptions& opts, const LaunchIndex& launches,
                                                 const ShapeGuess& g, const std::string& why);
  // An array of fixed size was indexed past its end under this shape (a guessed shape too large).
  bool outOfBounds() const { return !outOfBounds_.empty(); }

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
  // Whether the kernel (or a function it calls) reads threadIdx.y / threadIdx.z: it is written for
  // a block of more than one dimension. With an assumed (1-D) shape, which threads share data is
  // then a guess.
  bool usesThreadAxis(int axis) const { return axis >= 0 && axis < 3 && threadAxes_[axis]; }
  // Whether the kernel (or a function it calls) reads blockIdx along `axis`.
  bool usesBlockAxis(int axis) const { return axis >= 0 && axis < 3 && blockAxes_[axis]; }
  // Whether the kernel reads blockIdx along `axis` (1: y, 2: z) only in the block's linear place in
  // its grid (`blockIdx.x + blockIdx.y * gridDim.x`): a 1-D index spread over a 2-D grid, so the
  // axis moves an address only along the direction blockIdx.x does.
  bool blockAxisLinearOnly(int axis) const;
  // A block extent above 1 along `axis` (1: y, 2: z) that nothing the kernel runs reads
  // (readsThreadAxis): its rows repeat one another's work (unused-block-dimension), so pairs of
  // threads that differ only along it are no race (the race queries skip them).
  bool duplicatedAxis(int axis) const { return axis > 0 && axis < 3 && dupAxis_[axis]; }
  // "a 256x1x1 block (assumed; pass --block-dim)" for messages.
  std::string blockDescription() const;
  // Where the block shape was written: the launch's block argument or the __launch_bounds__
  // attribute (invalid when assumed or given with --block-dim).
  clang::SourceRange blockRange() const { return blockRange_; }
  // Blocks in the grid of the launch the shape came from; 0 when unknown (not a compile-time
  // value, or no launch in the file).
  unsigned gridBlocks() const { return gridBlocks_; }
  // The kernel's share of its program's estimated kernel work (LaunchIndex::programShare): 1 when
  // it is not launched from this file's main or is about as heavy as the heaviest kernel.
  const LaunchIndex::ProgramShare& programShare() const { return program_; }
  // gridDim.x/y/z of the launch when known (compile-time values), else 0.
  unsigned gridDim(int axis) const { return axis >= 0 && axis < 3 ? grid_[axis] : 0; }
  // The value the walk gave gridDim along an axis when the launch's is not known (or too small to
  // hold the representative blocks): a stand-in, 0 when the launch's own value was used.
  int64_t gridStandIn(int axis) const;
  // The bytes of the buffer a pointer parameter gets from every launch (LaunchIndex::
  // allocatedBytes), or 0.
  // Whether every launch passes `param` a tensor view's stride (`t.stride(0)`: LaunchIndex::viewStride).
  bool viewStride(const clang::NamedDecl* param) const { return param && viewStrides_.count(param); }
  uint64_t allocatedBytes(const clang::ValueDecl* param) const {
    auto it = paramBytes_.find(param);
    return it == paramBytes_.end() ? 0 : it->second;
  }

  // How much of the kernel the walk analysed: the memory accesses of its source (and the project
  // functions it calls: model/coverage.h) and how many it reached, or decided no thread runs
  // (a branch the shape's threads never take); the others, by line, with the reason.
  struct Unanalysed {
    clang::FileID fid;
    std::string file;
    unsigned firstLine = 0, lastLine = 0;
    std::string function;  // the function they are written in
    std::string reason;
  };
  struct Coverage {
    unsigned total = 0, reached = 0;
    std::vector<Unanalysed> missed;
  };
  Coverage coverage() const;

  const std::vector<Access>& accesses() const { return accesses_; }
  const std::vector<Branch>& branches() const { return branches_; }
  const std::vector<Barrier>& barriers() const { return barriers_; }
  bool truncated() const { return truncated_; }
  // Loops cut by the work bound (model_detail::kMaxLoopWalks): how many, and the first one.
  unsigned loopCuts() const { return loopCuts_; }
  clang::SourceLocation firstLoopCut() const { return firstLoopCut_; }

  // Thread coordinates.
  unsigned tx(unsigned t) const { return t % bx_; }
  unsigned ty(unsigned t) const { return (t / bx_) % by_; }
  unsigned tz(unsigned t) const { return t / (bx_ * by_); }
  std::string threadName(unsigned t) const;  // "thread 5" or "thread (3,1)"

  // Shared-memory races (analyzer/model/races.h), computed on first use.
  using Race = gpuopt::Race;
  const std::vector<Race>& sharedRaces() const;
  // Global-memory races between threads of one block (the same query over global accesses).
  const std::vector<Race>& globalRaces() const;
  // Global-memory races between threads of different blocks (analyzer/model/races.h).
  const std::vector<CrossBlockRace>& crossBlockRaces() const;

 private:
  friend class model_detail::Builder;  // the only writer: fills the records during the walk
  KernelModel() = default;
  static std::unique_ptr<KernelModel> walk(const clang::FunctionDecl* kernel, clang::ASTContext& ctx,
                                           const ModelOptions& opts, const LaunchIndex& launches, unsigned x, unsigned y,
                                           unsigned z, std::string source, bool assumed, int64_t gridBlocks = 0,
                                           const unsigned* grid = nullptr);

  clang::ASTContext* ctx_ = nullptr;
  const clang::FunctionDecl* kernel_ = nullptr;
  unsigned bx_ = 256, by_ = 1, bz_ = 1;
  std::string blockSource_;
  bool blockAssumed_ = false;
  bool threadAxes_[3] = {false, false, false};
  bool blockAxes_[3] = {false, false, false};
  bool dupAxis_[3] = {false, false, false};
  std::vector<unsigned> sameWork_;  // per thread: the thread of its row 0 (duplicated axes), else empty
  std::vector<Access> accesses_;
  std::vector<Branch> branches_;
  std::vector<Barrier> barriers_;
  bool truncated_ = false;
  std::string truncatedBy_;  // why the walk stopped early (empty: its step limit)
  unsigned loopCuts_ = 0;
  clang::SourceLocation firstLoopCut_;
  std::string outOfBounds_;  // an array indexed past its declared size (name), if any
  clang::SourceRange blockRange_;
  unsigned gridBlocks_ = 0;
  LaunchIndex::ProgramShare program_;
  unsigned grid_[3] = {0, 0, 0};
  std::map<const clang::ValueDecl*, uint64_t> paramBytes_;
  std::set<const clang::Expr*> reached_, decided_;                  // coverage(): walked; not run by any thread
  std::map<const clang::Expr*, std::string> unmodelled_;            // library calls touching memory, by callee
  std::map<const clang::FunctionDecl*, std::string> notInlined_;    // functions not walked, and why
  std::set<const clang::ValueDecl*> prefixOfFlags_;
  std::set<const clang::NamedDecl*> viewStrides_;  // integer parameters LaunchIndex::viewStride names
  // Integer parameters every launch passes the same compile-time value (LaunchIndex::argumentConstant).
  std::map<const clang::ValueDecl*, int64_t> paramConsts_;  // parameters LaunchIndex::prefixOfFlags names
  mutable bool racesDone_ = false, globalDone_ = false, crossDone_ = false;
  mutable std::vector<Race> races_, globalRaces_;
  mutable std::vector<CrossBlockRace> crossRaces_;
};

}  // namespace gpuopt
