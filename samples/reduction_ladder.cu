// The lectures' reduction ladder (lecture 000 / 003). Lint it to see which steps each rule flags,
// then compare with `gpuopt-lint --demo reduction` on a GPU.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define BLOCK 256

// reduce0: interleaved addressing with modulo: divergent-branch.
__global__ void reduce0(const int* in, int* out) {
  __shared__ int sdata[BLOCK];
  unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = in[i];
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// reduce1: strided index: no divergence, but bank-conflict.
__global__ void reduce1(const int* in, int* out) {
  __shared__ int sdata[BLOCK];
  unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = in[i];
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    unsigned index = 2 * s * tid;
    if (index < blockDim.x) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// reduce2: sequential addressing: clean.
__global__ void reduce2(const int* in, int* out) {
  __shared__ int sdata[BLOCK];
  unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = in[i];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// reduce4 as the lectures wrote it: the volatile last warp: unsafe-warp-reduce since Volta.
__device__ void warpReduce(volatile int* sdata, unsigned tid) {
  sdata[tid] += sdata[tid + 32];
  sdata[tid] += sdata[tid + 16];
  sdata[tid] += sdata[tid + 8];
  sdata[tid] += sdata[tid + 4];
  sdata[tid] += sdata[tid + 2];
  sdata[tid] += sdata[tid + 1];
}

__global__ void reduce4(const int* in, int* out) {
  __shared__ int sdata[BLOCK];
  unsigned tid = threadIdx.x, i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  sdata[tid] = in[i] + in[i + blockDim.x];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) warpReduce(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// The fixed end of the ladder: cascaded loads and warp shuffles, cooperative groups: clean.
__global__ void reduceShuffle(const int* in, int* out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  __shared__ int warpSums[BLOCK / 32];
  int sum = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) sum += in[i];
  for (int off = 16; off > 0; off >>= 1) sum += warp.shfl_down(sum, off);
  if (warp.thread_rank() == 0) warpSums[warp.meta_group_rank()] = sum;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    sum = warp.thread_rank() < BLOCK / 32 ? warpSums[warp.thread_rank()] : 0;
    for (int off = 16; off > 0; off >>= 1) sum += warp.shfl_down(sum, off);
    if (warp.thread_rank() == 0) out[blockIdx.x] = sum;
  }
}

void run(const int* d_in, int* d_out, int n) {
  reduce0<<<n / BLOCK, BLOCK>>>(d_in, d_out);
  reduce1<<<n / BLOCK, BLOCK>>>(d_in, d_out);
  reduce2<<<n / BLOCK, BLOCK>>>(d_in, d_out);
  reduce4<<<n / (2 * BLOCK), BLOCK>>>(d_in, d_out);
  reduceShuffle<<<132 * 8, BLOCK>>>(d_in, d_out, n);
}
