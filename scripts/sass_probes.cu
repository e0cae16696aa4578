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
__global__ void atomicAdd64ConstOne(unsigned long long* m) { atomicAdd(m, 1ull); }
__global__ void atomicAdd64ConstReturn(unsigned long long* m, unsigned long long* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = atomicAdd(m, 1ull);
}
// nvcc's scoped atomic built-ins (CUDA 12.8+): does ptxas aggregate them per warp like atomicAdd?
__global__ void nvAtomicFetchAdd32One(unsigned* c) { __nv_atomic_fetch_add(c, 1u, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE); }
__global__ void nvAtomicFetchAdd32Value(unsigned* c, const unsigned* in) {
  __nv_atomic_fetch_add(c, in[blockIdx.x * blockDim.x + threadIdx.x], __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
}
__global__ void nvAtomicFetchAdd64One(unsigned long long* c) { __nv_atomic_fetch_add(c, 1ull, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE); }
__global__ void nvAtomicFetchAdd64Value(unsigned long long* c, const unsigned long long* in) {
  __nv_atomic_fetch_add(c, in[blockIdx.x * blockDim.x + threadIdx.x], __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
}
__global__ void nvAtomicFetchMax32Value(unsigned* c, const unsigned* in) {
  __nv_atomic_fetch_max(c, in[blockIdx.x * blockDim.x + threadIdx.x], __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
}
__global__ void nvAtomicFetchOr32Value(unsigned* c, const unsigned* in) {
  __nv_atomic_fetch_or(c, in[blockIdx.x * blockDim.x + threadIdx.x], __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
}
__global__ void nvAtomicFetchAddFloat(float* c, const float* in) {
  __nv_atomic_fetch_add(c, in[blockIdx.x * blockDim.x + threadIdx.x], __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
}
__global__ void nvAtomicFetchAdd32Acquire(unsigned* c) { __nv_atomic_fetch_add(c, 1u, __NV_ATOMIC_ACQ_REL, __NV_THREAD_SCOPE_DEVICE); }
__global__ void nvAtomicFetchAdd32Block(unsigned* c) { __nv_atomic_fetch_add(c, 1u, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_BLOCK); }
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
