// Dense and sparse linear-algebra kernels written the way projects write them (our own code): the
// per-line cost estimate of issue 28 is checked against Nsight Compute's per-line sectors and stall
// samples of these kernels (bench/data/impact/, recorded by scripts/gpu-profile-programs.sh).
// Build: nvcc -lineinfo -arch=sm_90 -o linalg linalg.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t err_ = (x);                                                             \
    if (err_ != cudaSuccess) {                                                          \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));     \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

// C = alpha * A * B + beta * C, row-major, one thread per element of C.
__global__ void sgemmNaive(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = alpha * acc + beta * C[row * N + col];
  }
}

// Shared-memory tiles of A and B, one element of C per thread.
template <int BS>
__global__ void sgemmTiled(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C) {
  __shared__ float As[BS][BS];
  __shared__ float Bs[BS][BS];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * BS + ty, col = blockIdx.x * BS + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += BS) {
    As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
    Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BS; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

// 64x64 tile per block of 256 threads, each computing a 4x4 micro-tile from registers.
__global__ void sgemmRegisterTiled(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                                   float* __restrict__ C) {
  const int BM = 64, BN = 64, BK = 16;
  __shared__ float As[BK][BM];
  __shared__ float Bs[BK][BN];
  int tid = threadIdx.x;
  int tr = tid / 16, tc = tid % 16;
  const float* a = A + blockIdx.y * BM * K;
  const float* b = B + blockIdx.x * BN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += 256) {
      int r = i / BK, c = i % BK;
      As[c][r] = a[r * K + k0 + c];
    }
    for (int i = tid; i < BK * BN; i += 256) {
      int r = i / BN, c = i % BN;
      Bs[r][c] = b[(k0 + r) * N + c];
    }
    __syncthreads();
    for (int k = 0; k < BK; ++k) {
      float ra[4], rb[4];
      for (int i = 0; i < 4; ++i) ra[i] = As[k][tr * 4 + i];
      for (int j = 0; j < 4; ++j) rb[j] = Bs[k][tc * 4 + j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) C[(blockIdx.y * BM + tr * 4 + i) * N + blockIdx.x * BN + tc * 4 + j] = acc[i][j];
}

// y = A x, one warp per row, shuffle reduction.
__global__ void gemvWarpPerRow(int rows, int cols, const float* __restrict__ A, const float* __restrict__ x,
                               float* __restrict__ y) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  if (warp >= rows) return;
  float sum = 0.0f;
  for (int c = lane; c < cols; c += 32) sum += A[(size_t)warp * cols + c] * x[c];
  for (int off = 16; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffff, sum, off);
  if (lane == 0) y[warp] = sum;
}

// y = A^T x with one thread per column (reads a column per thread: coalesced across the warp).
__global__ void gemvTransposed(int rows, int cols, const float* __restrict__ A, const float* __restrict__ x,
                               float* __restrict__ y) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float sum = 0.0f;
  for (int r = 0; r < rows; ++r) sum += A[(size_t)r * cols + c] * x[r];
  y[c] = sum;
}

// CSR sparse matrix-vector product, one thread per row.
__global__ void spmvCsrScalar(int rows, const int* __restrict__ rowPtr, const int* __restrict__ colIdx,
                              const float* __restrict__ val, const float* __restrict__ x, float* __restrict__ y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float dot = 0.0f;
    for (int j = rowPtr[row]; j < rowPtr[row + 1]; ++j) dot += val[j] * x[colIdx[j]];
    y[row] = dot;
  }
}

// CSR, one warp per row.
__global__ void spmvCsrVector(int rows, const int* __restrict__ rowPtr, const int* __restrict__ colIdx,
                              const float* __restrict__ val, const float* __restrict__ x, float* __restrict__ y) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (warp >= rows) return;
  float dot = 0.0f;
  for (int j = rowPtr[warp] + lane; j < rowPtr[warp + 1]; j += 32) dot += val[j] * x[colIdx[j]];
  for (int off = 16; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffff, dot, off);
  if (lane == 0) y[warp] = dot;
}

// Transpose through a padded shared tile (32x8 threads, 32x32 tile).
__global__ void transposePadded(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < h && y + j < w) out[(size_t)(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
  const int n = 1024;  // GEMM size
  const int rows = 8192, cols = 4096;
  std::vector<float> h(size_t(rows) * cols);
  srand(11);
  for (auto& v : h) v = float(rand() % 100) / 100.0f;
  float *A, *B, *C, *x, *y;
  CHECK(cudaMalloc(&A, sizeof(float) * h.size()));
  CHECK(cudaMalloc(&B, sizeof(float) * n * n));
  CHECK(cudaMalloc(&C, sizeof(float) * h.size()));
  CHECK(cudaMalloc(&x, sizeof(float) * rows));
  CHECK(cudaMalloc(&y, sizeof(float) * rows));
  CHECK(cudaMemcpy(A, h.data(), sizeof(float) * h.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(B, h.data(), sizeof(float) * n * n, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(x, h.data(), sizeof(float) * rows, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(C, 0, sizeof(float) * n * n));
  dim3 b16(16, 16), g16(n / 16, n / 16);
  sgemmNaive<<<g16, b16>>>(n, n, n, 1.0f, A, B, 0.0f, C);
  sgemmTiled<32><<<dim3(n / 32, n / 32), dim3(32, 32)>>>(n, n, n, A, B, C);
  sgemmRegisterTiled<<<dim3(n / 64, n / 64), 256>>>(n, n, n, A, B, C);
  gemvWarpPerRow<<<rows * 32 / 256, 256>>>(rows, cols, A, x, y);
  gemvTransposed<<<cols / 256, 256>>>(rows, cols, A, x, y);
  // A random sparse matrix: 8 to 40 nonzeros per row.
  const int sr = 1 << 16;
  std::vector<int> rp(sr + 1), ci;
  std::vector<float> vv;
  for (int r = 0; r < sr; ++r) {
    rp[r] = int(ci.size());
    int nnz = 8 + rand() % 33;
    for (int k = 0; k < nnz; ++k) ci.push_back(rand() % sr), vv.push_back(1.0f / (k + 1));
  }
  rp[sr] = int(ci.size());
  int *drp, *dci;
  float *dv, *sx, *sy;
  CHECK(cudaMalloc(&drp, sizeof(int) * rp.size()));
  CHECK(cudaMalloc(&dci, sizeof(int) * ci.size()));
  CHECK(cudaMalloc(&dv, sizeof(float) * vv.size()));
  CHECK(cudaMalloc(&sx, sizeof(float) * sr));
  CHECK(cudaMalloc(&sy, sizeof(float) * sr));
  CHECK(cudaMemcpy(drp, rp.data(), sizeof(int) * rp.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dci, ci.data(), sizeof(int) * ci.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dv, vv.data(), sizeof(float) * vv.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(sx, h.data(), sizeof(float) * sr, cudaMemcpyHostToDevice));
  spmvCsrScalar<<<sr / 128, 128>>>(sr, drp, dci, dv, sx, sy);
  spmvCsrVector<<<sr * 32 / 256, 256>>>(sr, drp, dci, dv, sx, sy);
  transposePadded<<<dim3(cols / 32, rows / 32), dim3(32, 8)>>>(A, C, cols, rows);
  CHECK(cudaDeviceSynchronize());
  float out = 0.0f;
  CHECK(cudaMemcpy(&out, sy, sizeof(float), cudaMemcpyDeviceToHost));
  printf("linalg: ok (y[0] = %.3f)\n", out);
  return 0;
}
