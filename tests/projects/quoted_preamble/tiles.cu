#include "common.cuh"
#include "guarded.h"

__global__ void transposeTile(const float* in, float* out, int n) {
  __shared__ float tile[kTile][kTile];
  int x = blockIdx.x * kTile + threadIdx.x, y = blockIdx.y * kTile + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  out[x * n + y] = tile[threadIdx.x][threadIdx.y];
}

void launchTranspose(const float* in, float* out, int n) {
  transposeTile<<<dim3(n / kTile, n / kTile), dim3(kTile, kTile)>>>(in, out, n);
}
