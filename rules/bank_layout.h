// bank-conflict's fix: a new layout for a 2-D (or deeper) __shared__ array, chosen over every
// access of the array the kernel model recorded, never one that makes an access worse.
//
// The candidates are padding the inner dimension by P elements (`[C + P]`: row i starts P*i
// elements later) and, for a 2-D array whose inner extent is a power of two, an XOR swizzle of the
// columns (element [i][j] stored at [i][j ^ (i % C)], every access rewritten). Each candidate's
// cost is the shared-memory wavefronts all accesses of the array take, summed over the warps of
// the block (an access in a loop counts once per iteration walked), with the addresses the model
// computed moved as the layout moves them. A candidate qualifies when no single access takes more
// wavefronts than today and the total goes down; the one with the lowest total wins (ties: the
// smallest padding, padding before the swizzle). When none qualifies, no fix is offered. A change
// is only offered when every use of the array is a full subscript (`a[i][j]`, no pointer to it,
// no sizeof) in the kernel itself, so that moving elements changes no result.
#pragma once
#include <clang/AST/Decl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/model/kernel_model.h"
#include "analyzer/report/diagnostic.h"
#include "analyzer/rule/rule_context.h"

namespace gpuopt {

struct LayoutChange {
  enum class Kind { None, Pad, Swizzle } kind = Kind::None;
  unsigned pad = 0;               // Pad: elements added to the inner dimension
  uint64_t before = 0, after = 0; // shared-memory wavefronts of all the array's accesses, per block
  uint64_t globalSectors = 0;     // the kernel's global-memory sectors per block (known addresses)
  bool smallGain = false;         // the global traffic outweighs the replays the change removes
  std::string hint;               // the sentence for `fix:`
  std::vector<FixIt> edits;       // empty when no change is offered
};

LayoutChange chooseSharedLayout(const KernelModel& m, const clang::VarDecl* vd, RuleContext& rc);

// Shared-memory wavefronts one warp's access takes at the given per-thread byte addresses: per
// phase of lanes served together (32 lanes for 4-byte words, 16 for 8 bytes, 8 for 16), the most
// distinct 4-byte words any one bank holds, summed over the phases.
unsigned sharedWavefronts(const std::vector<int64_t>& addr, unsigned elemSize, const llvm::SmallVectorImpl<unsigned>& lanes);

}  // namespace gpuopt
