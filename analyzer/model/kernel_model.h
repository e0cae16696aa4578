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
#include "analyzer/model/value.h"
#include "analyzer/model/model_options.h"

namespace gpuopt {

namespace model_detail {
class Builder;
}

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
  // An assumed block whose launch gave all axes but one (`b.x = 1; b.y = n;`): only that axis's
  // extent is a guess, as in a 1-D kernel's assumed block.
  bool oneAxisGuessed() const { return oneAxisGuessed_; }
  // Whether the kernel (or a function it calls) reads threadIdx.y / threadIdx.z: it is written for
  // a block of more than one dimension. With an assumed (1-D) shape, which threads share data is
  // then a guess.
  bool usesThreadAxis(int axis) const { return axis >= 0 && axis < 3 && threadAxes_[axis]; }
  // "a 256x1x1 block (assumed; pass --block-dim)" for messages.
  std::string blockDescription() const;
  // Where the block shape was written: the launch's block argument or the __launch_bounds__
  // attribute (invalid when assumed or given with --block-dim).
  clang::SourceRange blockRange() const { return blockRange_; }
  // Blocks in the grid of the launch the shape came from; 0 when unknown (not a compile-time
  // value, or no launch in the file).
  unsigned gridBlocks() const { return gridBlocks_; }
  // gridDim.x/y/z of the launch when known (compile-time values), else 0.
  unsigned gridDim(int axis) const { return axis >= 0 && axis < 3 ? grid_[axis] : 0; }
  // The bytes of the buffer a pointer parameter gets from every launch (LaunchIndex::
  // allocatedBytes), or 0.
  uint64_t allocatedBytes(const clang::ValueDecl* param) const {
    auto it = paramBytes_.find(param);
    return it == paramBytes_.end() ? 0 : it->second;
  }

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

  clang::ASTContext* ctx_ = nullptr;
  const clang::FunctionDecl* kernel_ = nullptr;
  unsigned bx_ = 256, by_ = 1, bz_ = 1;
  std::string blockSource_;
  bool blockAssumed_ = false;
  bool oneAxisGuessed_ = false;
  bool threadAxes_[3] = {false, false, false};
  std::vector<Access> accesses_;
  std::vector<Branch> branches_;
  std::vector<Barrier> barriers_;
  bool truncated_ = false;
  unsigned loopCuts_ = 0;
  clang::SourceLocation firstLoopCut_;
  std::string outOfBounds_;  // an array indexed past its declared size (name), if any
  clang::SourceRange blockRange_;
  unsigned gridBlocks_ = 0;
  unsigned grid_[3] = {0, 0, 0};
  std::map<const clang::ValueDecl*, uint64_t> paramBytes_;
  std::set<const clang::ValueDecl*> prefixOfFlags_;  // parameters LaunchIndex::prefixOfFlags names
  mutable bool racesDone_ = false, globalDone_ = false, crossDone_ = false;
  mutable std::vector<Race> races_, globalRaces_;
  mutable std::vector<CrossBlockRace> crossRaces_;
};

}  // namespace gpuopt
