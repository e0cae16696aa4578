// Clang errors that nvcc (with GCC as its host compiler) has no counterpart for: Clang's own CUDA
// wrapper headers meeting a toolkit header written for nvcc, GNU extensions GCC accepts. Dropped by the parse's and the preamble's error collectors (not
// findings, and no reason to try a host-side or includer parse); nothing the analysis reads
// changes with them.
#pragma once
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticSema.h>
#include <llvm/ADT/SmallString.h>

namespace gpuopt {

inline bool clangWrapperOnlyError(const clang::Diagnostic& d) {
  // CCCL's assert.h, with NDEBUG defined and nvcc as the CUDA compiler (gpuopt_nvcc_compat.h
  // defines __NVCC__ so that CCCL parses as under nvcc), declares `__host__ __device__
  // __assert_fail` over the `__device__ __assert_fail` that Clang's CUDA runtime wrapper provides;
  // nvcc reads no such wrapper and compiles it (ggml sum.cu and argsort.cu with -DNDEBUG, checked
  // with nvcc 13 -c).
  if (d.getID() == clang::diag::err_cuda_ovl_target) {
    llvm::SmallString<160> msg;
    d.FormatDiagnostic(msg);
    return llvm::StringRef(msg).contains("function '__assert_fail' cannot overload __device__ function '__assert_fail'");
  }
  // A variable-length array with an initialiser in host code (`cudaSurfaceObject_t s[n] = {0};`):
  // GCC, nvcc's host compiler, accepts it as an extension; Clang does not (cuda-samples
  // cudaNvSciBufMultiplanar). A VLA in device code is still rejected (err_cuda_vla, its own error).
  if (d.getID() == clang::diag::err_variable_object_no_init) return true;
  return false;
}

}  // namespace gpuopt
