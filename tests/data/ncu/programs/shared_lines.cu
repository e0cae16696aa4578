// Shared-memory lines with several accesses (loads and stores of one array on one line, a global
// load stored to shared memory, 8-byte elements): test data for the per-instruction join of
// `gpuopt-lint profile` (tests/data/ncu/shared_lines/).
// Build: nvcc -lineinfo -arch=sm_90 -o shared_lines shared_lines.cu
#include <cstdio>
#include <vector>

#define TILE 32

// A 5-point stencil on a shared tile with a halo: four loads on one line, conflict-free.
__global__ void tileStencil(const float* in, float* out, int n) {
  __shared__ float s[10][TILE + 2];
  int tx = threadIdx.x, ty = threadIdx.y;
  int x = blockIdx.x * TILE + tx, y = blockIdx.y * 8 + ty;
  s[ty + 1][tx + 1] = in[y * n + x];
  if (tx == 0) s[ty + 1][0] = x > 0 ? in[y * n + x - 1] : 0.0f;
  if (tx == TILE - 1) s[ty + 1][TILE + 1] = x < n - 1 ? in[y * n + x + 1] : 0.0f;
  if (ty == 0) s[0][tx + 1] = y > 0 ? in[(y - 1) * n + x] : 0.0f;
  if (ty == 7) s[9][tx + 1] = y < n - 1 ? in[(y + 1) * n + x] : 0.0f;
  __syncthreads();
  out[y * n + x] = s[ty][tx + 1] + s[ty + 2][tx + 1] + s[ty + 1][tx] + s[ty + 1][tx + 2] - 4.0f * s[ty + 1][tx + 1];
}

// Interleaved tree reduction: two loads and a store of sdata on one line, 2-way to 16-way.
__global__ void reduceInterleaved(const int* in, int* out) {
  __shared__ int sdata[256];
  unsigned tid = threadIdx.x;
  sdata[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    unsigned index = 2 * s * tid;
    if (index < blockDim.x) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Tiled transpose: a global load and a shared store on one line, then a 32-way conflicting shared
// load and a global store on the next.
__global__ void transposeTile(const float* in, float* out, int n) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += 8) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Column sums of a shared tile of doubles: lane l reads row l (a stride of 33 doubles) and adds its
// neighbour's column; 8-byte words.
__global__ void doubleColumns(const double* in, double* out) {
  __shared__ double sd[32][33];
  int t = threadIdx.x;
  for (int r = 0; r < 32; ++r) sd[r][t] = in[blockIdx.x * 1024 + r * 32 + t];
  __syncthreads();
  double acc = 0.0;
  for (int c = 0; c < 32; ++c) acc += sd[t][c] * sd[t][(c + 1) % 32];
  out[blockIdx.x * 32 + t] = acc;
}

int main() {
  const int n = 2048, blocks = 8192;
  std::vector<float> h(size_t(n) * n);
  for (size_t i = 0; i < h.size(); ++i) h[i] = float(i % 97);
  float *a, *b;
  int *ia, *ib;
  double *da, *db;
  if (cudaMalloc(&a, sizeof(float) * h.size()) != cudaSuccess) {
    fprintf(stderr, "shared_lines: no CUDA device memory\n");
    return 1;
  }
  cudaMalloc(&b, sizeof(float) * h.size());
  cudaMalloc(&ia, sizeof(int) * blocks * 256);
  cudaMalloc(&ib, sizeof(int) * blocks);
  cudaMalloc(&da, sizeof(double) * blocks * 1024);
  cudaMalloc(&db, sizeof(double) * blocks * 32);
  cudaMemcpy(a, h.data(), sizeof(float) * h.size(), cudaMemcpyHostToDevice);
  cudaMemset(ia, 1, sizeof(int) * blocks * 256);
  cudaMemset(da, 0, sizeof(double) * blocks * 1024);
  tileStencil<<<dim3(n / TILE, n / 8), dim3(TILE, 8)>>>(a, b, n);
  reduceInterleaved<<<blocks, 256>>>(ia, ib);
  transposeTile<<<dim3(n / TILE, n / TILE), dim3(TILE, 8)>>>(a, b, n);
  doubleColumns<<<blocks, 32>>>(da, db);
  cudaError_t e = cudaDeviceSynchronize();
  printf("shared_lines: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
