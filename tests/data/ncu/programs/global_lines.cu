// Global-memory lines with several accesses, stores, mixed widths, unrolled copies and accesses the
// compiler keeps in registers or hoists: the per-instruction join of `gpuopt-lint profile` is tested
// on this program's Nsight Compute export (tests/data/ncu/global_lines/).
// Build: nvcc -lineinfo -arch=sm_90 -o global_lines global_lines.cu
#include <cstdio>
#include <vector>

// One thread per row: A's row is read with a stride of n elements between lanes (32 sectors for 4),
// x[j] is the same word for the whole warp, tmp[i] is read and written every iteration (nothing
// tells the compiler that tmp does not alias A or x).
__global__ void rowTimesVector(const float* A, const float* x, float* tmp, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  tmp[i] = 0.0f;
  for (int j = 0; j < n; ++j) tmp[i] += A[i * n + j] * x[j];
}

// The same with __restrict__: tmp[i] is kept in a register across the loop.
__global__ void rowTimesVectorRestrict(const float* __restrict__ A, const float* __restrict__ x,
                                       float* __restrict__ tmp, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  tmp[i] = 0.0f;
  for (int j = 0; j < n; ++j) tmp[i] += A[i * n + j] * x[j];
}

// Two loads and a store on one line: x is read with a stride of 8 floats, y contiguously.
__global__ void stridedAxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i * 8] + y[i];
}

// A naive transpose that reads rows and writes columns: the load is coalesced, the store is not.
__global__ void columnStore(const float* in, float* out, int n) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < n && col < n) out[col * n + row] = in[row * n + col];
}

// Loads of three widths on one line: 16-byte, 8-byte (strided by two doubles) and 1-byte.
__global__ void mixedWidths(const float4* v, const double* d, const unsigned char* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v[i].x + v[i].w + float(d[2 * i]) + float(c[i]);
}

// A strided load in a loop the compiler unrolls four times: four copies of one access.
__global__ void unrolledStride(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
#pragma unroll 4
  for (int k = 0; k < 16; ++k) acc += in[(k * n + i) * 4];
  out[i] = acc;
}

// w[k] is the same for every lane; in[i] does not change in the loop and is read once.
__global__ void loopInvariant(const float* __restrict__ w, const float* __restrict__ in, float* __restrict__ out,
                              int n, int taps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < taps; ++k) acc += w[k] * in[i] + w[k + 1] * in[i];
  out[i] = acc;
}

int main() {
  const int n = 4096, big = 1 << 20;
  std::vector<float> h(size_t(big) * 64, 1.0f);
  float *A, *x, *tmp, *y, *out, *f;
  double* d;
  unsigned char* c;
  float4* v;
  if (cudaMalloc(&A, sizeof(float) * size_t(n) * n) != cudaSuccess) {
    fprintf(stderr, "global_lines: no CUDA device memory\n");
    return 1;
  }
  cudaMalloc(&x, sizeof(float) * size_t(big) * 64);
  cudaMalloc(&tmp, sizeof(float) * n);
  cudaMalloc(&y, sizeof(float) * big);
  cudaMalloc(&out, sizeof(float) * size_t(n) * n);
  cudaMalloc(&f, sizeof(float) * 64);
  cudaMalloc(&d, sizeof(double) * 2 * big);
  cudaMalloc(&c, big);
  cudaMalloc(&v, sizeof(float4) * big);
  cudaMemcpy(A, h.data(), sizeof(float) * size_t(n) * n, cudaMemcpyHostToDevice);
  cudaMemcpy(x, h.data(), sizeof(float) * size_t(big) * 64, cudaMemcpyHostToDevice);
  cudaMemcpy(f, h.data(), sizeof(float) * 64, cudaMemcpyHostToDevice);
  cudaMemset(y, 0, sizeof(float) * big);
  cudaMemset(d, 0, sizeof(double) * 2 * big);
  cudaMemset(c, 1, big);
  cudaMemset(v, 0, sizeof(float4) * big);
  rowTimesVector<<<n / 128, 128>>>(A, x, tmp, n);
  rowTimesVectorRestrict<<<n / 128, 128>>>(A, x, tmp, n);
  stridedAxpy<<<big / 256, 256>>>(2.0f, x, y, big);
  columnStore<<<dim3(n / 32, n / 8), dim3(32, 8)>>>(A, out, n);
  mixedWidths<<<big / 256, 256>>>(v, d, c, y, big);
  unrolledStride<<<big / 4 / 256, 256>>>(x, y, big / 4);
  loopInvariant<<<big / 256, 256>>>(f, x, y, big, 32);
  cudaError_t e = cudaDeviceSynchronize();
  printf("global_lines: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
