// A project header with a device helper and a kernel of its own: the kernel is analysed when a
// file of the project includes this header, and findings are reported here.
#pragma once
#define TILE 32
__device__ inline float clampScale(float x) { return x > 1.0f ? 1.0f : 2.0f * x; }

__global__ void transposeTile(const float* in, float* out) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x, y = threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * 2048 + x];
  __syncthreads();
  out[x * 2048 + y] = tile[threadIdx.x][threadIdx.y];  // expect: uncoalesced-access, bank-conflict
}
