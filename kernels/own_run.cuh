// A thread walking its own run of B consecutive doubles in a loop against the same work with the
// lanes along the run: the uncoalesced-access demo's "own run" report (kernels/uncoalesced.cu)
// and the Nsight Compute probe (scripts/own_run_probe.cu) time and count the same kernels.
#pragma once
#include <cstddef>

namespace gpuopt::demos {

// Each thread walks its own run of B consecutive elements (a block of a block-sparse vector:
// AMGX's `x[tid * bsize + m]`): at one instruction the lanes are B elements apart, but the same
// thread reads the rest of each sector in the next iterations.
__global__ void ownRun(const double* x, const double* e, double* y, double alpha, int B, size_t n) {
  size_t t = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (t < n)
    for (int m = 0; m < B; ++m) y[t * B + m] = x[t * B + m] + alpha * e[t * B + m];
}
// The same work per thread and the same layout, the lanes along the run: each block covers its
// blockDim.x * B elements, lane after lane in every iteration.
__global__ void laneRun(const double* x, const double* e, double* y, double alpha, int B, size_t n) {
  size_t base = blockIdx.x * size_t(blockDim.x) * B;
  for (int m = 0; m < B; ++m) {
    size_t k = base + size_t(m) * blockDim.x + threadIdx.x;
    if (k < n * B) y[k] = x[k] + alpha * e[k];
  }
}

}  // namespace gpuopt::demos
