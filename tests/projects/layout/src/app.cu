// Project fixture: no compile_commands.json; "util.cuh" lives in ../common (the layout of Rodinia
// and cuda-samples), found by the project-layout search.
#include <cuda_runtime.h>
#include "util.cuh"

__global__ void scale(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = clampScale(a[i]);
}

int main() {
  float* d = 0;
  cudaMalloc(&d, 1 << 20);
  scale<<<1024, 256>>>(d, 1 << 18);
  transposeTile<<<64, dim3(32, 32)>>>(d, d);
  return 0;
}
