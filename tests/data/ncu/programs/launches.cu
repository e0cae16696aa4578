// Launch shapes the profile must carry into the lint (a one-block grid, a 16-thread block), kernels
// where one lane of each warp does the work, and a kernel that runs after Nsight Compute's launch
// limit (-c 20) has stopped profiling: test data for `gpuopt-lint profile` (tests/data/ncu/launches/).
// Build: nvcc -lineinfo -arch=sm_90 -o launches launches.cu
#include <cstdio>

// Launched as one block of 64 threads: each thread reads its neighbour, waits for the block, then
// writes its own element. With more blocks every block would write the same elements.
__global__ void smoothOnce(float* d, int n) {
  int t = threadIdx.x;
  float v = 0.5f * (d[t] + d[(t + 1) % n]);
  __syncthreads();
  d[t] = v;
}

// Launched with 16 threads per block: half of every warp is missing.
__global__ void scaleSmallBlocks(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}

// One lane of the block does all the work (a serial loop inside a kernel).
__global__ void serialSum(const float* in, float* out, int n) {
  if (threadIdx.x == 0) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) acc += in[k] * in[k];
    out[blockIdx.x] = acc;
  }
}

// Launched with a single thread: a loop a parallel kernel should do.
__global__ void serialFill(float* a, int n) {
  for (int i = 0; i < n; ++i) a[i] = float(i) * 0.5f;
}

__global__ void stepOnce(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * 0.99f + 0.01f;
}

// Runs once, after 25 launches of stepOnce.
__global__ void afterTheLoop(const float* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * a[i];
}

int main() {
  const int n = 1 << 20;
  float *a, *b;
  if (cudaMalloc(&a, sizeof(float) * n) != cudaSuccess) {
    fprintf(stderr, "launches: no CUDA device memory\n");
    return 1;
  }
  cudaMalloc(&b, sizeof(float) * n);
  cudaMemset(a, 0, sizeof(float) * n);
  smoothOnce<<<1, 64>>>(a, 64);
  scaleSmallBlocks<<<n / 16, 16>>>(a, b, n);
  serialSum<<<4, 64>>>(a, b, 1 << 14);
  serialFill<<<1, 1>>>(b, 1 << 14);
  for (int it = 0; it < 25; ++it) stepOnce<<<n / 256, 256>>>(a, n);
  afterTheLoop<<<n / 256, 256>>>(a, b, n);
  cudaError_t e = cudaDeviceSynchronize();
  printf("launches: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
