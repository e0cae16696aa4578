// Patterns whose machine code decides what the device-side rules say (scripts/sass-check.sh
// compiles this and the fixtures with nvcc -arch=sm_90 and counts instructions per kernel).
__global__ void atomicCounterOne(int* counter) { atomicAdd(counter, 1); }
__global__ void atomicCounterValue(int* counter, const int* in) { atomicAdd(counter, in[blockIdx.x * blockDim.x + threadIdx.x]); }
__global__ void atomicCounterReturn(int* counter, int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = atomicAdd(counter, 1); }
__global__ void atomicFloatSum(float* sum, const float* in) { atomicAdd(sum, in[blockIdx.x * blockDim.x + threadIdx.x]); }
__global__ void atomicMaxOne(unsigned* m, const unsigned* in) { atomicMax(m, in[blockIdx.x * blockDim.x + threadIdx.x]); }
// Which other integer atomics nvcc aggregates per warp on one address (per-lane values).
#define PROBE(op, T) __global__ void atomic##op##One(T* m, const T* in) { atomic##op(m, in[blockIdx.x * blockDim.x + threadIdx.x]); }
PROBE(Sub, int)
PROBE(Min, int)
PROBE(And, int)
PROBE(Or, int)
PROBE(Xor, int)
PROBE(Exch, int)
PROBE(Inc, unsigned)
PROBE(Dec, unsigned)
__global__ void atomicAdd64One(unsigned long long* m, const unsigned long long* in) { atomicAdd(m, in[blockIdx.x * blockDim.x + threadIdx.x]); }
__global__ void atomicSubConstOne(int* m) { atomicSub(m, 1); }
__global__ void atomicHist4(unsigned* bins, const int* in) { atomicAdd(&bins[in[blockIdx.x * blockDim.x + threadIdx.x] & 3], 1u); }

__global__ void promoteMul11(float* a) { int i = blockIdx.x * blockDim.x + threadIdx.x; a[i] = a[i] * 1.1; }
__global__ void promoteMul05(float* a) { int i = blockIdx.x * blockDim.x + threadIdx.x; a[i] = a[i] * 0.5; }
__global__ void promoteMul30(float* a) { int i = blockIdx.x * blockDim.x + threadIdx.x; a[i] = a[i] * 3.0; }
__global__ void promoteChain20(float* a, const float* b) { int i = blockIdx.x * blockDim.x + threadIdx.x; a[i] = a[i] * 2.0 + b[i]; }
__global__ void promoteSqrt(float* a) { int i = blockIdx.x * blockDim.x + threadIdx.x; a[i] = sqrt(a[i]); }

__global__ void localRead16(const int* in, float* out) {
  float t[16];
#pragma unroll
  for (int k = 0; k < 16; ++k) t[k] = k * 0.5f + in[k];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = t[in[i] & 15];
}
__global__ void localRead64(const int* in, float* out) {
  float t[64];
#pragma unroll
  for (int k = 0; k < 64; ++k) t[k] = k * 0.5f + in[k];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = t[in[i] & 63];
}
__global__ void localWrite32(const unsigned* in, unsigned* out, int n) {
  unsigned h[32];
#pragma unroll
  for (int b = 0; b < 32; ++b) h[b] = 0;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 16; ++k) h[in[k * n + i] & 31] += 1;
#pragma unroll
  for (int b = 0; b < 32; ++b) out[b * n + i] = h[b];
}
