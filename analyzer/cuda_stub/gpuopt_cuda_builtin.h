// gpuopt-lint's bundled CUDA declarations, used when no CUDA toolkit is found (or --no-cuda).
// Enough of the runtime API, the built-in variables, intrinsics and cooperative groups for the
// analyzer to parse typical CUDA code. Parsed with --cuda-host-only (see docs/architecture.md).
#pragma once
// A system header, as the toolkit's are: its intrinsics (__popc, sqrtf, ...) are library
// functions the model numbers by their arguments, and its code is not the user's.
#pragma GCC system_header
#ifndef GPUOPT_CUDA_BUILTIN_H
#define GPUOPT_CUDA_BUILTIN_H
#include <stddef.h>
// What nvcc's crt/common_functions.h brings in every compilation (string.h, time.h), and stdlib.h,
// which Clang's own cuda_wrappers/new (reached through <algorithm>, <memory>, ...) needs for
// ::malloc: without it `#include <algorithm>` alone was a compile error here.
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__
#define CUDART_VERSION 12080
#define __CUDACC__ 1
// nvcc's own macros, as gpuopt_nvcc_compat.h defines them with a toolkit (the version of these
// declarations).
#define __NVCC__ 1
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 8
#define __CUDACC_VER_BUILD__ 0

struct uint3 { unsigned int x, y, z; };
#include "__clang_cuda_builtin_vars.h"

struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  __host__ __device__ constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

#define GPUOPT_VEC(T, N) struct N##1 { T x; }; struct N##2 { T x, y; }; struct N##3 { T x, y, z; }; struct N##4 { T x, y, z, w; }; \
  __host__ __device__ inline N##2 make_##N##2(T a, T b) { return {a, b}; } \
  __host__ __device__ inline N##3 make_##N##3(T a, T b, T c) { return {a, b, c}; } \
  __host__ __device__ inline N##4 make_##N##4(T a, T b, T c, T d) { return {a, b, c, d}; }
GPUOPT_VEC(float, float)
GPUOPT_VEC(double, double)
GPUOPT_VEC(int, int)
GPUOPT_VEC(short, short)
GPUOPT_VEC(char, char)
GPUOPT_VEC(unsigned char, uchar)
GPUOPT_VEC(unsigned short, ushort)
GPUOPT_VEC(long long, longlong)
#undef GPUOPT_VEC
struct ulonglong1 { unsigned long long x; };
struct ulonglong2 { unsigned long long x, y; };
struct uint1 { unsigned int x; };
struct uint2 { unsigned int x, y; };
struct uint4 { unsigned int x, y, z, w; };
__host__ __device__ inline uint2 make_uint2(unsigned a, unsigned b) { return {a, b}; }
__host__ __device__ inline uint3 make_uint3(unsigned a, unsigned b, unsigned c) { return {a, b, c}; }
__host__ __device__ inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }

enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorNoDevice = 100 };
typedef enum cudaError cudaError_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
struct cudaDeviceProp { char name[256]; size_t totalGlobalMem; int major, minor, multiProcessorCount, warpSize, maxThreadsPerBlock; size_t sharedMemPerBlock; int memoryClockRate, memoryBusWidth, l2CacheSize; };
struct cudaPitchedPtr { void* ptr; size_t pitch, xsize, ysize; };
struct cudaExtent { size_t width, height, depth; };
struct cudaPos { size_t x, y, z; };
inline cudaPitchedPtr make_cudaPitchedPtr(void* d, size_t p, size_t xsz, size_t ysz) { return {d, p, xsz, ysz}; }
inline cudaExtent make_cudaExtent(size_t w, size_t h, size_t d) { return {w, h, d}; }
struct cudaMemcpy3DParms { void* srcArray; cudaPos srcPos; cudaPitchedPtr srcPtr; void* dstArray; cudaPos dstPos; cudaPitchedPtr dstPtr; cudaExtent extent; cudaMemcpyKind kind; };
// Textures, arrays and channel descriptions (texture objects and the legacy references in
// gpuopt_legacy_cuda.h).
enum cudaLimit { cudaLimitStackSize = 0, cudaLimitPrintfFifoSize = 1, cudaLimitMallocHeapSize = 2 };
enum cudaFuncCache { cudaFuncCachePreferNone = 0, cudaFuncCachePreferShared = 1, cudaFuncCachePreferL1 = 2, cudaFuncCachePreferEqual = 3 };
enum cudaChannelFormatKind { cudaChannelFormatKindSigned = 0, cudaChannelFormatKindUnsigned = 1, cudaChannelFormatKindFloat = 2, cudaChannelFormatKindNone = 3 };
struct cudaChannelFormatDesc { int x, y, z, w; enum cudaChannelFormatKind f; };
enum cudaTextureReadMode { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };
enum cudaTextureFilterMode { cudaFilterModePoint = 0, cudaFilterModeLinear = 1 };
enum cudaTextureAddressMode { cudaAddressModeWrap = 0, cudaAddressModeClamp = 1, cudaAddressModeMirror = 2, cudaAddressModeBorder = 3 };
enum cudaSurfaceBoundaryMode { cudaBoundaryModeZero = 0, cudaBoundaryModeClamp = 1, cudaBoundaryModeTrap = 2 };
typedef struct cudaArray* cudaArray_t;
typedef const struct cudaArray* cudaArray_const_t;
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;
template <class T> cudaChannelFormatDesc cudaCreateChannelDesc(void);
cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f);
#define cudaHostAllocDefault 0
#define cudaHostAllocPortable 1
#define cudaHostAllocMapped 2
#define cudaHostAllocWriteCombined 4
#define cudaHostRegisterDefault 0
#define cudaMemAttachGlobal 1
#define cudaStreamNonBlocking 1

extern "C" {
cudaError_t cudaMalloc(void** p, size_t n);
cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t w, size_t h);
cudaError_t cudaMallocManaged(void** p, size_t n, unsigned int flags = cudaMemAttachGlobal);
cudaError_t cudaFree(void* p);
cudaError_t cudaMallocHost(void** p, size_t n);
cudaError_t cudaHostAlloc(void** p, size_t n, unsigned int flags);
cudaError_t cudaFreeHost(void* p);
cudaError_t cudaHostRegister(void* p, size_t n, unsigned int flags);
cudaError_t cudaHostUnregister(void* p);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s = 0);
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t w, size_t h, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t w, size_t h, cudaMemcpyKind kind, cudaStream_t s = 0);
cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p);
cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t s = 0);
cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t s);
cudaError_t cudaFreeAsync(void* p, cudaStream_t s);
cudaError_t cudaMemset(void* p, int v, size_t n);
cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t s = 0);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char* cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetDeviceCount(int* n);
cudaError_t cudaSetDevice(int d);
cudaError_t cudaGetDevice(int* d);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int d);
cudaError_t cudaStreamCreate(cudaStream_t* s);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
typedef struct CUgraph_st* cudaGraph_t;
typedef struct CUgraphExec_st* cudaGraphExec_t;
typedef struct CUgraphNode_st* cudaGraphNode_t;
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1, cudaStreamCaptureModeRelaxed = 2 };
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* g);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e);
cudaError_t cudaGraphDestroy(cudaGraph_t g);
cudaError_t cudaEventCreate(cudaEvent_t* e);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b);
cudaError_t cudaFuncSetAttribute(const void* f, int attr, int value);
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem = 0, void* stream = 0);
cudaError_t cudaConfigureCall(dim3 grid, dim3 block, size_t shmem = 0, cudaStream_t stream = 0);
cudaError_t cudaLaunchKernel(const void* f, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s);
typedef struct cudaLaunchAttribute_st { int id; char pad[60]; } cudaLaunchAttribute;
typedef struct cudaLaunchConfig_st {
  dim3 gridDim;
  dim3 blockDim;
  size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute* attrs;
  unsigned int numAttrs;
} cudaLaunchConfig_t;
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args);
cudaError_t cudaMallocArray(cudaArray_t* a, const cudaChannelFormatDesc* d, size_t w, size_t h = 0, unsigned int flags = 0);
cudaError_t cudaFreeArray(cudaArray_t a);
cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOff, size_t hOff, const void* src, size_t n, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOff, size_t hOff, const void* src, size_t spitch, size_t w, size_t h, cudaMemcpyKind kind);
cudaError_t cudaDeviceSetLimit(enum cudaLimit l, size_t v);
cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache c);
}
template <class... E, class... A>
inline cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t* c, void (*k)(E...), A&&... a) {
  return cudaLaunchKernelExC(c, (const void*)k, 0);
}
template <class T> inline cudaError_t cudaMalloc(T** p, size_t n) { return cudaMalloc((void**)p, n); }
template <class T> inline cudaError_t cudaMallocHost(T** p, size_t n) { return cudaMallocHost((void**)p, n); }
template <class T> inline cudaError_t cudaHostAlloc(T** p, size_t n, unsigned int f) { return cudaHostAlloc((void**)p, n, f); }
template <class T> inline cudaError_t cudaMallocManaged(T** p, size_t n, unsigned int f = cudaMemAttachGlobal) { return cudaMallocManaged((void**)p, n, f); }
template <class T> inline cudaError_t cudaMemcpyToSymbol(const T& sym, const void* src, size_t n, size_t off = 0, cudaMemcpyKind k = cudaMemcpyHostToDevice);
template <class T> inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& sym, size_t n, size_t off = 0, cudaMemcpyKind k = cudaMemcpyDeviceToHost);
template <class T> inline cudaError_t cudaMemcpyToSymbolAsync(const T& sym, const void* src, size_t n, size_t off = 0, cudaMemcpyKind k = cudaMemcpyHostToDevice, cudaStream_t s = 0);
template <class T> inline cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& sym, size_t n, size_t off = 0, cudaMemcpyKind k = cudaMemcpyDeviceToHost, cudaStream_t s = 0);
template <class T> inline cudaError_t cudaMallocAsync(T** p, size_t n, cudaStream_t s) { return cudaMallocAsync((void**)p, n, s); }

