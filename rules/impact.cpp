#include "rules/impact.h"

#include <map>

namespace gpuopt {

std::string measuredImpact(std::string_view id) {
  // From docs/measurements.md: NVIDIA H100 80GB HBM3, driver 580.159.04, CUDA 13.0, 2026-11-22,
  // `gpuopt-lint --demo all` (bank-conflict: the isolated stride sweep, `--demo bank-conflict` at
  // 23:20 UTC). Keep in step with that file when re-measuring.
  static const std::map<std::string_view, std::string> impact = {
      {"bank-conflict", "measured on H100: 32-way conflict 31.1x slower than conflict-free; see --demo bank-conflict"},
      {"uncoalesced-access", "measured on H100: stride 32 is 7.9x slower than stride 1, a random gather 4.3x; see "
                             "--demo uncoalesced-access"},
      {"divergent-branch", "measured on H100: two-path 'i % 2' split 1.96x slower, reduce0 2.04x; see --demo "
                           "divergent-branch"},
      {"pageable-memcpy", "measured on H100: 4096 small pageable copies 18x slower than one pinned copy; see --demo "
                          "pageable-memcpy"},
      {"unsafe-warp-reduce", "measured on H100: the plain-pointer tail gave wrong sums in 20 of 20 runs; see --demo "
                             "unsafe-warp-reduce"},
      // The host transfer demos: same machine and driver, 2026-11-23 (docs/measurements.md).
      {"unbatched-memcpy", "measured on H100: 4096 pinned 4 KiB copies 96x slower than one 16 MiB copy, 7.4 us each; "
                           "see --demo unbatched-memcpy"},
      {"serialized-transfers", "measured on H100: the serial chunk loop 2.2x slower than 16 chunks over 4 streams; see "
                               "--demo serialized-transfers"},
      {"alloc-in-loop", "measured on H100: cudaMalloc+cudaFree per iteration 11x slower than one allocation (69 us a "
                        "pair), cudaMallocHost+cudaFreeHost 1.3 ms a pair; see --demo alloc-in-loop"},
      {"missing-syncthreads", "measured on H100: the lectures' shift kernel gave wrong results in 20 of 20 runs; see "
                              "--demo missing-syncthreads"},
      // docs/measurements.md, "Device-side rules": same machine, 2026-11-23, `gpuopt-lint --demo <id>`.
      {"global-memory-race", "measured on H100: the lecture's in-place c[i] += c[i-1] gave wrong results in 17 of 20 "
                             "runs, its barrier 'Fix1' in 14 of 20, always at a block's first element; see --demo "
                             "global-memory-race"},
      {"atomic-contention", "measured on H100: a float atomicAdd per thread 239x slower than one per block, a 4-bin "
                            "global histogram 61x slower than shared bins, an aggregated counter 7.2x; see --demo "
                            "atomic-contention"},
      {"partial-warp-block", "measured on H100: 100-thread blocks 1.27x slower than 128 for a copy, 1.28x for compute; 33 "
                             "threads 1.93x; see --demo partial-warp-block"},
      {"double-promotion", "measured on H100: v * 1.1 - 0.1 on floats 12.3x slower than with 1.1f and 0.1f; see --demo "
                           "double-promotion"},
      {"dynamic-local-array", "measured on H100: a per-thread 32-bin histogram in local memory 8.4x slower than a "
                              "shared-memory slice; see --demo dynamic-local-array"},
      {"unused-block-dimension", "measured on H100: dim3(32, 8) for a kernel reading only threadIdx.x 5.3x slower "
                                 "(memory-bound) and 6.9x (compute-bound) than a 1-D block; see --demo unused-block-dimension"},
  };
  auto it = impact.find(id);
  return it == impact.end() ? std::string() : it->second;
}

// docs/measurements.md, "Headline figures": the bank-conflict stride sweep (load-only kernel, shared
// stride 2/4/8/16/32 against stride 1), uncoalesced stride 32 and the random gather, the table
// gather sweep (2026-11-23), the lecture's race demo, the pageable copies.
std::string bankConflictImpact(unsigned ways) {
  static const std::map<unsigned, const char*> sweep = {{2, "1.97"}, {4, "3.91"}, {8, "7.80"}, {16, "15.6"}, {32, "31.1"}};
  if (auto it = sweep.find(ways); it != sweep.end())
    return "measured on H100: a " + std::to_string(ways) + "-way conflict (shared stride " + std::to_string(ways) + ") " +
           it->second + "x slower than conflict-free; see --demo bank-conflict";
  return "measured on H100 for 2-, 4-, 8-, 16- and 32-way conflicts only: 1.97x, 3.91x, 7.80x, 15.6x and 31.1x slower "
         "than conflict-free (" + std::to_string(ways) + "-way not measured); see --demo bank-conflict";
}

std::string uncoalescedImpact(bool random, unsigned sectors, unsigned useful, uint64_t tableBytes) {
  if (random && tableBytes && tableBytes <= 65536)
    return "measured on H100: a gather from a table that stays in L1 1.7x a contiguous read; see --demo "
           "uncoalesced-access";
  if (random)
    return "measured on H100: a random-permutation gather 4.3x slower than an identity gather (6.1x into a 256 MiB "
           "table); see --demo uncoalesced-access";
  if (useful > 0 && sectors == 8 * useful)
    return "measured on H100: stride 32 (32 sectors for 4 useful) 7.9x slower than stride 1; see --demo "
           "uncoalesced-access";
  return "measured on H100 for stride 32 only (32 sectors for 4 useful): 7.9x slower than stride 1; " +
         std::to_string(sectors) + " sectors for " + std::to_string(useful) + " not measured; see --demo uncoalesced-access";
}

std::string globalRaceImpact(RaceShape shape) {
  switch (shape) {
    case RaceShape::NeighbourInBlock:
      return "measured on H100: the lecture's in-place c[i] += c[i-1] (a neighbour's element) gave wrong results in 17 "
             "of 20 runs; see --demo global-memory-race";
    case RaceShape::NeighbourAcrossBlocks: return measuredImpact("global-memory-race");
    case RaceShape::Other: break;
  }
  return "not measured for this pattern; the demo, a neighbour's element (c[i] += c[i-1]), gave wrong results in 17 "
         "of 20 runs on H100; see --demo global-memory-race";
}

std::string pageableImpact(bool smallAndRepeated, bool sizeKnown) {
  if (smallAndRepeated) return measuredImpact("pageable-memcpy");
  if (!sizeKnown)  // the size is a run-time value: both measured cases
    return "measured on H100: 4096 small pageable copies 18x slower than one pinned copy; one 256 MiB copy from "
           "pageable memory 6.4x slower than from pinned memory host to device; see --demo pageable-memcpy";
  return "measured on H100: one 256 MiB copy from pageable memory 6.4x slower than from pinned memory host to device, "
         "3.9x device to host; see --demo pageable-memcpy";
}

}  // namespace gpuopt
