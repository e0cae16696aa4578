// Probe for the inline-PTX accesses the kernel model evaluates (ldmatrix, stmatrix, cp.async,
// ld.shared.v4, ld.global.nc.v4; docs/rules/bank-conflict.md "Today's hardware"): ncu's per-SASS
// "L1 Conflicts Shared N-Way" and wavefront counts of each layout, next to what gpuopt-lint says of
// the same lines. GPU machine: scripts/ptx-access-probe.sh. Here: gpuopt-lint scripts/ptx_access_probe.cu
#include <cstdio>

// Rows of STRIDE 16-bit elements; lane l gives the row address of row l % 16, 16-byte chunk l / 16
// (the A-operand fragment of an m16n8k16 mma), the chunk XOR-swizzled by the row when SWIZZLE.
template <int STRIDE, bool SWIZZLE>
__device__ unsigned rowAddress(unsigned short* s) {
  unsigned lane = threadIdx.x % 32, row = lane % 16, chunk = lane / 16;
  if (SWIZZLE) chunk ^= row % 8;
  return static_cast<unsigned>(__cvta_generic_to_shared(&s[row * STRIDE + chunk * 8]));
}

template <int STRIDE, bool SWIZZLE>
__device__ void fill(unsigned short* s, const int4* g) {
  for (int i = threadIdx.x; i < 16 * STRIDE / 8; i += blockDim.x) reinterpret_cast<int4*>(s)[i] = g[i];
  __syncthreads();
}

