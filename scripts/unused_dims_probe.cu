// Counters for unused-block-dimension (issue 26): one launch of each variant of kernels/unused_dims.cu, under ncu:
//   nvcc -O3 -arch=sm_90 -o probe scripts/unused_dims_probe.cu && ncu --metrics smsp__inst_executed.sum,... ./probe
#include <cstdio>
#include <cuda_runtime.h>
__global__ void saxpyRowsX(const float* x, float* y, float a, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int j = 0; j < k; ++j) v = fmaf(v, a, 0.25f);
  y[i] = v;
}
__global__ void saxpyRowsXY(const float* x, float* y, float a, int n, int k) {
  int i = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int j = 0; j < k; ++j) v = fmaf(v, a, 0.25f);
  y[i] = v;
}
int main() {
  const int n = 1 << 24;
  float *x, *y;
  cudaMalloc(&x, n * 4);
  cudaMalloc(&y, n * 4);
  cudaMemset(x, 0, n * 4);
  for (int k : {0, 64}) {
    saxpyRowsX<<<(n + 31) / 32, dim3(32, 8)>>>(x, y, 0.5f, n, k);
    saxpyRowsX<<<(n + 255) / 256, 256>>>(x, y, 0.5f, n, k);
    saxpyRowsXY<<<(n + 255) / 256, dim3(32, 8)>>>(x, y, 0.5f, n, k);
  }
  cudaError_t e = cudaDeviceSynchronize();
  printf("probe: %s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
