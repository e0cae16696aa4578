// Held-out set for issue 28 (signals and sorting): 1-D convolutions (shared tile with halo, and
// direct), one pass of an LSD radix sort (digit histogram, scan of the counts, stable scatter), a
// per-element Newton solve with a hot loop and a cold setup and tail, a pointwise complex multiply,
// a global-atomic histogram and a 4:1 downsample, written the way projects write them (our own
// code). These kernels were written and recorded on the H100 before the linter's estimate was
// looked at for any of them.
// Build: nvcc -lineinfo -arch=sm_90 -O3 -o heldout_signal heldout_signal.cu
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

#define RADIUS 8
#define TILE 256
__constant__ float c_taps[2 * RADIUS + 1];

// 1-D convolution: a tile plus its halo staged in shared memory, taps in constant memory.
__global__ void conv1dTiled(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[TILE + 2 * RADIUS];
  int i = blockIdx.x * TILE + threadIdx.x;
  tile[threadIdx.x + RADIUS] = i < n ? in[i] : 0.0f;
  if (threadIdx.x < RADIUS) {
    int left = i - RADIUS;
    int right = i + TILE;
    tile[threadIdx.x] = left >= 0 ? in[left] : 0.0f;
    tile[threadIdx.x + TILE + RADIUS] = right < n ? in[right] : 0.0f;
  }
  __syncthreads();
  if (i >= n) return;
  float acc = 0.0f;
#pragma unroll
  for (int k = -RADIUS; k <= RADIUS; ++k) acc += c_taps[k + RADIUS] * tile[threadIdx.x + RADIUS + k];
  out[i] = acc;
}

// 1-D convolution straight from global memory, taps from a global array, runtime radius.
__global__ void conv1dDirect(const float* __restrict__ in, const float* __restrict__ taps, float* __restrict__ out, int n, int radius) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = -radius; k <= radius; ++k) {
    int j = min(max(i + k, 0), n - 1);
    acc += taps[k + radius] * in[j];
  }
  out[i] = acc;
}

#define RADIX_BITS 4
#define RADIX 16
#define KEYS_PER_BLOCK 1024

// Radix pass 1: per-block counts of one 4-bit digit, stored digit-major (digit * blocks + block).
__global__ void radixHistogram(const unsigned* __restrict__ keys, unsigned* __restrict__ counts, int n, int shift) {
  __shared__ unsigned local[RADIX];
  if (threadIdx.x < RADIX) local[threadIdx.x] = 0;
  __syncthreads();
  int base = blockIdx.x * KEYS_PER_BLOCK;
  for (int j = threadIdx.x; j < KEYS_PER_BLOCK; j += blockDim.x) {
    int i = base + j;
    if (i < n) atomicAdd(&local[(keys[i] >> shift) & (RADIX - 1)], 1u);
  }
  __syncthreads();
  if (threadIdx.x < RADIX) counts[threadIdx.x * gridDim.x + blockIdx.x] = local[threadIdx.x];
}

// Radix pass 2: exclusive scan of the counts by one block, chunk by chunk, carrying the total.
__global__ void scanCounts(const unsigned* __restrict__ counts, unsigned* __restrict__ offsets, int m) {
  __shared__ unsigned buf[1024];
  __shared__ unsigned carry;
  if (threadIdx.x == 0) carry = 0;
  for (int start = 0; start < m; start += 1024) {
    int i = start + threadIdx.x;
    unsigned v = i < m ? counts[i] : 0u;
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int off = 1; off < 1024; off <<= 1) {
      unsigned t = threadIdx.x >= off ? buf[threadIdx.x - off] : 0u;
      __syncthreads();
      buf[threadIdx.x] += t;
      __syncthreads();
    }
    if (i < m) offsets[i] = carry + buf[threadIdx.x] - v;
    __syncthreads();
    if (threadIdx.x == 1023) carry += buf[1023];
    __syncthreads();
  }
}