// Device intrinsics.
// Device-side launches (dynamic parallelism, -fgpu-rdc): what Clang lowers `k<<<g, b>>>()` to.
extern "C" __device__ void* cudaGetParameterBuffer(size_t alignment, size_t size);
extern "C" __device__ cudaError_t cudaLaunchDevice(void* func, void* params, dim3 grid, dim3 block,
                                                   unsigned int shmem, cudaStream_t stream);
__device__ void __syncthreads(void);
__device__ int __syncthreads_count(int);
__device__ int __syncthreads_and(int);
__device__ int __syncthreads_or(int);
__device__ void __syncwarp(unsigned mask = 0xffffffffu);
__device__ void __trap();
__device__ void __brkpt();
__device__ void __threadfence(void);
__device__ void __threadfence_block(void);
__device__ void __barrier_sync(unsigned id);
template <class T> __device__ T __shfl_sync(unsigned m, T v, int src, int w = 32);
template <class T> __device__ T __shfl_up_sync(unsigned m, T v, unsigned d, int w = 32);
template <class T> __device__ T __shfl_down_sync(unsigned m, T v, unsigned d, int w = 32);
template <class T> __device__ T __shfl_xor_sync(unsigned m, T v, int l, int w = 32);
__device__ unsigned __ballot_sync(unsigned m, int p);
__device__ unsigned __reduce_add_sync(unsigned m, unsigned v);
__device__ int __reduce_add_sync(unsigned m, int v);
__device__ unsigned __reduce_min_sync(unsigned m, unsigned v);
__device__ int __reduce_min_sync(unsigned m, int v);
__device__ unsigned __reduce_max_sync(unsigned m, unsigned v);
__device__ int __reduce_max_sync(unsigned m, int v);
__device__ unsigned __reduce_and_sync(unsigned m, unsigned v);
__device__ unsigned __reduce_or_sync(unsigned m, unsigned v);
__device__ unsigned __reduce_xor_sync(unsigned m, unsigned v);
__device__ int __all_sync(unsigned m, int p);
__device__ int __any_sync(unsigned m, int p);
__device__ unsigned __activemask(void);
// Address-space tests and conversions (sm_20_intrinsics.h, which nvcc always includes).
__device__ unsigned __isGlobal(const void* p);
__device__ unsigned __isShared(const void* p);
__device__ unsigned __isConstant(const void* p);
__device__ unsigned __isLocal(const void* p);
__device__ size_t __cvta_generic_to_global(const void* p);
__device__ size_t __cvta_generic_to_shared(const void* p);
__device__ size_t __cvta_generic_to_constant(const void* p);
__device__ size_t __cvta_generic_to_local(const void* p);
__device__ void* __cvta_global_to_generic(size_t raw);
__device__ void* __cvta_shared_to_generic(size_t raw);
__device__ void* __cvta_constant_to_generic(size_t raw);
__device__ void* __cvta_local_to_generic(size_t raw);
// Pre-Volta warp intrinsics without a mask (Clang declares them in the toolkit parse too).
template <class T> __device__ T __shfl(T v, int src, int w = 32);
template <class T> __device__ T __shfl_up(T v, unsigned d, int w = 32);
template <class T> __device__ T __shfl_down(T v, unsigned d, int w = 32);
template <class T> __device__ T __shfl_xor(T v, int l, int w = 32);
__device__ unsigned __ballot(int p);
__device__ int __all(int p);
__device__ int __any(int p);
__device__ int __popc(unsigned);
__device__ int __clz(int);
__device__ int __ffs(int);
__device__ int __mul24(int, int);
__device__ unsigned __umul24(unsigned, unsigned);
// The operand's own type: `atomicAdd(unsignedPtr, 1)` compiles as with the toolkit's overloads.
template <class T, class U> __device__ T atomicAdd(T* a, U v);
template <class T, class U> __device__ T atomicSub(T* a, U v);
template <class T, class U> __device__ T atomicMax(T* a, U v);
template <class T, class U> __device__ T atomicMin(T* a, U v);
template <class T, class U> __device__ T atomicExch(T* a, U v);
template <class T, class U, class V> __device__ T atomicCAS(T* a, U c, V v);
template <class T, class U> __device__ T atomicDec(T* a, U v);
template <class T, class U> __device__ T atomicAnd(T* a, U v);
template <class T, class U> __device__ T atomicOr(T* a, U v);
template <class T, class U> __device__ T atomicXor(T* a, U v);
template <class T, class U> __device__ T atomicInc(T* a, U v);
template <class T> __device__ T __ldg(const T* p);
__device__ long long clock64(void);
__device__ float __fdividef(float, float);
__device__ float __expf(float);
__device__ float __logf(float);
__device__ float __sinf(float);
__device__ float __cosf(float);
__device__ float rsqrtf(float);
__device__ float __saturatef(float);
template <class T> __host__ __device__ constexpr T min(T a, T b) { return a < b ? a : b; }
template <class T> __host__ __device__ constexpr T max(T a, T b) { return a > b ? a : b; }

