// Forced into every parse with a CUDA toolkit: smooths the differences between nvcc and Clang's
// CUDA mode that make correct nvcc code fail to parse.
#pragma once
#ifndef GPUOPT_NVCC_COMPAT_H
#define GPUOPT_NVCC_COMPAT_H
// nvcc lets host code call min/max on floating-point and mixed integer types (its math headers
// have host overloads); Clang declares those overloads for device code only.
__attribute__((host)) inline float max(float a, float b) { return a > b ? a : b; }
__attribute__((host)) inline float min(float a, float b) { return a < b ? a : b; }
__attribute__((host)) inline double max(double a, double b) { return a > b ? a : b; }
__attribute__((host)) inline double min(double a, double b) { return a < b ? a : b; }
__attribute__((host)) inline int max(int a, int b) { return a > b ? a : b; }
__attribute__((host)) inline int min(int a, int b) { return a < b ? a : b; }
__attribute__((host)) inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
__attribute__((host)) inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
__attribute__((host)) inline long long max(long long a, long long b) { return a > b ? a : b; }
__attribute__((host)) inline long long min(long long a, long long b) { return a < b ? a : b; }
__attribute__((host)) inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
__attribute__((host)) inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
#endif
