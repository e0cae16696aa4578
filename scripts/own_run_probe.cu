// A thread walking its own run of B consecutive doubles in a loop (y[t*B + m], AMGX's block-CSR
// vectors with a run-time block size) against the same work with the lanes along the run. Run
// once per B under Nsight Compute: the requests, L1 sectors and hit rate, L2 and DRAM traffic say
// whether the loop's later iterations find the first one's sectors in L1 (the kernels of the
// uncoalesced-access demo's "own run" report, kernels/own_run.cuh).
// Build (from the repository root): nvcc -O3 -arch=sm_90 -I. -o own_run_probe scripts/own_run_probe.cu;
// run: ./own_run_probe B
#include <cstdio>
#include <cstdlib>

#include "kernels/own_run.cuh"

using gpuopt::demos::laneRun;
using gpuopt::demos::ownRun;

int main(int argc, char** argv) {
  const int B = argc > 1 ? atoi(argv[1]) : 4;
  const size_t total = size_t(1) << 24, n = total / B;
  double *x, *e, *y;
  cudaMalloc(&x, total * sizeof(double));
  cudaMalloc(&e, total * sizeof(double));
  cudaMalloc(&y, total * sizeof(double));
  cudaMemset(x, 0, total * sizeof(double));
  cudaMemset(e, 0, total * sizeof(double));
  const unsigned grid = unsigned((n + 255) / 256);
  ownRun<<<grid, 256>>>(x, e, y, 0.5, B, n);
  laneRun<<<grid, 256>>>(x, e, y, 0.5, B, n);
  cudaError_t err = cudaDeviceSynchronize();
  printf("B = %d: %s\n", B, cudaGetErrorString(err));
  return err != cudaSuccess;
}
