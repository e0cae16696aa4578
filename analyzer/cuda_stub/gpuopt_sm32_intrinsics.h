// The cache-hinted loads and stores of the toolkit's sm_32_intrinsics.h (__ldcg, __ldca, __ldcs,
// __ldlu, __ldcv, __stwb, __stcg, __stcs, __stwt), with nvcc's overload set: one overload per
// scalar and vector type the toolkit lists, no template (a type nvcc has no overload for is an
// error here too). Clang's CUDA wrapper does not include sm_32_intrinsics.h (it defines __ldg and
// the funnel shifts itself), so code nvcc compiles (llm.c's __stcs stores) did not compile here.
// The bodies are what the hints mean to the program: a load or a store of the element (the cache
// policy does not change the value); the kernel model sees the access through them. The __half
// and __nv_bfloat16 overloads come from the toolkit's cuda_fp16.hpp / cuda_bf16.hpp.
// Included by gpuopt_nvcc_compat.h (toolkit) and gpuopt_cuda_builtin.h (bundled declarations).
// With a toolkit, Clang's own __clang_cuda_intrinsics.h (pre-included before this) already defines
// __ldcg, __ldcs, __ldcv and __stwt (and sets __SM_32_INTRINSICS_H__ so the toolkit's header is
// never read): only the five Clang 22 lacks are added then (__ldca, __ldlu, __stwb, __stcg, __stcs).
#pragma once
#ifndef GPUOPT_SM32_INTRINSICS_H
#define GPUOPT_SM32_INTRINSICS_H
#if defined(__cplusplus)
#if !defined(__CLANG_CUDA_INTRINSICS_H__)
// Without Clang's intrinsics header (the bundled declarations): all nine.
#define GPUOPT_SM32_CLANG_HAS(T)                                                 \
  static __device__ inline T __ldcg(const T* ptr) { return *ptr; }             \
  static __device__ inline T __ldcs(const T* ptr) { return *ptr; }             \
  static __device__ inline T __ldcv(const T* ptr) { return *ptr; }             \
  static __device__ inline void __stwt(T* ptr, T value) { *ptr = value; }
#else
#define GPUOPT_SM32_CLANG_HAS(T)
#endif
#define GPUOPT_SM32_LOADS(T)                                                     \
  GPUOPT_SM32_CLANG_HAS(T)                                                       \
  static __device__ inline T __ldca(const T* ptr) { return *ptr; }             \
  static __device__ inline T __ldlu(const T* ptr) { return *ptr; }             \
  static __device__ inline void __stwb(T* ptr, T value) { *ptr = value; }      \
  static __device__ inline void __stcg(T* ptr, T value) { *ptr = value; }      \
  static __device__ inline void __stcs(T* ptr, T value) { *ptr = value; }
GPUOPT_SM32_LOADS(long)
GPUOPT_SM32_LOADS(unsigned long)
GPUOPT_SM32_LOADS(char)
GPUOPT_SM32_LOADS(signed char)
GPUOPT_SM32_LOADS(short)
GPUOPT_SM32_LOADS(int)
GPUOPT_SM32_LOADS(long long)
GPUOPT_SM32_LOADS(char2)
GPUOPT_SM32_LOADS(char4)
GPUOPT_SM32_LOADS(short2)
GPUOPT_SM32_LOADS(short4)
GPUOPT_SM32_LOADS(int2)
GPUOPT_SM32_LOADS(int4)
GPUOPT_SM32_LOADS(longlong2)
GPUOPT_SM32_LOADS(unsigned char)
GPUOPT_SM32_LOADS(unsigned short)
GPUOPT_SM32_LOADS(unsigned int)
GPUOPT_SM32_LOADS(unsigned long long)
GPUOPT_SM32_LOADS(uchar2)
GPUOPT_SM32_LOADS(uchar4)
GPUOPT_SM32_LOADS(ushort2)
GPUOPT_SM32_LOADS(ushort4)
GPUOPT_SM32_LOADS(uint2)
GPUOPT_SM32_LOADS(uint4)
GPUOPT_SM32_LOADS(ulonglong2)
GPUOPT_SM32_LOADS(float)
GPUOPT_SM32_LOADS(double)
GPUOPT_SM32_LOADS(float2)
GPUOPT_SM32_LOADS(float4)
GPUOPT_SM32_LOADS(double2)
#undef GPUOPT_SM32_LOADS
#undef GPUOPT_SM32_CLANG_HAS
#endif
#endif
