// Reductions, scans, histograms and row-wise normalisations written the way projects write them
// (our own code): issue 28's per-line cost estimate is checked against these kernels' counters.
// Build: nvcc -lineinfo -arch=sm_90 -o reduce_scan reduce_scan.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                    \
  do {                                                                              \
    cudaError_t err_ = (x);                                                         \
    if (err_ != cudaSuccess) {                                                      \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

__device__ __forceinline__ float warpSum(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
  return v;
}

// Grid-stride sum: per-thread accumulation, warp shuffles, one atomic per block.
__global__ void reduceSum(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  __shared__ float warpSums[32];
  float acc = 0.0f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    acc += in[i];
  acc = warpSum(acc);
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warpSums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < blockDim.x / 32 ? warpSums[lane] : 0.0f;
    acc = warpSum(acc);
    if (lane == 0) atomicAdd(out, acc);
  }
}

// Work-efficient (Blelloch) exclusive scan of 2 * blockDim.x elements per block.
__global__ void blellochScan(const int* __restrict__ in, int* __restrict__ out, int* __restrict__ blockSums) {
  extern __shared__ int temp[];
  int tid = threadIdx.x, n = 2 * blockDim.x;
  const int* src = in + blockIdx.x * n;
  temp[2 * tid] = src[2 * tid];
  temp[2 * tid + 1] = src[2 * tid + 1];
  int offset = 1;
  for (int d = n >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (tid < d) {
      int ai = offset * (2 * tid + 1) - 1, bi = offset * (2 * tid + 2) - 1;
      temp[bi] += temp[ai];
    }
    offset *= 2;
  }
  if (tid == 0) {
    blockSums[blockIdx.x] = temp[n - 1];
    temp[n - 1] = 0;
  }
  for (int d = 1; d < n; d *= 2) {
    offset >>= 1;
    __syncthreads();
    if (tid < d) {
      int ai = offset * (2 * tid + 1) - 1, bi = offset * (2 * tid + 2) - 1;
      int t = temp[ai];
      temp[ai] = temp[bi];
      temp[bi] += t;
    }
  }
  __syncthreads();
  out[blockIdx.x * n + 2 * tid] = temp[2 * tid];
  out[blockIdx.x * n + 2 * tid + 1] = temp[2 * tid + 1];
}

// 256-bin histogram of bytes, privatised per block in shared memory.
__global__ void histogram256(const unsigned char* __restrict__ data, size_t n, unsigned* __restrict__ bins) {
  __shared__ unsigned local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

// Stream compaction of positive values: warp ballot for the offsets, one atomic per warp.
__global__ void compactPositive(const float* __restrict__ in, float* __restrict__ out, int* __restrict__ count,
                                int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  float v = i < n ? in[i] : 0.0f;
  bool keep = i < n && v > 0.0f;
  unsigned mask = __ballot_sync(0xffffffff, keep);
  int base = 0;
  if (lane == 0) base = atomicAdd(count, __popc(mask));
  base = __shfl_sync(0xffffffff, base, 0);
  if (keep) out[base + __popc(mask & ((1u << lane) - 1))] = v;
}

// Row-wise softmax, one block of 256 threads per row: max, sum of exponentials, normalise.
__global__ void softmaxRows(const float* __restrict__ x, float* __restrict__ y, int cols) {
  __shared__ float red[32];
  const float* row = x + (size_t)blockIdx.x * cols;
  float* dst = y + (size_t)blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, off));
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = m;
  __syncthreads();
  m = red[0];
  for (int w = 1; w < blockDim.x / 32; ++w) m = fmaxf(m, red[w]);
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __expf(row[c] - m);
  s = warpSum(s);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = s;
  __syncthreads();
  s = 0.0f;
  for (int w = 0; w < blockDim.x / 32; ++w) s += red[w];
  float inv = 1.0f / s;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) dst[c] = __expf(row[c] - m) * inv;
}

// LayerNorm over the last dimension, one warp per row, two passes over registers' partial sums.
__global__ void layerNormWarp(const float* __restrict__ x, const float* __restrict__ gamma,
                              const float* __restrict__ beta, float* __restrict__ y, int rows, int cols, float eps) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* xr = x + (size_t)row * cols;
  float sum = 0.0f;
  for (int c = lane; c < cols; c += 32) sum += xr[c];
  float mean = __shfl_sync(0xffffffff, warpSum(sum), 0) / cols;
  float var = 0.0f;
  for (int c = lane; c < cols; c += 32) {
    float d = xr[c] - mean;
    var += d * d;
  }
  float rstd = rsqrtf(__shfl_sync(0xffffffff, warpSum(var), 0) / cols + eps);
  for (int c = lane; c < cols; c += 32) y[(size_t)row * cols + c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
}

// Naive per-thread row sum of a row-major matrix (each thread walks its own row).
__global__ void rowSumPerThread(const float* __restrict__ m, float* __restrict__ sums, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += m[(size_t)r * cols + c];
  sums[r] = s;
}

int main() {
  const size_t n = size_t(1) << 24;
  std::vector<float> h(n);
  srand(5);
  for (auto& v : h) v = float(rand() % 2001 - 1000) / 1000.0f;
  float *x, *y, *sum;
  CHECK(cudaMalloc(&x, sizeof(float) * n));
  CHECK(cudaMalloc(&y, sizeof(float) * n));
  CHECK(cudaMalloc(&sum, sizeof(float) * 1024));
  CHECK(cudaMemcpy(x, h.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(sum, 0, sizeof(float) * 1024));
  reduceSum<<<132 * 8, 256>>>(x, sum, n);
  int *ia, *ib, *bs;
  CHECK(cudaMalloc(&ia, sizeof(int) * n));
  CHECK(cudaMalloc(&ib, sizeof(int) * n));
  CHECK(cudaMalloc(&bs, sizeof(int) * n / 1024));
  CHECK(cudaMemset(ia, 0, sizeof(int) * n));
  blellochScan<<<n / 1024, 512, 1024 * sizeof(int)>>>(ia, ib, bs);
  unsigned* bins;
  CHECK(cudaMalloc(&bins, sizeof(unsigned) * 256));
  CHECK(cudaMemset(bins, 0, sizeof(unsigned) * 256));
  histogram256<<<132 * 4, 256>>>((const unsigned char*)x, n * 4, bins);
  int* count;
  CHECK(cudaMalloc(&count, sizeof(int)));
  CHECK(cudaMemset(count, 0, sizeof(int)));
  compactPositive<<<n / 256, 256>>>(x, y, count, int(n));
  softmaxRows<<<4096, 256>>>(x, y, 4096);
  layerNormWarp<<<16384 * 32 / 256, 256>>>(x, x, x + 1024, y, 16384, 1024, 1e-5f);
  rowSumPerThread<<<16384 / 128, 128>>>(x, y, 16384, 1024);
  CHECK(cudaDeviceSynchronize());
  float s = 0.0f;
  CHECK(cudaMemcpy(&s, sum, sizeof(float), cudaMemcpyDeviceToHost));
  printf("reduce_scan: ok (sum %.1f)\n", s);
  return 0;
}
