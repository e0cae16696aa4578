// What a compile-error finding says, so that it agrees with nvcc 13 (the oracle for what compiles):
// hints for errors whose cause is a CUDA 12/13 API change, where a missing header was searched
// (the database entry and the flags that gave the folders), one finding per missing header with
// the errors that follow it as its notes (nvcc stops at a missing header), and the uses of APIs
// nvcc 13 rejects that gpuopt-lint still declares so that the kernels around them are analysed
// (texture references, cudaThread*, warp shuffles without a mask).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <clang/Basic/SourceLocation.h>

#include "analyzer/report/diagnostic.h"

namespace clang {
class ASTContext;
}  // namespace clang

namespace gpuopt {

class LintedFiles;

// The hint appended to a Clang error message where the cause is a known CUDA 12/13 change or nvcc
// difference ("" when none): removed cudaDeviceProp fields (with the cudaDevAttr* to read),
// cudaMemAdvise/cudaMemPrefetchAsync taking a cudaMemLocation, device-side cudaDeviceSynchronize.
std::string compileErrorHint(const std::string& message);

// Where the parse's include folders came from, for a "file not found" error.
struct IncludeSearchContext {
  // "the compile_commands.json entry for src/a.cu in build/compile_commands.json", "the Makefile
  // /p/Makefile", or empty (no database, no Makefile).
  std::string source;
  bool database = false;
  // "-I/p/include from `-I=include` (from --options-file CMakeFiles/t.dir/includes_CUDA.rsp)"
  std::vector<std::string> folders;
};

// The hint for "'x.h' file not found": with a database, which entry and which flags gave the
// folders that were searched (never "pass -p": it was); without, how to pass the folder.
std::string missingHeaderHint(const IncludeSearchContext& ctx);

// Whether a compile-error message is a missing header's.
bool isMissingHeader(const std::string& message);

// The errors of a parse as findings, in the order Clang reported them: each error after a missing
// header (and before the next one) becomes a note of that header's finding, as nvcc stops there,
// unless it lies at an earlier line of the header's own file (Clang reports instantiations last);
// their own notes follow them. Only the first `foldable` errors are Clang's (the uses of removed
// APIs after them are findings of their own). At most `maxFindings` findings and `maxNotes` folded
// errors per finding; the rest are counted in the message.
void foldErrorsAfterMissingHeaders(std::vector<Diagnostic>& errors, size_t foldable = SIZE_MAX, size_t maxFindings = 50,
                                   size_t maxNotes = 20);

// A use, in the linted files, of an API nvcc 13 rejects that gpuopt-lint declares anyway (its
// bundled gpuopt_legacy_cuda.h) or that Clang still defines (the warp shuffles without _sync):
// the message says what replaced it. The kernels using them are still analysed.
struct RemovedApiUse {
  unsigned raw;  // clang::SourceLocation::getRawEncoding() of the use (expansion location)
  std::string message;
};
// Also: a call, in a kernel or a device function a kernel calls, of a __device__ function that has
// no definition in the translation unit when the command does not ask for relocatable device code
// (-rdc=true, -dc: __CUDACC_RDC__): nvcc compiles device code as one program and ptxas rejects the
// call ("Unresolved extern function").
// Also: a use of curand's MTGP32 generator (curandStateMtgp32, curand() on it, ...) with none of
// the headers that declare it for nvcc included (curand_kernel.h, curand_mtgp32_host.h,
// curand_mtgp32_kernel.h): Clang's CUDA wrapper includes curand_mtgp32_kernel.h in every CUDA
// parse, nvcc does not, and nvcc 13 rejects the use ("identifier ... is undefined"). `includes` is
// every #include directive of the parse and the real path it resolved to (ErrorCollector::includes).
std::vector<RemovedApiUse> findRemovedApiUses(clang::ASTContext& ctx, const LintedFiles& files,
                                              const std::string& bundledDir,
                                              const std::vector<std::pair<clang::SourceLocation, std::string>>& includes = {});

// Clang's "initialization is not supported for __shared__ variables" at `loc` (an expansion
// location) is about a function-scope __shared__ variable with no initializer of its own whose type
// has a constructor that is not empty (`__shared__ cuda::barrier<...> b;`): nvcc 13 only warns
// (#20054-D: dynamic initialization is not supported for a function-scope static __shared__
// variable) and runs no constructor, so it is no compile error. A written initializer, or a
// variable at namespace scope, stays an error (nvcc rejects both). Clang has already replaced the
// variable's uses by error nodes, so the kernel cannot be analysed: the finding says so at
// warning severity (kNvccWarnsSharedInit), as nvcc's own warning, never as an error.
extern const char* const kNvccWarnsSharedInit;
// A function template defined out of line with its own parameters written as arguments
// (`C<T>::f<E>(...)`): nvcc accepts it, Clang drops the definition (a note).
extern const char* const kNvccAcceptsOwnParameters;
extern const char* const kNvccAcceptsMissingTemplateKeyword;
extern const char* const kNvccReadWithTemplateKeyword;
extern const char* const kNvccAcceptsUnmatchedDefinition;
extern const char* const kNvccReadUnmatchedDefinition;
extern const char* const kNvccAcceptsTargetSpecialization;
extern const char* const kNvccReadTargetSpecialization;
extern const char* const kNvccAcceptsArchDeviceMacro;
extern const char* const kNvccReadArchDeviceMacro;
extern const char* const kNvccAcceptsNonLiteralInConstexpr;
extern const char* const kNvccAcceptsTemplateTemplateArgument;
struct StaticThroughReference {
  std::string reference, member, cls;  // `reference.member`, a static member of `cls`
};
std::string staticMemberThroughReferenceNote(const StaticThroughReference& r);
// Whether `loc` (an expansion location) is the object of a static data member read through a
// reference variable (`lidar.SCALE` with `const Params& lidar`): RawError::staticThroughReference.
std::optional<StaticThroughReference> staticMemberThroughReference(clang::ASTContext& ctx, clang::SourceLocation loc);
extern const char* const kNvccAcceptsThisInConstantExpression;
// Whether nvcc accepts the error at `loc` (an expansion location) that Clang gives: a variable of
// non-literal type in a constexpr function (`nonLiteral`: EDG and GCC accept it inside a templated
// function), or `this->m` in a constant expression (otherwise: EDG and GCC accept it when `m` is a
// static data member of the class of the member function around it). Clang drops the function.
bool nvccAcceptsInContext(clang::ASTContext& ctx, clang::SourceLocation loc, bool nonLiteral);
// A dependent member template named without `template` at `loc` (err_template_kw_missing): nvcc
// (EDG) accepts it when the qualifier's or object's type is a specialization of a known class
// template (or the class being defined) whose definition declares a member template of that name
// (`Caster<A>::cast<4>(x)`), and rejects it for a template parameter (`R::f<4>()`) and for member
// access (`r.get<4>()`, also with `Ref<N> const& r`), checked with nvcc 13 -c.
bool nvccFindsMemberTemplate(clang::ASTContext& ctx, clang::SourceLocation loc, clang::SourceLocation* nameLoc = nullptr);

// At `loc` (the name of an out-of-line definition Clang found no declaration for, RawError::
// unmatchedDefinition): when it is a function template's definition qualified by namespaces only
// (`template <class T> __device__ void ns::api::f(T a, DIM3 b) {...}`, cuSZ's spline3.inl), the
// declaration nvcc (EDG) and GCC read it as, on one line (`namespace ns { namespace api { template
// <class T> __device__ void f(T a, DIM3 b); } } `), and the file and byte offset of the
// definition's first token, where it goes.
struct UnmatchedDefinition {
  clang::FileID file;
  unsigned offset = 0;
  std::string declaration;
};
std::optional<UnmatchedDefinition> unmatchedTemplateDefinition(clang::ASTContext& ctx, clang::SourceLocation loc);
// At `loc` (the name of an explicit specialization Clang matched to no function template,
// err_function_template_spec_no_match): when a function template of that name and parameter count
// in the same scope differs from it only in being `__device__` where it is `__host__ __device__`
// (or the other way round: jetson-utils' `alpha`, a device-only template with host-device
// specializations), which Clang counts as part of the signature and nvcc does not, the places
// where `__host__ ` makes both host-device (before the `__device__` of the one that lacks it).
// Empty when it is not that case.
std::vector<UnmatchedDefinition> hostDeviceSpecializationSites(clang::ASTContext& ctx, clang::SourceLocation loc);
// The functions declared at `candidates` (where Clang's notes put the `__device__` candidates a
// host function could not call), when every one is made `__device__` by a project macro defined so
// only where __CUDA_ARCH__ is (`#if defined(__CUDACC__) && defined(__CUDA_ARCH__)` / `#define
// _CPU_AND_GPU_CODE_ __device__` / `#else` / `#define _CPU_AND_GPU_CODE_` / `#endif`: InfiniTAM's
// ORUtils): nvcc's host pass reads them as host functions, its device pass as device ones, and
// Clang's one parse as device only. The places after each such macro's `__device__`, where the
// strategies read ` __host__` (both at once); empty when one candidate is not such.
std::vector<UnmatchedDefinition> archDeviceSites(clang::ASTContext& ctx, const std::vector<clang::SourceLocation>& candidates);
bool nvccOnlyWarnsAtSharedInit(clang::ASTContext& ctx, clang::SourceLocation loc);

// For each location (expansion locations of errors): whether it lies inside the body of a
// function compiled for the GPU (__global__, __device__, __host__ __device__). The device-side
// parse's errors there are nvcc's too, even when the host-side parse of the file has fewer errors.
std::vector<bool> inDeviceCode(clang::ASTContext& ctx, const std::vector<clang::SourceLocation>& locs);

// For each location: whether it lies inside the body of a templated function (a function template's
// pattern, a member of a class template, a lambda in either), the code Clang checks once at its
// definition and again for every instantiation.
std::vector<bool> inTemplatePattern(clang::ASTContext& ctx, const std::vector<clang::SourceLocation>& locs);
// ... inside the body of a templated function that has at least one instantiation with a body.
std::vector<bool> inInstantiatedTemplatePattern(clang::ASTContext& ctx, const std::vector<clang::SourceLocation>& locs);
// For each location: whether a variable is declared there (the name of `T x(args);`).
std::vector<bool> atVariableDeclaration(clang::ASTContext& ctx, const std::vector<clang::SourceLocation>& locs);

}  // namespace gpuopt