namespace cooperative_groups {
struct thread_group {
  __device__ void sync() const;
  __device__ unsigned long long size() const;
  __device__ unsigned long long num_threads() const;
  __device__ unsigned long long thread_rank() const;
};
struct thread_block : thread_group {
  // Static in CUDA 13's cooperative_groups.h: `block.group_index()` is a plain call there.
  static __device__ dim3 group_index();
  static __device__ dim3 thread_index();
  __device__ dim3 group_dim() const;
  __device__ dim3 dim_threads() const;
};
struct grid_group : thread_group {
  __device__ bool is_valid() const;
};
template <unsigned N, class P = void> struct thread_block_tile : thread_group {
  template <class T> __device__ T shfl(T v, int src) const;
  template <class T> __device__ T shfl_down(T v, unsigned d) const;
  template <class T> __device__ T shfl_up(T v, unsigned d) const;
  template <class T> __device__ T shfl_xor(T v, unsigned d) const;
  __device__ unsigned ballot(int p) const;
  __device__ int any(int p) const;
  __device__ int all(int p) const;
  __device__ unsigned long long meta_group_rank() const;
  __device__ unsigned long long meta_group_size() const;
};
struct coalesced_group : thread_group {};
__device__ thread_block this_thread_block();
__device__ grid_group this_grid();
__device__ coalesced_group coalesced_threads();
template <unsigned N, class P> __device__ thread_block_tile<N, void> tiled_partition(const P& parent);
__device__ thread_group tiled_partition(const thread_group& parent, unsigned n);
template <class G> __device__ void sync(const G& g);
template <class T> struct plus { __device__ T operator()(T a, T b) const { return a + b; } };
template <class T> struct greater { __device__ T operator()(T a, T b) const { return a > b ? a : b; } };
template <class G, class T, class Op> __device__ T reduce(const G& g, T v, Op op);
}  // namespace cooperative_groups

