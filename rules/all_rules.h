// The one list of rules, in the order they are registered and listed.
#pragma once
#include <type_traits>

#include "rules/atomic_contention.h"
#include "rules/bank_conflict.h"
#include "rules/barrier_divergence.h"
#include "rules/alloc_in_loop.h"
#include "rules/compile_error.h"
#include "rules/divergent_branch.h"
#include "rules/double_promotion.h"
#include "rules/dynamic_local_array.h"
#include "rules/global_memory_race.h"
#include "rules/missing_syncthreads.h"
#include "rules/pageable_memcpy.h"
#include "rules/serialized_transfers.h"
#include "rules/partial_warp_block.h"
#include "rules/uncoalesced_access.h"
#include "rules/unbatched_memcpy.h"
#include "rules/unsafe_warp_reduce.h"
#include "rules/unused_block_dimension.h"

namespace gpuopt {

template <class T>
struct RuleTag {
  using type = T;
};

// Calls f(RuleTag<R>{}) for every rule type R.
template <class F>
void forEachRuleType(F&& f) {
  f(RuleTag<DivergentBranchRule>{});
  f(RuleTag<UncoalescedAccessRule>{});
  f(RuleTag<MissingSyncthreadsRule>{});
  f(RuleTag<BankConflictRule>{});
  f(RuleTag<PageableMemcpyRule>{});
  f(RuleTag<UnsafeWarpReduceRule>{});
  f(RuleTag<BarrierDivergenceRule>{});
  f(RuleTag<UnbatchedMemcpyRule>{});
  f(RuleTag<SerializedTransfersRule>{});
  f(RuleTag<AllocInLoopRule>{});
  f(RuleTag<GlobalMemoryRaceRule>{});
  f(RuleTag<AtomicContentionRule>{});
  f(RuleTag<PartialWarpBlockRule>{});
  f(RuleTag<DoublePromotionRule>{});
  f(RuleTag<DynamicLocalArrayRule>{});
  f(RuleTag<UnusedBlockDimensionRule>{});
  f(RuleTag<CompileErrorRule>{});  // the compiler's own errors (reported by the engine)
}

}  // namespace gpuopt
