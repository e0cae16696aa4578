// What one parse of a file produced (the parse stage's value): the compile errors, the rules'
// findings, the kernels analysed and skipped, the files read. Shared by the parse
// (analyzer/engine/parse.cpp), the model-and-rules consumer that runs inside it
// (lint_consumer.cpp) and the driver (engine.cpp).
#pragma once
#include <clang/Basic/DiagnosticAST.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticLex.h>
#include <clang/Basic/SourceManager.h>
#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <tuple>
#include <vector>

#include "analyzer/frontend/benign_diagnostics.h"
#include "analyzer/frontend/preamble.h"
#include "analyzer/report/diagnostic.h"
#include "analyzer/report/output.h"

namespace gpuopt::engine {

using Clock = std::chrono::steady_clock;
inline double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// One compiler error, as Clang reported it.
struct RawError {
  clang::SourceLocation loc;  // expansion location (valid while the parse's SourceManager lives)
  std::string where;          // "file:line:col: " for messages
  std::string message;
  // An error in an inline-asm template string (an operand number, a '%' escape). Clang checks the
  // string of a template's pattern at its definition; nvcc only in code it generates.
  bool asmString = false;
  // "no matching constructor for initialization of": in the functional notation `T(args)`, nvcc
  // (and GCC) check it only when the template is instantiated.
  bool noViableInit = false;
  // "no member named 'x' in 'C<T>'" inside a template's pattern: a member the current instantiation
  // lacks (CUTLASS 2.x matrix.h calls `m.set_slice3x3` that no Matrix has). Clang looks it up at the
  // definition; nvcc (EDG) and GCC only when the member function is instantiated.
  bool noMember = false;
  bool fromInstantiation = false;  // Clang followed it with an "in instantiation of" note
  // nvcc accepts it and Clang cannot read the code (namesItsOwnParameters): a note, not an error.
  bool nvccAccepts = false;
  // The nvccAccepts case: `T::f<N>(x)` without the `template` keyword (err_template_kw_missing);
  // otherwise a definition naming its own parameters.
  bool missingTemplateKeyword = false;
  // "reference to overloaded function could not be resolved" (err_ovl_unresolvable): at an
  // instantiation, the same missing `template` when the name is a member template of the
  // qualifier's class template (nvccFindsMemberTemplate decides).
  bool unresolvedOverload = false;
  // "out-of-line definition of 'f' does not match any declaration in namespace 'ns'"
  // (err_member_decl_does_not_match): for a function template nvcc and GCC accept it (the
  // strategies read the file with a declaration inserted: ParseResult::declarationSites).
  bool unmatchedDefinition = false;
  // "no function template matches function template specialization 'f'"
  // (err_function_template_spec_no_match): when the template differs only in `__host__`, nvcc
  // matches them (hostDeviceSpecializationSites; the strategies read `__host__` inserted).
  bool targetSpecialization = false;
  // Candidates Clang rejected as `__device__` functions a `__host__` one calls
  // (note_ovl_candidate_bad_target, or the declaration an err_ref_bad_target names): their places.
  // When each is declared with a macro that is `__device__` only where __CUDA_ARCH__ is defined
  // (archDeviceSites), nvcc's host pass reads them as host functions: `archDeviceMacro`.
  std::vector<clang::SourceLocation> badTargets;
  bool refBadTarget = false;
  bool archDeviceMacro = false;
  // Errors nvcc (EDG) and GCC accept in some places only; LintConsumer decides from the AST
  // (nvccAcceptsInContext in compile_errors.h): a variable of non-literal type in a constexpr
  // function (C++23 allows it; EDG and GCC accept it in a template), and `this->m` in a constant
  // expression (Clang's note: use of 'this' pointer ...; EDG and GCC accept it for a static member).
  bool nonLiteralInConstexpr = false;
  bool thisInConstantExpression = false;
  // "constexpr variable must be initialized by a constant expression" with Clang's note "initializer
  // of 'r' is not a constant expression" at `r` (here): a static data member read through a
  // reference (`constexpr float k = 1.f / lidar.SCALE;`, `lidar` a `const Params&`): EDG and GCC do
  // not evaluate the object of a static member; Clang does before C++23's P2280. Decided from the
  // AST (staticMemberThroughReference); then nvccAccepts.
  clang::SourceLocation nonConstantAt;
  bool staticThroughReference = false;
  std::string staticThroughReferenceNote;
  bool constexprInit = false;  // err_constexpr_var_requires_const_init
  // A class template whose parameters are not all types given for `template <class...> class M`
  // (err_template_arg_template_params_mismatch, or Clang 22's error at the parameter's pack with
  // note_template_arg_template_params_mismatch): EDG accepts it (BGHT's test type lists), Clang
  // and GCC do not; whether nvcc compiles the file depends on the host code it generates there, so
  // the place is a note (nvccAccepts), never a compile error nvcc may not give.
  bool templateTemplateArgument = false;
  // Emitted after such an error: Clang dropped the declaration nvcc keeps (an alias of a type
  // list), and what uses it fails after it (`expected unqualified-id`, an undeclared name, the
  // test fixtures instantiated from it): the line of the first such error (else 0), said as a note.
  unsigned followsDropped = 0;
  // A header that is not found as written, which Clang includes anyway (found with quotes, or
  // under a near name): nvcc stops there, so the errors inside it are not nvcc's.
  bool includedAnyway = false;
};

// Collects the Clang errors of a parse. Fatal errors (a missing #include) are made plain errors by
// the action, so the rest of the file is still parsed.
class ErrorCollector : public clang::DiagnosticConsumer {
 public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    if (level >= clang::DiagnosticsEngine::Error && clangWrapperOnlyError(info)) {
      if (bracedHalfAssignment(info) && info.hasSourceManager() && info.getLocation().isValid())
        tolerated.push_back(info.getSourceManager().getExpansionLoc(info.getLocation()));
      return;
    }
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    llvm::SmallString<256> msg;
    if (level == clang::DiagnosticsEngine::Note && !errors.empty() &&
        (info.getID() == clang::diag::note_ovl_candidate_bad_target ||
         (errors.back().refBadTarget &&
          (info.getID() == clang::diag::note_previous_decl || info.getID() == clang::diag::note_entity_declared_at))) &&
        info.hasSourceManager() && info.getLocation().isValid())
      errors.back().badTargets.push_back(info.getSourceManager().getExpansionLoc(info.getLocation()));
    if (level == clang::DiagnosticsEngine::Note && !errors.empty() &&
        (errors.back().asmString || errors.back().noViableInit || errors.back().noMember)) {
      info.FormatDiagnostic(msg);
      if (llvm::StringRef(msg).starts_with("in instantiation of")) errors.back().fromInstantiation = true;
      return;
    }
    if (level == clang::DiagnosticsEngine::Note && !errors.empty() && info.getID() == clang::diag::note_constexpr_this)
      errors.back().thisInConstantExpression = true;
    if (level == clang::DiagnosticsEngine::Note && !errors.empty() && errors.back().constexprInit &&
        info.getID() == clang::diag::note_constexpr_var_init_non_constant && info.hasSourceManager() &&
        info.getLocation().isValid() && errors.back().nonConstantAt.isInvalid())
      errors.back().nonConstantAt = info.getSourceManager().getExpansionLoc(info.getLocation());
    // Clang 22 says it at the pack of the template template parameter ("template argument for
    // non-type template parameter must be an expression") with this note at the argument.
    if (level == clang::DiagnosticsEngine::Note && !errors.empty() &&
        info.getID() == clang::diag::note_template_arg_template_params_mismatch)
      errors.back().templateTemplateArgument = errors.back().nvccAccepts = true;
    if (level < clang::DiagnosticsEngine::Error) return;
    info.FormatDiagnostic(msg);
    RawError e;
    e.message = std::string(msg);
    e.asmString = asmStringError(info.getID());
    e.noViableInit = info.getID() == clang::diag::err_ovl_no_viable_function_in_init;
    e.noMember = info.getID() == clang::diag::err_no_member;
    // `C<T>::f<N>(x)` in an expression, the member found to be a template only at instantiation:
    // nvcc accepts it when it can look into C's definition (decided from the AST afterwards:
    // nvccFindsMemberTemplate); Clang gives up on the instantiation, which keeps no body.
    e.missingTemplateKeyword = info.getID() == clang::diag::err_template_kw_missing;
    e.unresolvedOverload = info.getID() == clang::diag::err_ovl_unresolvable;
    e.unmatchedDefinition = info.getID() == clang::diag::err_member_decl_does_not_match ||
                            info.getID() == clang::diag::err_member_decl_does_not_match_suggest;
    e.targetSpecialization = info.getID() == clang::diag::err_function_template_spec_no_match;
    e.refBadTarget = info.getID() == clang::diag::err_ref_bad_target;
    e.templateTemplateArgument = info.getID() == clang::diag::err_template_arg_template_params_mismatch;
    e.nvccAccepts = e.missingTemplateKeyword || e.templateTemplateArgument || namesItsOwnParameters(info);
    e.nonLiteralInConstexpr = info.getID() == clang::diag::err_constexpr_local_var_non_literal_type;
    e.constexprInit = info.getID() == clang::diag::err_constexpr_var_requires_const_init;
    e.includedAnyway = info.getID() == clang::diag::err_pp_file_not_found_angled_include_not_fatal ||
                       info.getID() == clang::diag::err_pp_file_not_found_typo_not_fatal;
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      auto& sm = info.getSourceManager();
      e.loc = sm.getExpansionLoc(info.getLocation());
      auto p = sm.getPresumedLoc(e.loc);
      if (p.isValid()) e.where = fmt::format("{}:{}:{}: ", p.getFilename(), p.getLine(), p.getColumn());
    }
    errors.push_back(std::move(e));
  }
  std::vector<RawError> errors;
  // Where an error nvcc does not have was dropped and Clang left a RecoveryExpr the kernel model
  // can walk as an unknown value (bracedHalfAssignment): not a reason to skip the function.
  std::vector<clang::SourceLocation> tolerated;
  size_t dropped = 0;  // errors taken out after the parse (LintConsumer::dropErrorsNvccDefers)
  // Every #include directive of the parse, guarded-away ones too: where it is (valid while the
  // SourceManager lives) and the real path of the file it names. An error in a header a linted file
  // includes is that file's, even where the includer's parse entered the header earlier.
  std::vector<std::pair<clang::SourceLocation, std::string>> includes;
  // Code the preprocessor skipped (`#if 0` ... `#endif`, a branch of #ifdef not taken): the range
  // from the directive to the end of the group (PPCallbacks::SourceRangeSkipped).
  std::vector<clang::SourceRange> skippedRanges;
};

