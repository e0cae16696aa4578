// Clang errors that nvcc (with GCC as its host compiler) has no counterpart for: Clang's own CUDA
// wrapper headers meeting a toolkit header written for nvcc, GNU extensions GCC accepts. Dropped by the parse's and the preamble's error collectors (not
// findings, and no reason to try a host-side or includer parse); nothing the analysis reads
// changes with them.
#pragma once
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticAST.h>
#include <clang/Basic/DiagnosticParse.h>
#include <clang/Basic/DiagnosticSema.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>

#include <string>
#include <vector>

namespace gpuopt {

namespace detail {
// The comma-separated items of the balanced <...> that starts at text[at] ('<'), trimmed; empty
// when it does not close.
inline std::vector<std::string> angleItems(llvm::StringRef text, size_t at, size_t* end = nullptr) {
  std::vector<std::string> items;
  int depth = 0;
  std::string cur;
  for (size_t i = at; i < text.size(); ++i) {
    char c = text[i];
    if (c == '<' || c == '(' || c == '[') {
      if (depth++ > 0) cur += c;
    } else if (c == '>' || c == ')' || c == ']') {
      if (--depth == 0) {
        items.push_back(llvm::StringRef(cur).trim().str());
        if (end) *end = i;
        return items;
      }
      cur += c;
    } else if (c == ',' && depth == 1) {
      items.push_back(llvm::StringRef(cur).trim().str());
      cur.clear();
    } else {
      cur += c;
    }
  }
  return {};
}
}  // namespace detail

// `template <typename T> template <typename E> void C<T>::f<E>(...)`, `template <typename T> void
// g<T>(T*)`: a definition that names its own template parameters, in order, as explicit arguments.
// Clang calls it a function template partial specialization; nvcc (EDG) takes it as the template's
// definition (FasterTransformer's moe_gemm_kernels_template.h, checked with nvcc 13 -c). Clang drops
// the definition, so what it calls and launches cannot be analysed: the parse reports it as a note
// (RawError::nvccAccepts), not an error. A real partial specialization (`g<T*>`) stays an error.
inline bool namesItsOwnParameters(const clang::Diagnostic& d) {
  if (d.getID() != clang::diag::err_function_template_partial_spec || !d.hasSourceManager()) return false;
  auto& sm = d.getSourceManager();
  clang::SourceLocation loc = sm.getExpansionLoc(d.getLocation());
  if (loc.isInvalid()) return false;
  bool invalid = false;
  llvm::StringRef buf = sm.getBufferData(sm.getFileID(loc), &invalid);
  if (invalid) return false;
  size_t at = sm.getFileOffset(loc);
  size_t lt = buf.find('<', at);
  if (lt == llvm::StringRef::npos || lt - at > 256) return false;
  std::vector<std::string> args = detail::angleItems(buf, lt);
  // The nearest template parameter list written before the name: the function's own.
  size_t kw = buf.substr(0, at).rfind("template");
  while (kw != llvm::StringRef::npos) {
    size_t open = buf.find_first_not_of(" \t\r\n", kw + 8);
    if (open != llvm::StringRef::npos && buf[open] == '<') {
      size_t close = 0;
      std::vector<std::string> params = detail::angleItems(buf, open, &close);
      if (close == 0 || close > at || params.size() != args.size() || args.empty()) return false;
      for (size_t i = 0; i < params.size(); ++i) {
        llvm::StringRef p = llvm::StringRef(params[i]).split('=').first.trim();
        size_t nameStart = p.find_last_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        llvm::StringRef name = nameStart == llvm::StringRef::npos ? p : p.substr(nameStart + 1);
        bool pack = p.contains("...");
        if (name.empty() || args[i] != (pack ? name.str() + "..." : name.str())) return false;
      }
      return true;
    }
    kw = kw == 0 ? llvm::StringRef::npos : buf.substr(0, kw).rfind("template");
  }
  return false;
}

inline bool bracedHalfAssignment(const clang::Diagnostic& d);

inline bool clangWrapperOnlyError(const clang::Diagnostic& d) {
  // CCCL's assert.h, with NDEBUG defined and nvcc as the CUDA compiler (gpuopt_nvcc_compat.h
  // defines __NVCC__ so that CCCL parses as under nvcc), declares `__host__ __device__
  // __assert_fail` over the `__device__ __assert_fail` that Clang's CUDA runtime wrapper provides;
  // nvcc reads no such wrapper and compiles it (ggml sum.cu and argsort.cu with -DNDEBUG, checked
  // with nvcc 13 -c). Also over a `__host__` one: PyTorch's c10/macros/Macros.h declares
  // __assert_fail `__host__ __device__` under nvcc but plain (host) when `__clang__ && __CUDA__`,
  // so CCCL's declaration after it overloads a host function (gsplat's kernels with -DNDEBUG;
  // fixture nvcc_dialect.cu, checked with nvcc 13 -c).
  if (d.getID() == clang::diag::err_cuda_ovl_target) {
    llvm::SmallString<160> msg;
    d.FormatDiagnostic(msg);
    llvm::StringRef m(msg);
    if (m.contains("function '__assert_fail' cannot overload __device__ function '__assert_fail'") ||
        m.contains("function '__assert_fail' cannot overload __host__ function '__assert_fail'"))
      return true;
    // A function declared `__host__ __device__` and then defined (or declared again) with no target
    // or `__host__` only (glm 0.9.9's gtc/type_ptr: `GLM_FUNC_DECL make_vec1(...)` in the .hpp,
    // `inline make_vec1(...)` in the .inl; gsplat's every unit): nvcc takes the later declaration
    // as the same function, keeping `__host__ __device__` (checked with nvcc 13 -c, templates and
    // plain functions); Clang calls it an overload by target and drops it. A device call of such a
    // function is then not a call without a definition (UndefinedDeviceCalls looks for the dropped
    // definition).
    return m.starts_with("__host__ function '") && m.contains("' cannot overload __host__ __device__ function '");
  }
  // A variable-length array with an initialiser in host code (`cudaSurfaceObject_t s[n] = {0};`):
  // GCC, nvcc's host compiler, accepts it as an extension; Clang does not (cuda-samples
  // cudaNvSciBufMultiplanar). A VLA in device code is still rejected (err_cuda_vla, its own error).
  if (d.getID() == clang::diag::err_variable_object_no_init) return true;
  // `h2 = {a, b}` or `h2 = {}` on the toolkit's half and bfloat16 types: their operator= takes the
  // type itself and its _raw struct, both of which a braced list initialises; Clang (and GCC) call
  // the assignment ambiguous, nvcc (EDG) assigns the type itself (FasterTransformer's
  // matrix_vector_multiplication.cu, checked with nvcc 13 -c). The statement is left out of the
  // AST; the value it assigns is one the model does not know.
  if (bracedHalfAssignment(d)) return true;
  // `typename R::with_scope<S>`, `t->f<N>()`: a member template of a dependent type named without
  // the `template` keyword. nvcc (EDG) accepts it (cuCollections' kernels.cuh and helpers.cuh,
  // checked with nvcc 13 -c); Clang's parser says so and recovers by reading the name as the
  // dependent template name nvcc reads (ParseOptionalCXXScopeSpecifier), so the AST is the one
  // written with the keyword and its instantiations have their bodies. (The Sema form, `T::f<N>(x)`
  // in an expression, err_template_kw_missing, is not recovered: a note, see RawError::nvccAccepts.)
  if (d.getID() == clang::diag::err_missing_dependent_template_keyword) return true;
  // A default argument added in the out-of-line definition of a class template's member
  // (`template <typename K> double Map<K, Set>::loadFactor(int flag = 0) {...}`: SlabHash's
  // cmap_implementation.cuh). nvcc's front end accepts the definition and gives its host compiler
  // the function without it (checked with nvcc 13 -c); Clang, like GCC reading the source, rejects
  // it and drops the default. A call that needs the added default is still an error for both
  // (nvcc's through GCC: "no matching function"), and Clang reports that call.
  if (d.getID() == clang::diag::err_param_default_argument_member_template_redecl) return true;
  // `extern const dim3 blockDim; extern const uint3 threadIdx;` in host code (ccminer's
  // cuda_helper.h, under #ifndef __CUDA_ARCH__, for editors): the toolkit's
  // device_launch_parameters.h declares the built-in variables with exactly these types, so for
  // nvcc it is a redeclaration of the same variable (checked with nvcc 13 -c); Clang's wrapper
  // gives them types of its own (__cuda_builtin_blockDim_t) and calls it a conflict. Clang keeps
  // its own declaration, which every use in device code reads.
  if (d.getID() == clang::diag::err_redeclaration_different_type) {
    llvm::SmallString<160> msg;
    d.FormatDiagnostic(msg);
    llvm::StringRef m(msg);
    for (const char* v : {"threadIdx", "blockIdx", "blockDim", "gridDim"}) {
      const std::string name = std::string(v);
      const bool dim = name == "blockDim" || name == "gridDim";
      const std::string head = "redeclaration of '" + name + "' with a different type: 'const " +
                               (dim ? "dim3'" : "uint3'");
      if (m.starts_with(head) && m.ends_with("vs 'const __cuda_builtin_" + name + "_t'")) return true;
    }
  }
  return false;
}

inline bool bracedHalfAssignment(const clang::Diagnostic& d) {
  if (d.getID() == clang::diag::err_ovl_ambiguous_oper_binary) {
    llvm::SmallString<160> msg;
    d.FormatDiagnostic(msg);
    llvm::StringRef m(msg);
    if (m.starts_with("use of overloaded operator '=' is ambiguous") && m.ends_with("and 'void')"))
      for (const char* t : {"'__half2'", "'__half'", "'__nv_bfloat162'", "'__nv_bfloat16'", "(aka '__half2')",
                            "(aka '__half')", "(aka '__nv_bfloat162')", "(aka '__nv_bfloat16')"})
        if (m.contains(t)) return true;
  }
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
