// Forced into every parse (through gpuopt_nvcc_compat.h or gpuopt_cuda_builtin.h): GPUVerify's
// annotations (https://github.com/mc-imperial/gpuverify, Documentation/advanced_features.rst).
// Kernels written for GPUVerify state pre- and postconditions, loop invariants and assertions
// with them; they are not executed code, so gpuopt-lint drops them (without these, such a kernel
// does not compile and is not analysed). The functions that only appear inside them
// (__implies, __enabled, __write_offset_bytes, ...) go with them. __requires(sz == blockDim.x) is
// not read as a block shape: pass --block-dim.
#pragma once
#ifndef GPUOPT_GPUVERIFY_H
#define GPUOPT_GPUVERIFY_H
#define __requires(...) ((void)0)
#define __ensures(...) ((void)0)
#define __global_requires(...) ((void)0)
#define __global_ensures(...) ((void)0)
#define __invariant(...) ((void)0)
#define __global_invariant(...) ((void)0)
#define __candidate_invariant(...) ((void)0)
#define __candidate_global_invariant(...) ((void)0)
#define __function_wide_invariant(...) ((void)0)
#define __function_wide_candidate_invariant(...) ((void)0)
#define __assume(...) ((void)0)
#define __requires_fresh_array(...) ((void)0)
// At file scope (`__axiom(blockIdx.x == 16);`): nothing, leaving an empty declaration.
#define __axiom(...)
// glibc's assert.h declares a three-argument __assert: a call with three arguments stays that
// function (a macro's own name is not expanded again inside it); one argument is GPUVerify's.
#define GPUOPT_GV_PICK(a, b, c, name, ...) name
#define GPUOPT_GV_GLIBC_ASSERT(a, b, c) __assert(a, b, c)
#define GPUOPT_GV_DROP(...) ((void)0)
#define __assert(...) GPUOPT_GV_PICK(__VA_ARGS__, GPUOPT_GV_GLIBC_ASSERT, GPUOPT_GV_DROP, GPUOPT_GV_DROP, GPUOPT_GV_DROP)(__VA_ARGS__)
#endif
