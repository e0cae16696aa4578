// Race analysis: a query over the accesses a kernel model recorded (not part of the walk).
// Two threads touching the same byte of one memory space in the same block-barrier interval, at
// least one writing, not ordered by a warp-level sync. Shared memory today; the same query serves
// global memory within a block.
#pragma once
#include <cstdint>
#include <vector>

#include "analyzer/model/records.h"

namespace gpuopt {

// One entry per pair of expressions. Benign and not reported: every thread storing the same value
// (a shared scalar set by all), and a read by a thread that itself stored that same value there
// before.
struct Race {
  const Access* first = nullptr;   // earlier in program order
  const Access* second = nullptr;  // later
  unsigned t1 = 0, t2 = 0;         // thread of first / second
  int64_t byteAddr = 0;            // the element thread t2 touches (bytes from the array base)
  int64_t firstByteAddr = 0;       // the element thread t1 touches
  bool sameWarp = false;
  bool possible = false;           // under a condition the model could not decide, or at an address
                                   // that depends on a stand-in value (standIn)
  bool warpSynchronous = false;    // both accesses run in a single warp only
  // An address depends on a parameter's (or a uniform load's) stand-in value (Access::paramAddr):
  // which threads meet depends on the value it has at run time (a seed hashed into an index).
  bool standIn = false;
};

// The races among `accesses` (in program order) in memory space `space`. Accesses compare per
// unit of the smallest access size of each interval, so threads writing neighbouring bytes of one
// word (char/short arrays) do not race.
// `sameWork`: per thread, a representative of the threads that do the same work (the rows of a
// block dimension the kernel never reads: KernelModel::duplicatedAxis); pairs of threads with one
// representative are not compared (their "race" is the duplication, unused-block-dimension's).
std::vector<Race> findRaces(const std::vector<Access>& accesses, MemSpace space,
                            const std::vector<unsigned>* sameWork = nullptr);

// A race between threads of two different blocks of one launch. No __syncthreads() orders blocks:
// only a grid-wide sync, the end of the kernel, or an atomic does.
struct CrossBlockRace {
  const Access* first = nullptr;   // the write (or the earlier access when both write)
  const Access* second = nullptr;
  unsigned t1 = 0, t2 = 0;         // thread of first (in block b1) / of second (in block b2)
  int b1 = 0, b2 = 0;              // blockIdx.x offsets from a representative block b (b + b1)
  int by1 = 0, by2 = 0;            // blockIdx.y offsets
  int64_t byteAddr = 0;            // the element both touch (bytes from the base, in block b's terms)
  bool blockIndependent = false;   // neither address depends on blockIdx: every block touches it
  bool possible = false;           // under a condition the model could not decide (data-dependent),
                                   // or only in a later iteration of a run-time loop (laterIterLine)
  unsigned laterIterLine = 0;      // that loop's line (Access::laterIterLine of either access), else 0
};

// Races between blocks: each global access whose address is linear in blockIdx (Access::stepX/Y)
// is placed at blocks b..b+2 (and b..b+1 in y when addresses move with blockIdx.y); two threads of
// different blocks touching one unit, one of them writing, between the same grid-wide syncs, race.
// Skipped: atomics, data-dependent or unknown addresses, addresses through a parameter's stand-in
// value, accesses under masks no representative thread decides, every store of one known value, and
// block-independent accesses under a per-block condition (`if (blockIdx.x == 0)`).
// `grid`: the launch's gridDim when known (0 per axis when not): blocks past it are not compared.
// `blockBlind`: the kernel computes the same in every block (blockBlind() in ast_util.h): when the
// memory it loads is not written by it, every block's thread t stores what thread t of any other
// block stores, so a unit only one store of one thread writes is benign.
std::vector<CrossBlockRace> findCrossBlockRaces(const std::vector<Access>& accesses,
                                                const std::vector<Barrier>& barriers, MemSpace space, const unsigned grid[3] = nullptr,
                                                bool blockBlind = false);

}  // namespace gpuopt