// Device-side assert(): glibc's macro calls __assert_fail, which is a host function; the toolkit
// (through Clang's CUDA wrapper) adds the device overload. Without it every kernel with an assert
// was a compile error in this mode.
extern "C" __device__ void __assertfail(const char* message, const char* file, unsigned line, const char* function,
                                        size_t charSize);
__device__ void __assert_fail(const char* message, const char* file, unsigned int line, const char* function);
// Device-side printf (the toolkit declares it in crt/common_functions.h).
extern "C" __device__ int printf(const char* format, ...);
// The C math library on the device (the toolkit's math_functions.h, which nvcc includes in every
// file): without it a kernel calling sqrtf or expf did not compile in this mode.
#define GPUOPT_MATH1(name) extern "C" __device__ float name##f(float); extern "C" __device__ double name(double);
#define GPUOPT_MATH2(name) extern "C" __device__ float name##f(float, float); extern "C" __device__ double name(double, double);
GPUOPT_MATH1(sqrt) GPUOPT_MATH1(cbrt) GPUOPT_MATH1(exp) GPUOPT_MATH1(exp2) GPUOPT_MATH1(exp10) GPUOPT_MATH1(expm1)
GPUOPT_MATH1(log) GPUOPT_MATH1(log2) GPUOPT_MATH1(log10) GPUOPT_MATH1(log1p) GPUOPT_MATH1(sin) GPUOPT_MATH1(cos)
GPUOPT_MATH1(tan) GPUOPT_MATH1(asin) GPUOPT_MATH1(acos) GPUOPT_MATH1(atan) GPUOPT_MATH1(sinh) GPUOPT_MATH1(cosh)
GPUOPT_MATH1(tanh) GPUOPT_MATH1(asinh) GPUOPT_MATH1(acosh) GPUOPT_MATH1(atanh) GPUOPT_MATH1(erf) GPUOPT_MATH1(erfc)
GPUOPT_MATH1(tgamma) GPUOPT_MATH1(lgamma) GPUOPT_MATH1(fabs) GPUOPT_MATH1(floor) GPUOPT_MATH1(ceil)
GPUOPT_MATH1(round) GPUOPT_MATH1(trunc) GPUOPT_MATH1(rint) GPUOPT_MATH1(nearbyint)
GPUOPT_MATH2(fmax) GPUOPT_MATH2(fmin) GPUOPT_MATH2(pow) GPUOPT_MATH2(atan2) GPUOPT_MATH2(fmod) GPUOPT_MATH2(hypot)
GPUOPT_MATH2(copysign) GPUOPT_MATH2(fdim) GPUOPT_MATH2(remainder)
#undef GPUOPT_MATH1
#undef GPUOPT_MATH2
extern "C" __device__ float fmaf(float, float, float);
extern "C" __device__ double fma(double, double, double);
extern "C" __device__ double modf(double, double*);
extern "C" __device__ float modff(float, float*);
__device__ float modf(float, float*);
extern "C" __device__ void sincosf(float, float*, float*);
extern "C" __device__ void sincos(double, double*, double*);
extern "C" __device__ int abs(int);
__device__ float __powf(float, float);
__device__ float __tanf(float);
__device__ float __log2f(float);
__device__ float __exp10f(float);
__device__ void __sincosf(float, float*, float*);

