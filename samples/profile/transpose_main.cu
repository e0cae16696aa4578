// Host program for profiling samples/transpose_ladder.cu: `gpuopt-lint profile` runs it under Nsight
// Compute. Build: nvcc -lineinfo -arch=sm_90 -o transpose samples/profile/transpose_main.cu
#include <cstdio>
#include <vector>

#include "../transpose_ladder.cu"

int main() {
  const int n = 2048;
  std::vector<float> h(size_t(n) * n);
  for (size_t i = 0; i < h.size(); ++i) h[i] = float(i % 1000);
  float *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, h.size() * sizeof(float)) != cudaSuccess || cudaMalloc(&b, h.size() * sizeof(float)) != cudaSuccess) {
    fprintf(stderr, "transpose: no CUDA device memory\n");
    return 1;
  }
  cudaMemcpy(a, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);
  run(a, b, n);
  cudaMemcpy(h.data(), b, h.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaError_t e = cudaDeviceSynchronize();
  printf("transpose %dx%d: %s, b[1] = %.0f\n", n, n, cudaGetErrorString(e), h[1]);
  cudaFree(a);
  cudaFree(b);
  return e == cudaSuccess ? 0 : 1;
}