// 128-byte rows: the 8 rows of each 8x8 matrix start on the same banks.
__global__ void ldsmX4Rows128(const int4* g, unsigned* out) {
  __shared__ __align__(128) unsigned short s[16 * 64];
  fill<64, false>(s, g);
  unsigned a = rowAddress<64, false>(s);
  unsigned r0, r1, r2, r3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a));
  out[blockIdx.x * blockDim.x + threadIdx.x] = r0 ^ r1 ^ r2 ^ r3;
}
// Padded by one 16-byte chunk (144-byte rows).
__global__ void ldsmX4Rows144(const int4* g, unsigned* out) {
  __shared__ __align__(128) unsigned short s[16 * 72];
  fill<72, false>(s, g);
  unsigned a = rowAddress<72, false>(s);
  unsigned r0, r1, r2, r3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a));
  out[blockIdx.x * blockDim.x + threadIdx.x] = r0 ^ r1 ^ r2 ^ r3;
}
// 64-byte rows: rows two apart share banks.
__global__ void ldsmX4Rows64(const int4* g, unsigned* out) {
  __shared__ __align__(128) unsigned short s[16 * 32];
  fill<32, false>(s, g);
  unsigned a = rowAddress<32, false>(s);
  unsigned r0, r1, r2, r3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a));
  out[blockIdx.x * blockDim.x + threadIdx.x] = r0 ^ r1 ^ r2 ^ r3;
}
// 128-byte rows, chunks XOR-swizzled by the row.
__global__ void ldsmX4Swizzled(const int4* g, unsigned* out) {
  __shared__ __align__(128) unsigned short s[16 * 64];
  fill<64, true>(s, g);
  unsigned a = rowAddress<64, true>(s);
  unsigned r0, r1, r2, r3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a));
  out[blockIdx.x * blockDim.x + threadIdx.x] = r0 ^ r1 ^ r2 ^ r3;
}
// .x1 and .x2 use the row addresses of lanes 0-7 and 0-15 only.
__global__ void ldsmX1Rows128(const int4* g, unsigned* out) {
  __shared__ __align__(128) unsigned short s[16 * 64];
  fill<64, false>(s, g);
  unsigned a = rowAddress<64, false>(s);
  unsigned r0;
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r0) : "r"(a));
  out[blockIdx.x * blockDim.x + threadIdx.x] = r0;
}
__global__ void ldsmX2Trans80(const int4* g, unsigned* out) {
  __shared__ __align__(128) unsigned short s[16 * 40];
  fill<40, false>(s, g);
  unsigned a = rowAddress<40, false>(s);
  unsigned r0, r1;
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n" : "=r"(r0), "=r"(r1) : "r"(a));
  out[blockIdx.x * blockDim.x + threadIdx.x] = r0 ^ r1;
}
// stmatrix (sm_90): the same row addresses, stored.
__global__ void stsmX4Rows128(const unsigned* in, int4* out) {
  __shared__ __align__(128) unsigned short s[16 * 64];
  unsigned a = rowAddress<64, false>(s);
  unsigned v = in[threadIdx.x];
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(v), "r"(v), "r"(v), "r"(v));
  __syncthreads();
  for (int i = threadIdx.x; i < 16 * 64 / 8; i += blockDim.x) out[i] = reinterpret_cast<int4*>(s)[i];
}
// cp.async of 16 bytes per lane into 128-byte rows (one row per lane) and into consecutive chunks.
__global__ void cpAsyncRows128(const int4* g, int4* out) {
  __shared__ __align__(128) int4 s[32 * 8];
  unsigned lane = threadIdx.x % 32;
  unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&s[lane * 8]));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(g + lane));
  asm volatile("cp.async.wait_all;\n" ::);
  __syncthreads();
  out[threadIdx.x] = s[lane * 8];
}
__global__ void cpAsyncContiguous(const int4* g, int4* out) {
  __shared__ __align__(128) int4 s[32];
  unsigned lane = threadIdx.x % 32;
  unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&s[lane]));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(g + lane));
  asm volatile("cp.async.wait_all;\n" ::);
  __syncthreads();
  out[threadIdx.x] = s[lane];
}
// ld.shared.v4 at 128-byte rows; ld.global.nc.v4 with a 128-byte stride (4 sectors of 32 used... 1 in 4).
__global__ void ldsV4Rows128(const int4* g, int4* out) {
  __shared__ __align__(128) int4 s[32 * 8];
  for (int i = threadIdx.x; i < 32 * 8; i += blockDim.x) s[i] = g[i];
  __syncthreads();
  unsigned lane = threadIdx.x % 32;
  unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(&s[lane * 8]));
  int x, y, z, w;
  asm volatile("ld.shared.v4.s32 {%0, %1, %2, %3}, [%4];\n" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(a));
  out[threadIdx.x] = make_int4(x, y, z, w);
}
__global__ void ldgV4Strided(const float4* g, float4* out) {
  float x, y, z, w;
  asm volatile("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(x), "=f"(y), "=f"(z), "=f"(w) : "l"(g + threadIdx.x * 8));
  out[threadIdx.x] = make_float4(x, y, z, w);
}

int main() {
  int4* g;
  unsigned* u;
  int4* o;
  cudaMalloc(&g, 1 << 20);
  cudaMalloc(&u, 1 << 16);
  cudaMalloc(&o, 1 << 16);
  cudaMemset(g, 1, 1 << 20);
  cudaMemset(u, 1, 1 << 16);
  ldsmX4Rows128<<<1, 32>>>(g, u);
  ldsmX4Rows144<<<1, 32>>>(g, u);
  ldsmX4Rows64<<<1, 32>>>(g, u);
  ldsmX4Swizzled<<<1, 32>>>(g, u);
  ldsmX1Rows128<<<1, 32>>>(g, u);
  ldsmX2Trans80<<<1, 32>>>(g, u);
  stsmX4Rows128<<<1, 32>>>(u, o);
  cpAsyncRows128<<<1, 32>>>(g, o);
  cpAsyncContiguous<<<1, 32>>>(g, o);
  ldsV4Rows128<<<1, 32>>>(g, o);
  ldgV4Strided<<<1, 32>>>(reinterpret_cast<const float4*>(g), reinterpret_cast<float4*>(o));
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