// Radix pass 3: stable scatter. 1024 keys per block, one per thread: rank within the warp from
// __match_any_sync, warp totals in shared memory, then the block's digit offset.
__global__ void radixScatter(const unsigned* __restrict__ keysIn, unsigned* __restrict__ keysOut,
                             const unsigned* __restrict__ offsets, int n, int shift) {
  __shared__ unsigned warpCounts[32][RADIX];
  __shared__ unsigned blockOffset[RADIX];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int t = threadIdx.x; t < 32 * RADIX; t += blockDim.x) warpCounts[t / RADIX][t % RADIX] = 0;
  if (threadIdx.x < RADIX) blockOffset[threadIdx.x] = offsets[threadIdx.x * gridDim.x + blockIdx.x];
  __syncthreads();
  int i = blockIdx.x * KEYS_PER_BLOCK + threadIdx.x;
  bool valid = i < n;
  unsigned key = valid ? keysIn[i] : 0xffffffffu;
  unsigned digit = (key >> shift) & (RADIX - 1);
  unsigned peers = __match_any_sync(0xffffffffu, valid ? digit : RADIX + lane);
  unsigned rankInWarp = __popc(peers & ((1u << lane) - 1));
  if (valid && rankInWarp == 0) warpCounts[warp][digit] = __popc(peers);
  __syncthreads();
  if (threadIdx.x < RADIX) {  // exclusive scan over the warps, per digit
    unsigned run = 0;
    for (int w = 0; w < 32; ++w) {
      unsigned c = warpCounts[w][threadIdx.x];
      warpCounts[w][threadIdx.x] = run;
      run += c;
    }
  }
  __syncthreads();
  if (valid) keysOut[blockOffset[digit] + warpCounts[warp][digit] + rankInWarp] = key;
}

// Per-element Newton solve of a cubic a x^3 + b x^2 + c x = rhs: coefficients once, a tabulated
// correction read every iteration, the root once, and a rare report of non-convergence.
__global__ void newtonCubic(const float4* __restrict__ coef, const float* __restrict__ correction, float* __restrict__ root,
                            int* __restrict__ failed, int* __restrict__ failCount, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 q = coef[i];
  float x = q.w > 0.0f ? 1.0f : -1.0f;
  float fx = 0.0f;
  for (int it = 0; it < iters; ++it) {
    fx = ((q.x * x + q.y) * x + q.z) * x - q.w;
    float dfx = (3.0f * q.x * x + 2.0f * q.y) * x + q.z;
    x -= fx / (dfx + 1e-6f) + correction[(size_t)it * n + i];
  }
  root[i] = x;
  if (fabsf(fx) > 1e-2f) {
    failed[atomicAdd(failCount, 1)] = i;
  }
}

// Pointwise complex product (frequency-domain filtering), with conjugation and scaling.
__global__ void complexMultiplyConj(const float2* __restrict__ a, const float2* __restrict__ b, float2* __restrict__ out, float scale, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float2 u = a[i];
  float2 v = b[i];
  out[i] = make_float2((u.x * v.x + u.y * v.y) * scale, (u.y * v.x - u.x * v.y) * scale);
}

// Histogram of quantised values straight into global bins (no privatisation).
__global__ void histogramGlobal(const float* __restrict__ x, unsigned* __restrict__ bins, int nbins, float lo, float hi, size_t n) {
  float w = nbins / (hi - lo);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
    int b = int((x[i] - lo) * w);
    b = min(max(b, 0), nbins - 1);
    atomicAdd(&bins[b], 1u);
  }
}

// 4:1 downsample with a box filter: each thread reads four consecutive samples.
__global__ void downsample4(const float* __restrict__ in, float* __restrict__ out, int nOut) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nOut) return;
  const float* s = in + 4 * (size_t)i;
  out[i] = 0.25f * (s[0] + s[1] + s[2] + s[3]);
}

