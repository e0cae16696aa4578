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