// isfinite, isnan, isinf and signbit for host and device code without <math.h>, as nvcc's
// crt/math_functions.h declares them. Templates for floating-point types only (not <cmath>, which
// would cost this mode half a second): libstdc++'s <math.h>, if the file includes it, brings in
// std::isfinite(float) and the others beside them, and those win as non-templates.
template <class T, bool = __is_floating_point(T)> struct __gpuopt_if_floating {};
template <class T> struct __gpuopt_if_floating<T, true> { typedef bool type; };
#define GPUOPT_CLASSIFY(name, builtin) \
  template <class T> __host__ __device__ inline typename __gpuopt_if_floating<T>::type name(T x) { return builtin(x); }
GPUOPT_CLASSIFY(isfinite, __builtin_isfinite)
GPUOPT_CLASSIFY(isnan, __builtin_isnan)
GPUOPT_CLASSIFY(isinf, __builtin_isinf)
GPUOPT_CLASSIFY(signbit, __builtin_signbit)
#undef GPUOPT_CLASSIFY
// The host side of the C math functions nvcc declares __host__ __device__ for float and double
// (crt/math_functions.h brings std's float overloads into the global namespace): host code such as
// a grid-shape helper calling sqrt((float)n) or modf(x, &whole) without <cmath>. Templates for
// floating-point types, as above: the non-template overloads <cmath> or <math.h> declare win.
template <class T, bool = __is_floating_point(T)> struct __gpuopt_float_result {};
template <class T> struct __gpuopt_float_result<T, true> { typedef T type; };
#define GPUOPT_HOST_MATH1(name) \
  template <class T> __host__ inline typename __gpuopt_float_result<T>::type name(T x) { return __builtin_##name(x); }
#define GPUOPT_HOST_MATH2(name) \
  template <class T> __host__ inline typename __gpuopt_float_result<T>::type name(T x, T y) { return __builtin_##name(x, y); }
GPUOPT_HOST_MATH1(fabs) GPUOPT_HOST_MATH1(ceil) GPUOPT_HOST_MATH1(floor) GPUOPT_HOST_MATH1(sqrt)
GPUOPT_HOST_MATH1(log) GPUOPT_HOST_MATH1(log10) GPUOPT_HOST_MATH1(exp) GPUOPT_HOST_MATH1(asin)
GPUOPT_HOST_MATH1(sin) GPUOPT_HOST_MATH1(sinh) GPUOPT_HOST_MATH1(acos) GPUOPT_HOST_MATH1(cos)
GPUOPT_HOST_MATH1(cosh) GPUOPT_HOST_MATH1(atan) GPUOPT_HOST_MATH1(tan) GPUOPT_HOST_MATH1(tanh)
GPUOPT_HOST_MATH2(pow) GPUOPT_HOST_MATH2(fmod) GPUOPT_HOST_MATH2(atan2)
#undef GPUOPT_HOST_MATH1
#undef GPUOPT_HOST_MATH2
template <class T> __host__ inline typename __gpuopt_float_result<T>::type modf(T x, T* whole) {
  double w = 0;
  double f = __builtin_modf(x, &w);
  *whole = static_cast<T>(w);
  return static_cast<T>(f);
}
template <class T> __host__ inline typename __gpuopt_float_result<T>::type frexp(T x, int* e) { return __builtin_frexp(x, e); }
template <class T> __host__ inline typename __gpuopt_float_result<T>::type ldexp(T x, int e) { return __builtin_ldexp(x, e); }

#include "gpuopt_legacy_cuda.h"
#include "gpuopt_gpuverify.h"
#include "gpuopt_nvcc_builtins.h"
#include "gpuopt_sm32_intrinsics.h"
#endif