int main() {
  const int n = 1 << 25;
  srand(37);
  std::vector<float> hx(n);
  for (auto& v : hx) v = float(rand() % 2001 - 1000) / 1000.0f;
  std::vector<unsigned> hk(n);
  for (auto& k : hk) k = (unsigned(rand()) << 16) ^ unsigned(rand());
  float taps[2 * RADIUS + 1];
  for (int k = 0; k <= 2 * RADIUS; ++k) taps[k] = 1.0f / (2 * RADIUS + 1);
  CHECK(cudaMemcpyToSymbol(c_taps, taps, sizeof(taps)));

  float *x, *y, *z, *dtaps;
  CHECK(cudaMalloc(&x, sizeof(float) * n));
  CHECK(cudaMalloc(&y, sizeof(float) * n));
  CHECK(cudaMalloc(&z, sizeof(float) * n));
  CHECK(cudaMalloc(&dtaps, sizeof(taps)));
  CHECK(cudaMemcpy(x, hx.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dtaps, taps, sizeof(taps), cudaMemcpyHostToDevice));

  unsigned *keysA, *keysB, *counts, *offsets;
  const int blocks = (n + KEYS_PER_BLOCK - 1) / KEYS_PER_BLOCK;
  CHECK(cudaMalloc(&keysA, sizeof(unsigned) * n));
  CHECK(cudaMalloc(&keysB, sizeof(unsigned) * n));
  CHECK(cudaMalloc(&counts, sizeof(unsigned) * RADIX * blocks));
  CHECK(cudaMalloc(&offsets, sizeof(unsigned) * RADIX * blocks));
  CHECK(cudaMemcpy(keysA, hk.data(), sizeof(unsigned) * n, cudaMemcpyHostToDevice));

  const int ns = 1 << 22, iters = 12;
  std::vector<float4> hc(ns);
  for (auto& q : hc) q = make_float4(1.0f, float(rand() % 5), float(rand() % 7), float(rand() % 200 - 100));
  float4* coef;
  float *corr, *root;
  int *failed, *failCount;
  CHECK(cudaMalloc(&coef, sizeof(float4) * ns));
  CHECK(cudaMalloc(&corr, sizeof(float) * (size_t)ns * iters));
  CHECK(cudaMalloc(&root, sizeof(float) * ns));
  CHECK(cudaMalloc(&failed, sizeof(int) * ns));
  CHECK(cudaMalloc(&failCount, sizeof(int)));
  CHECK(cudaMemcpy(coef, hc.data(), sizeof(float4) * ns, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(corr, 0, sizeof(float) * (size_t)ns * iters));
  CHECK(cudaMemset(failCount, 0, sizeof(int)));

  unsigned* bins;
  CHECK(cudaMalloc(&bins, sizeof(unsigned) * 512));
  CHECK(cudaMemset(bins, 0, sizeof(unsigned) * 512));

  for (int rep = 0; rep < 2; ++rep) {
    conv1dTiled<<<(n + TILE - 1) / TILE, TILE>>>(x, y, n);
    conv1dDirect<<<(n + 255) / 256, 256>>>(x, dtaps, y, n, RADIUS);
    int shift = 4 * rep;
    radixHistogram<<<blocks, 256>>>(rep ? keysB : keysA, counts, n, shift);
    scanCounts<<<1, 1024>>>(counts, offsets, RADIX * blocks);
    radixScatter<<<blocks, KEYS_PER_BLOCK>>>(rep ? keysB : keysA, rep ? keysA : keysB, offsets, n, shift);
    newtonCubic<<<(ns + 255) / 256, 256>>>(coef, corr, root, failed, failCount, ns, iters);
    complexMultiplyConj<<<(n / 2 + 255) / 256, 256>>>((const float2*)x, (const float2*)y, (float2*)z, 1.0f / n, n / 2);
    histogramGlobal<<<132 * 8, 256>>>(x, bins, 512, -1.0f, 1.0f, n);
    downsample4<<<(n / 4 + 255) / 256, 256>>>(x, y, n / 4);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> hs(1024);
  CHECK(cudaMemcpy(hs.data(), keysA, sizeof(unsigned) * 1024, cudaMemcpyDeviceToHost));
  int sorted = 1;
  for (int k = 1; k < 1024; ++k) sorted &= (hs[k - 1] & 0xff) <= (hs[k] & 0xff);
  int fails = 0;
  CHECK(cudaMemcpy(&fails, failCount, sizeof(int), cudaMemcpyDeviceToHost));
  printf("heldout_signal: ok (low byte sorted in the first 1024: %d, newton failures %d)\n", sorted, fails);
  return 0;
}
