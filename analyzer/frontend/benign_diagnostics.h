// Clang errors that nvcc (with GCC as its host compiler) has no counterpart for: Clang's own CUDA
// wrapper headers meeting a toolkit header written for nvcc, GNU extensions GCC accepts. Dropped by the parse's and the preamble's error collectors (not
// findings, and no reason to try a host-side or includer parse); nothing the analysis reads
// changes with them.
#pragma once
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticAST.h>
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

// The errors Clang gives for an inline-asm template string that does not fit its operands
// (GCCAsmStmt::AnalyzeAsmString). nvcc passes the string on and only the code generator reads it, so
// nvcc reports these only for code it generates: not for a template's pattern, nor for a branch an
// `if constexpr` discards (ThunderKittens' tma.cuh names `%8` of 8 operands in such a branch;
// nvcc 13 compiles it). See dropAsmErrorsOutsideInstantiations in lint_consumer.cpp.
inline bool asmStringError(unsigned id) {
  namespace d = clang::diag;
  return id == d::err_asm_invalid_operand_number || id == d::err_asm_invalid_escape ||
         id == d::err_asm_unknown_symbolic_operand_name || id == d::err_asm_empty_symbolic_operand_name ||
         id == d::err_asm_unterminated_symbolic_operand_name;
}

}  // namespace gpuopt
