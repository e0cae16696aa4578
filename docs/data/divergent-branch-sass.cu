__global__ void example1(int* p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < 5) p[i] = 10;
  else p[i] = 5;
}
__global__ void initializeC(float* c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i % 2 == 0) c[i] = 2.0f;
  else c[i] = 1.0f;
}
__global__ void initializeHeavy(float* c, const float* a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i % 2 == 0) c[i] = a[i] * a[i + 1] + a[i + 2];
  else c[i] = a[i] - a[i + 1];
}
__global__ void haloLoad(const float* in, float* out, int w) {
  __shared__ float tile[17][16];
  int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
  tile[threadIdx.y + 1][threadIdx.x] = in[y * w + x];
  if (threadIdx.y == 0) tile[0][threadIdx.x] = in[(y - 1) * w + x];
  __syncthreads();
  out[y * w + x] = tile[threadIdx.y][threadIdx.x] + tile[threadIdx.y + 1][threadIdx.x];
}
#define SWAP(a, b) { float t_ = a; a = b; b = t_; }
__global__ void bitonicSwap(float* v) {
  float x = v[threadIdx.x], y = v[threadIdx.x + 256];
  int lane = threadIdx.x & 31;
  for (int k = 0; k < 4; ++k) {
    x = __shfl_xor_sync(0xffffffffu, x, 1 << k);
    if (lane & 1) SWAP(x, y);
  }
  v[threadIdx.x] = x + y;
}
__global__ void leaderWrites(const float* in, float* out) {
  __shared__ float red[8][64];
  float m = in[blockIdx.x * 256 + threadIdx.x];
  for (int r = 0; r < 8; ++r) {
    if ((threadIdx.x & 3) == 0) red[r][threadIdx.x / 4] = fmaxf(m, 0.0f);
    m *= 0.5f;
  }
  __syncthreads();
  out[blockIdx.x * 256 + threadIdx.x] = red[threadIdx.x / 32][threadIdx.x % 64];
}
template <class T> __global__ void reduce0(T* g_idata, T* g_odata) {
  extern __shared__ int sdata[];
  unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = g_idata[i];
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
template __global__ void reduce0<int>(int*, int*);
// Three uint2 XORs a side through a one-line operator^= (ccminer's lyra2 row exchange, 4x8 block).
static __device__ __forceinline__ uint2 operator^(uint2 a, uint2 b) { return make_uint2(a.x ^ b.x, a.y ^ b.y); }
static __device__ __forceinline__ void operator^=(uint2& a, uint2 b) { a = a ^ b; }
__global__ void xorByOperator(uint2* g) {
  uint2 s[3], d0 = g[threadIdx.x], d1 = g[threadIdx.x + 32], d2 = g[threadIdx.x + 64];
  for (int j = 0; j < 3; ++j) s[j] = g[blockIdx.x * 96 + j * 32 + threadIdx.y * 4 + threadIdx.x];
  if (threadIdx.x == 0) {
    s[0] ^= d2; s[1] ^= d0; s[2] ^= d1;
  } else {
    s[0] ^= d0; s[1] ^= d1; s[2] ^= d2;
  }
  for (int j = 0; j < 3; ++j) g[blockIdx.x * 96 + j * 32 + threadIdx.y * 4 + threadIdx.x] = s[j];
}
