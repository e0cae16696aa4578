// Held-out set for issue 28 (dense arrays): column and row reductions over 2-D arrays, batched
// small-matrix products and inverses, a warp-shuffle dot product, a naive transpose, a segmented
// sum and a rank-1 update, written the way projects write them (our own code). These kernels were
// written and recorded on the H100 before the linter's estimate was looked at for any of them.
// Build: nvcc -lineinfo -arch=sm_90 -O3 -o heldout_dense heldout_dense.cu
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

// Column means of a row-major matrix: one thread per column walks down the rows.
__global__ void columnMean(const float* __restrict__ a, float* __restrict__ mean, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = 0.0f;
  for (int r = 0; r < rows; ++r)
    s += a[(size_t)r * cols + c];
  mean[c] = s / rows;
}

// Row maxima: one block per row, threads stride over the columns, tree reduction in shared memory.
__global__ void rowMax(const float* __restrict__ a, float* __restrict__ out, int cols) {
  __shared__ float partial[256];
  const float* row = a + (size_t)blockIdx.x * cols;
  float m = -3.4e38f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    m = fmaxf(m, row[c]);
  partial[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

// Batched 16x16 products C[b] = A[b] * B[b]: one 16x16 block per matrix, both operands staged in shared.
__global__ void batchedGemm16(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  __shared__ float As[16][16];
  __shared__ float Bs[16][16];
  size_t base = (size_t)blockIdx.x * 256;
  int ty = threadIdx.y, tx = threadIdx.x;
  As[ty][tx] = A[base + ty * 16 + tx];
  Bs[ty][tx] = B[base + ty * 16 + tx];
  __syncthreads();
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < 16; ++k) acc += As[ty][k] * Bs[k][tx];
  C[base + ty * 16 + tx] = acc;
}

// Per-element 3x3 inverses (finite-element Jacobians), nine floats per matrix, one thread each.
__global__ void batchedInverse3x3(const float* __restrict__ J, float* __restrict__ Jinv, float* __restrict__ det, int n) {
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  const float* m = J + 9 * (size_t)e;
  float a = m[0], b = m[1], c = m[2];
  float d = m[3], f = m[4], g = m[5];
  float h = m[6], i = m[7], k = m[8];
  float c0 = f * k - g * i, c1 = g * h - d * k, c2 = d * i - f * h;
  float dt = a * c0 + b * c1 + c * c2;
  float inv = 1.0f / dt;
  float* o = Jinv + 9 * (size_t)e;
  o[0] = c0 * inv;
  o[1] = (c * i - b * k) * inv;
  o[2] = (b * g - c * f) * inv;
  o[3] = c1 * inv;
  o[4] = (a * k - c * h) * inv;
  o[5] = (c * d - a * g) * inv;
  o[6] = c2 * inv;
  o[7] = (b * h - a * i) * inv;
  o[8] = (a * f - b * d) * inv;
  det[e] = dt;
}

__device__ __forceinline__ float warpReduceSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Dot product: grid-stride products, warp shuffles, one atomic per warp.
__global__ void dotShuffle(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ result, size_t n) {
  float acc = 0.0f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
    acc += x[i] * y[i];
  acc = warpReduceSum(acc);
  if ((threadIdx.x & 31) == 0) atomicAdd(result, acc);
}

// Naive transpose: reads along rows, writes down columns.
__global__ void transposeNaive(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows)
    out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}

// Segmented sum: one warp per segment given by CSR-style offsets.
__global__ void segmentedSum(const float* __restrict__ vals, const int* __restrict__ offsets, float* __restrict__ sums, int segments) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (warp >= segments) return;
  int begin = offsets[warp];
  int end = offsets[warp + 1];
  float s = 0.0f;
  for (int j = begin + lane; j < end; j += 32)
    s += vals[j];
  s = warpReduceSum(s);
  if (lane == 0) sums[warp] = s;
}

// Rank-1 update A += alpha * x * y^T (row-major), 2-D grid.
__global__ void rank1Update(float* __restrict__ A, const float* __restrict__ x, const float* __restrict__ y, float alpha, int rows, int cols) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= rows || j >= cols) return;
  float xi = x[i];
  float yj = y[j];
  A[(size_t)i * cols + j] += alpha * xi * yj;
}

int main() {
  const int rows = 4096, cols = 4096;
  const size_t n = (size_t)rows * cols;
  std::vector<float> h(n);
  srand(11);
  for (auto& v : h) v = float(rand() % 1999 - 999) / 1000.0f;
  float *a, *b, *c, *v1, *v2, *res;
  CHECK(cudaMalloc(&a, sizeof(float) * n));
  CHECK(cudaMalloc(&b, sizeof(float) * n));
  CHECK(cudaMalloc(&c, sizeof(float) * n));
  CHECK(cudaMalloc(&v1, sizeof(float) * n));
  CHECK(cudaMalloc(&v2, sizeof(float) * n));
  CHECK(cudaMalloc(&res, sizeof(float) * 64));
  CHECK(cudaMemcpy(a, h.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, h.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(res, 0, sizeof(float) * 64));

  // Segments of 1..256 elements covering up to n values.
  std::vector<int> offs(1, 0);
  while (true) {
    int len = 1 + rand() % 256;
    if ((size_t)offs.back() + len > n) break;
    offs.push_back(offs.back() + len);
  }
  int segments = int(offs.size()) - 1;
  int* d_offs;
  CHECK(cudaMalloc(&d_offs, sizeof(int) * offs.size()));
  CHECK(cudaMemcpy(d_offs, offs.data(), sizeof(int) * offs.size(), cudaMemcpyHostToDevice));

  const int batch = int(n / 256);
  const int elems = int(n / 9);
  dim3 b2(32, 8), g2((cols + 31) / 32, (rows + 7) / 8);
  for (int rep = 0; rep < 2; ++rep) {
    columnMean<<<(cols + 127) / 128, 128>>>(a, v1, rows, cols);
    rowMax<<<rows, 256>>>(a, v1 + cols, cols);
    batchedGemm16<<<batch, dim3(16, 16)>>>(a, b, c);
    batchedInverse3x3<<<(elems + 255) / 256, 256>>>(a, c, v2, elems);
    dotShuffle<<<132 * 16, 256>>>(a, b, res, n);
    transposeNaive<<<g2, b2>>>(a, c, rows, cols);
    segmentedSum<<<(segments * 32 + 255) / 256, 256>>>(a, d_offs, v2, segments);
    rank1Update<<<g2, b2>>>(c, v1, v2, 0.5f, rows, cols);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  float r = 0.0f, m0 = 0.0f;
  CHECK(cudaMemcpy(&r, res, sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&m0, v1, sizeof(float), cudaMemcpyDeviceToHost));
  printf("heldout_dense: ok (dot %.1f, mean[0] %.4f, %d segments)\n", r, m0, segments);
  return 0;
}
