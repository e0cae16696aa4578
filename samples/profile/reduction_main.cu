// Host program for profiling samples/reduction_ladder.cu under Nsight Compute.
// Build: nvcc -lineinfo -arch=sm_90 -o reduction samples/profile/reduction_main.cu
#include <cstdio>
#include <vector>

#include "../reduction_ladder.cu"

int main() {
  const int n = 1 << 22;
  std::vector<int> h(n, 1);
  int *in = nullptr, *out = nullptr;
  if (cudaMalloc(&in, n * sizeof(int)) != cudaSuccess || cudaMalloc(&out, n / BLOCK * sizeof(int)) != cudaSuccess) {
    fprintf(stderr, "reduction: no CUDA device memory\n");
    return 1;
  }
  cudaMemcpy(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  run(in, out, n);
  int first = 0;
  cudaMemcpy(&first, out, sizeof(int), cudaMemcpyDeviceToHost);
  cudaError_t e = cudaDeviceSynchronize();
  printf("reduction of %d ones: %s, first partial sum %d\n", n, cudaGetErrorString(e), first);
  cudaFree(in);
  cudaFree(out);
  return e == cudaSuccess ? 0 : 1;
}