// What one parse of a file produced.
struct CompileError {
  SourceSpan span;      // in a linted file
  std::string message;  // Clang's, with a hint where one is known
  bool inTarget = true; // located in the linted file itself (not attributed to an #include line)
  bool removedApi = false;  // a use of an API nvcc 13 rejects (compile_errors.h), not a Clang error
  bool deviceCode = false;  // inside a function compiled for the GPU (inDeviceCode)
  bool nvccWarning = false; // nvcc only warns here (a finding of warning severity, not an error)
  bool nvccAccepts = false; // nvcc accepts it, Clang cannot read it (a note: what it reaches is not analysed)
  bool templateKeyword = false;  // ... a member template called without `template` (RawError::missingTemplateKeyword)
  bool unmatchedDefinition = false;  // ... a function template defined with other parameters (RawError::unmatchedDefinition)
  bool targetSpecialization = false; // ... a specialization differing from its template in `__host__` only
  bool archDeviceMacro = false;      // ... host code calling what a __CUDA_ARCH__-dependent macro makes `__device__`
};
struct SkippedKernel {
  std::string name;
  SourceSpan where;
  std::string reason;
  int error = -1;  // index into errors of the error that explains it, if in a linted file
};
struct ParseResult {
  bool ran = false;
  size_t rawErrors = 0;                  // every error of the parse
  std::vector<std::string> errorTexts;   // "file:line:col: error: ..." for the input-error message
  std::vector<CompileError> errors;      // errors in (or attributed to) linted files
  size_t errorsInTarget = 0;             // errors located in the linted files themselves
  std::vector<Diagnostic> diags;         // the rules' findings
  std::vector<SkippedKernel> skipped;
  std::vector<KernelCoverage> coverage;  // per analysed kernel (its first shape's walk)
  // The program call sites the launch index read (LaunchIndex::programFacts).
  std::map<std::string, std::string> programFacts;
  unsigned kernels = 0;                  // analysed
  unsigned assumedKernels = 0;           // ... with no launch in the code and no --block-dim (shapes guessed)
  unsigned uninstantiatedKernels = 0;    // kernel templates of the linted file nothing in the unit instantiates
  // Where nvcc reads a member template without the `template` keyword that Clang needs
  // (`C<T>::f<N>(x)`, nvccFindsMemberTemplate): canonical path and byte offset of the name. The
  // parse strategies read the file again with the keyword there (Parser::templateKeywords).
  std::vector<std::pair<std::string, unsigned>> templateKeywordSites;
  // Out-of-line definitions of function templates that match no declaration of their namespace
  // (`template <class T> __device__ void ns::f(T a, DIM3 b) {...}` with `ns::f(T a)` declared):
  // nvcc (EDG) and GCC read one as declaring another overload, Clang rejects it and drops its body.
  // Canonical path, byte offset of the definition's `template`, and the declaration to put there
  // (on one line: `namespace ns { template <class T> __device__ void f(T a, DIM3 b); } `).
  std::vector<std::tuple<std::string, unsigned, std::string>> declarationSites;
  unsigned cleanFunctions = 0;           // host or device functions with a body free of errors
  double parseMs = 0, analysisMs = 0;
  std::map<std::string, double> phaseMs;  // FileAnalysis::phaseMs
  std::vector<std::string> log;
  bool consumed = false;                 // the AST was built and analysed (false: the parse never started)
  std::vector<std::pair<std::string, bool>> filesRead;  // real files the parse read, and whether each is a
                                                       // system header (the result cache's dependencies)
  std::optional<Preamble> preamble;      // the precompiled preamble it used
  // Some error had `__device__` candidates a host function could not call whose declarations this
  // parse's AST does not hold at the notes' places (they came from the preamble's build): the
  // strategies parse without the preamble to see whether a __CUDA_ARCH__-dependent macro made them.
  bool badTargetsUnread = false;
  // ... and some were: the places are among declarationSites (archDeviceSites).
  bool archDeviceMacros = false;
  std::map<std::string, std::string> sourceHashes;  // FileResult::sourceHashes
  std::string crash;                     // Clang crashed (runCrashIsolated): why; the counts say "worst"
};

}  // namespace gpuopt::engine
