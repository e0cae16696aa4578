// Probe for bank-conflict's 16-bank padding advice (GPU machine; docs/rules/bank-conflict.md): the
// work-efficient scan padded with >> 4 (16 banks) and with >> 5 (32 banks); ncu counts the shared
// wavefronts and bank conflicts of each. Build: nvcc -arch=sm_90 -o probe scripts/bank_padding_probe.cu
#include <cstdio>
#define NUM_BANKS 16
#define LOG_NUM_BANKS 4
#define CONFLICT_FREE_OFFSET(n) ((n) >> LOG_NUM_BANKS)
#define LOG_BANKS_32 5
#define OFFSET_32(n) ((n) >> LOG_BANKS_32)

__global__ void prescan16(float* g_odata, const float* g_idata, int n) {
  extern __shared__ float temp[];
  int thid = threadIdx.x;
  int ai = thid, bi = thid + (n / 2);
  temp[ai + CONFLICT_FREE_OFFSET(ai)] = g_idata[ai];
  temp[bi + CONFLICT_FREE_OFFSET(bi)] = g_idata[bi];
  int offset = 1;
  for (int d = n >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (thid < d) {
      int ai = offset * (2 * thid + 1) - 1;
      int bi = offset * (2 * thid + 2) - 1;
      ai += CONFLICT_FREE_OFFSET(ai);
      bi += CONFLICT_FREE_OFFSET(bi);
      temp[bi] += temp[ai];
    }
    offset *= 2;
  }
  __syncthreads();
  g_odata[ai] = temp[ai + CONFLICT_FREE_OFFSET(ai)];
  g_odata[bi] = temp[bi + CONFLICT_FREE_OFFSET(bi)];
}
__global__ void prescan32(float* g_odata, const float* g_idata, int n) {
  extern __shared__ float temp[];
  int thid = threadIdx.x;
  int ai = thid, bi = thid + (n / 2);
  temp[ai + OFFSET_32(ai)] = g_idata[ai];
  temp[bi + OFFSET_32(bi)] = g_idata[bi];
  int offset = 1;
  for (int d = n >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (thid < d) {
      int ai = offset * (2 * thid + 1) - 1;
      int bi = offset * (2 * thid + 2) - 1;
      ai += OFFSET_32(ai);
      bi += OFFSET_32(bi);
      temp[bi] += temp[ai];
    }
    offset *= 2;
  }
  __syncthreads();
  g_odata[ai] = temp[ai + OFFSET_32(ai)];
  g_odata[bi] = temp[bi + OFFSET_32(bi)];
}
void launch(float* o, const float* i) {
  prescan16<<<1, 256, 600 * sizeof(float)>>>(o, i, 512);
  prescan32<<<1, 256, 600 * sizeof(float)>>>(o, i, 512);
}
int main() {
  float *o, *i;
  cudaMalloc(&o, 1024 * sizeof(float));
  cudaMalloc(&i, 1024 * sizeof(float));
  cudaMemset(i, 0, 1024 * sizeof(float));
  for (int r = 0; r < 3; ++r) launch(o, i);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
