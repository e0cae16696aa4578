// Forced into every parse (through gpuopt_nvcc_compat.h or gpuopt_cuda_builtin.h): nvcc's own
// built-in functions that no header declares and Clang does not know, so that code using them
// parses (HeCBench's atomicCAS and lebesgue use the scoped atomics of CUDA 12.8).
#pragma once
#ifndef GPUOPT_NVCC_BUILTINS_H
#define GPUOPT_NVCC_BUILTINS_H
#if defined(__cplusplus)
// Memory orders and thread scopes (enumerators in the toolkit's crt/device_functions.h, which
// Clang's CUDA mode does not read; macros here so that an existing enumerator is not redefined).
#define __NV_ATOMIC_RELAXED 0
#define __NV_ATOMIC_CONSUME 1
#define __NV_ATOMIC_ACQUIRE 2
#define __NV_ATOMIC_RELEASE 3
#define __NV_ATOMIC_ACQ_REL 4
#define __NV_ATOMIC_SEQ_CST 5
#define __NV_THREAD_SCOPE_THREAD 0
#define __NV_THREAD_SCOPE_BLOCK 1
#define __NV_THREAD_SCOPE_CLUSTER 2
#define __NV_THREAD_SCOPE_DEVICE 3
#define __NV_THREAD_SCOPE_SYSTEM 4

template <class T> __attribute__((device)) T __nv_atomic_load_n(const T* p, int order, int scope = 4);
template <class T> __attribute__((device)) void __nv_atomic_load(const T* p, T* ret, int order, int scope = 4);
template <class T, class U> __attribute__((device)) void __nv_atomic_store_n(T* p, U v, int order, int scope = 4);
template <class T> __attribute__((device)) void __nv_atomic_store(T* p, T* v, int order, int scope = 4);
template <class T, class U> __attribute__((device)) T __nv_atomic_exchange_n(T* p, U v, int order, int scope = 4);
template <class T> __attribute__((device)) void __nv_atomic_exchange(T* p, T* v, T* ret, int order, int scope = 4);
template <class T, class U>
__attribute__((device)) bool __nv_atomic_compare_exchange_n(T* p, T* expected, U desired, bool weak, int success,
                                                            int failure, int scope = 4);
template <class T>
__attribute__((device)) bool __nv_atomic_compare_exchange(T* p, T* expected, T* desired, bool weak, int success,
                                                          int failure, int scope = 4);
#define GPUOPT_NV_ATOMIC_OP(op)                                                                      \
  template <class T, class U> __attribute__((device)) T __nv_atomic_fetch_##op(T* p, U v, int order, int scope = 4); \
  template <class T, class U> __attribute__((device)) void __nv_atomic_##op(T* p, U v, int order, int scope = 4);
GPUOPT_NV_ATOMIC_OP(add)
GPUOPT_NV_ATOMIC_OP(sub)
GPUOPT_NV_ATOMIC_OP(min)
GPUOPT_NV_ATOMIC_OP(max)
GPUOPT_NV_ATOMIC_OP(and)
GPUOPT_NV_ATOMIC_OP(or)
GPUOPT_NV_ATOMIC_OP(xor)
#undef GPUOPT_NV_ATOMIC_OP
__attribute__((device)) void __nv_atomic_thread_fence(int order, int scope = 4);
#endif
#endif
