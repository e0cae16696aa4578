// The lectures' reduction ladder (lecture 000 / 003), shared by the reduction and divergent-branch demos.
#pragma once
#include "kernels/harness.cuh"

namespace gpuopt::demos {

// The last warp of a shared-memory reduction, made safe for Volta and later: read into a register,
// __syncwarp, write, __syncwarp at every step (used by reduce4..6 and the unsafe-warp-reduce demo).
__device__ inline void warpReduceSafe(int* s, unsigned tid) {
  int v = s[tid];
  for (int off = 32; off > 0; off >>= 1) {
    v += s[tid + off];
    __syncwarp();
    s[tid] = v;
    __syncwarp();
  }
}

// 0..6: reduce0 (interleaved, modulo) .. reduce6 (cascaded); 7: shuffle + int4 loads. Block size 256.
const char* reduceName(int which);
// Times one reduction of n random ints (inputs rotated across copies so L2 cannot serve them when
// n*4 bytes is smaller than the L2) and checks the block partial sums against the CPU.
Row reduceRow(int which, size_t n, const std::string& demo);
}
