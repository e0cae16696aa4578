// Forced into every parse with a CUDA toolkit: smooths the differences between nvcc and Clang's
// CUDA mode that make correct nvcc code fail to parse.
#pragma once
#ifndef GPUOPT_NVCC_COMPAT_H
#define GPUOPT_NVCC_COMPAT_H
// nvcc lets host code call min/max on floating-point and mixed integer types (its math headers
// have host overloads: crt/math_functions.hpp, the same set as here, so that the calls nvcc finds
// ambiguous, max(int, size_t), are ambiguous here too); Clang declares them for device code only.
__attribute__((host)) inline float max(float a, float b) { return a > b ? a : b; }
__attribute__((host)) inline float min(float a, float b) { return a < b ? a : b; }
__attribute__((host)) inline double max(double a, double b) { return a > b ? a : b; }
__attribute__((host)) inline double min(double a, double b) { return a < b ? a : b; }
__attribute__((host)) inline int max(int a, int b) { return a > b ? a : b; }
__attribute__((host)) inline int min(int a, int b) { return a < b ? a : b; }
__attribute__((host)) inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
__attribute__((host)) inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
__attribute__((host)) inline long max(long a, long b) { return a > b ? a : b; }
__attribute__((host)) inline long min(long a, long b) { return a < b ? a : b; }
__attribute__((host)) inline unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
__attribute__((host)) inline unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
__attribute__((host)) inline long long max(long long a, long long b) { return a > b ? a : b; }
__attribute__((host)) inline long long min(long long a, long long b) { return a < b ? a : b; }
__attribute__((host)) inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
__attribute__((host)) inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
// nvcc's mixed-type host overloads (crt/math_functions.hpp): signed/unsigned and float/double pairs.
__attribute__((host)) inline unsigned max(int a, unsigned b) { return max(static_cast<unsigned>(a), b); }
__attribute__((host)) inline unsigned max(unsigned a, int b) { return max(a, static_cast<unsigned>(b)); }
__attribute__((host)) inline unsigned min(int a, unsigned b) { return min(static_cast<unsigned>(a), b); }
__attribute__((host)) inline unsigned min(unsigned a, int b) { return min(a, static_cast<unsigned>(b)); }
__attribute__((host)) inline unsigned long max(long a, unsigned long b) { return max(static_cast<unsigned long>(a), b); }
__attribute__((host)) inline unsigned long max(unsigned long a, long b) { return max(a, static_cast<unsigned long>(b)); }
__attribute__((host)) inline unsigned long min(long a, unsigned long b) { return min(static_cast<unsigned long>(a), b); }
__attribute__((host)) inline unsigned long min(unsigned long a, long b) { return min(a, static_cast<unsigned long>(b)); }
__attribute__((host)) inline unsigned long long max(long long a, unsigned long long b) { return max(static_cast<unsigned long long>(a), b); }
__attribute__((host)) inline unsigned long long max(unsigned long long a, long long b) { return max(a, static_cast<unsigned long long>(b)); }
__attribute__((host)) inline unsigned long long min(long long a, unsigned long long b) { return min(static_cast<unsigned long long>(a), b); }
__attribute__((host)) inline unsigned long long min(unsigned long long a, long long b) { return min(a, static_cast<unsigned long long>(b)); }
__attribute__((host)) inline double max(float a, double b) { return max(static_cast<double>(a), b); }
__attribute__((host)) inline double max(double a, float b) { return max(a, static_cast<double>(b)); }
__attribute__((host)) inline double min(float a, double b) { return min(static_cast<double>(a), b); }
__attribute__((host)) inline double min(double a, float b) { return min(a, static_cast<double>(b)); }
// nvcc's crt/common_functions.h brings <string.h> and <time.h> into every translation unit (and
// its host headers <stdlib.h>): code that relies on it (time(), memcpy, malloc without an include)
// compiles with nvcc. <stdio.h> and <assert.h> it includes only in the device pass (under
// __CUDA_ARCH__): the host pass, which also reads every __device__ body, rejects printf and assert
// without their header ("identifier is undefined", checked with nvcc 13 -c), so they are not here.
#include <stdlib.h>
#include <string.h>
#include <time.h>
// nvcc's crt/math_functions.h declares isfinite, isnan, isinf and signbit for float, double and
// long double as __host__ __device__ functions in the global namespace; Clang's CUDA headers
// declare the device ones only, so host code (a validation loop in a template) calling isfinite()
// without <math.h> did not compile. libstdc++'s <math.h> brings the host ones in the same way.
#include <cmath>
using std::isfinite;
using std::isinf;
using std::isnan;
using std::signbit;
// The same header, with libstdc++, declares the float overloads of the C math functions in
// namespace std as __host__ __device__ and brings them into the global namespace with
// using-declarations (the list below is nvcc's): host code calling modf(float, float*) or
// sqrt(float) without std:: gets the float overload under nvcc. Clang's CUDA headers give the
// global float overloads to device code only, so a host helper's modf(f, &fpart) had no candidate.
#if !defined(_LIBCPP_VERSION)
using std::abs;
using std::fabs;
using std::ceil;
using std::floor;
using std::sqrt;
using std::pow;
using std::log;
using std::log10;
using std::fmod;
using std::modf;
using std::exp;
using std::frexp;
using std::ldexp;
using std::asin;
using std::sin;
using std::sinh;
using std::acos;
using std::cos;
using std::cosh;
using std::atan;
using std::atan2;
using std::tan;
using std::tanh;
#endif

// APIs CUDA 12 removed (texture references, cudaThread*), declared for old code.
#include "gpuopt_legacy_cuda.h"
#include "gpuopt_nvcc_builtins.h"
#include "gpuopt_sm32_intrinsics.h"
#include "gpuopt_gpuverify.h"

// What nvcc defines and Clang does not (after the toolkit's own headers, which Clang's wrapper has
// read already, so that they keep Clang's configuration): code selects nvcc's paths with them
// (`#if __CUDACC_VER_MAJOR__ >= 9` picks __shfl_down_sync, `#ifdef __NVCC__` declares kernels or
// __host__ __device__ qualifiers). CCCL, nv/target and cooperative groups, read later, see them too
// and parse as under nvcc (checked with thrust, cub, cuda::barrier, cooperative groups, mma.h,
// NV_IF_TARGET). The version is the toolkit's (cuda.h's CUDA_VERSION).
#if defined(CUDA_VERSION) && !defined(__CUDACC_VER_MAJOR__)
#define __CUDACC_VER_MAJOR__ (CUDA_VERSION / 1000)
#define __CUDACC_VER_MINOR__ (CUDA_VERSION % 1000 / 10)
#define __CUDACC_VER_BUILD__ 0
#endif
#ifndef __NVCC__
#define __NVCC__ 1
#endif
// nvcc defines __CUDACC__ as 1; Clang's CUDA wrapper defines it empty, so `#if __CUDACC__` was
// "expected value in expression" (HeCBench ssim's gdt/math/vec/compare.h, checked with nvcc -E -dM).
#undef __CUDACC__
#define __CUDACC__ 1
#endif
