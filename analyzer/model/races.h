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
  bool possible = false;           // under a condition the model could not decide
  bool warpSynchronous = false;    // both accesses run in a single warp only
};

// The races among `accesses` (in program order) in memory space `space`. Accesses compare per
// unit of the smallest access size of each interval, so threads writing neighbouring bytes of one
// word (char/short arrays) do not race.
std::vector<Race> findRaces(const std::vector<Access>& accesses, MemSpace space);

}  // namespace gpuopt
