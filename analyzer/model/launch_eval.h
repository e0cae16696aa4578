// Values of host expressions around a kernel launch, for the launch index (launch_index.h): integers,
// block shapes, the kernels a callee expression names, and whether a launch is dead, with the
// parameters of the functions around the launch bound to the arguments of their call sites
// (a launch wrapper `launch(kernel, grid, block, smem, ...)` is launched with what each caller
// passes), template and constexpr arguments folded, local variables read where they are used
// (their initialiser or the assignment that reaches the use), members of configuration structs
// (`cfg.block`: set in the function, in the initialiser, by a helper that returns the struct or
// fills it through a pointer or reference), and variables at namespace scope assigned in any
// function of the project (one value, or not known).
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpuopt {

class ProgramCalls;

// Whether an assignment `set` cannot reach `use` because they lie in different arms of one `if`, or
// of two ifs with the same condition over variables the function never assigns (launch_targets.cpp).
bool armExcludes(const clang::Stmt* set, const clang::Expr* use, clang::ASTContext& ctx);

class HostValues {
 public:
  // One function of the chain around a launch: `fn`, entered through `call` (a call of fn in the
  // next frame's function), or not bound (nullptr: its parameters are not known). Innermost first.
  struct Frame {
    const clang::FunctionDecl* fn = nullptr;
    const clang::CallExpr* call = nullptr;
  };
  using Env = std::vector<Frame>;

  explicit HostValues(clang::ASTContext& ctx) : ctx_(ctx) {}
  // The call sites of each function (canonical declaration), for binding parameters.
  void setCalls(const std::map<const clang::FunctionDecl*, std::vector<const clang::CallExpr*>>* calls) { calls_ = calls; }
  // The call sites of the program's other files (a compile database's units and headers,
  // analyzer/frontend/program_calls.h): a function other files can call (external linkage, not a
  // member) is called with their arguments too. Each such call is made here as a call expression
  // of the function with the integer literals it passes (and an unknown value for every other
  // argument), in no file and under no statement; a use of the name other than a call there (its
  // address taken) is a call with every argument unknown.
  void setProgram(const ProgramCalls* program) { program_ = program; }
  // Whether `call` is one of those (it has no place in this unit's source).
  bool external(const clang::CallExpr* call) const { return externalCalls_.count(call) > 0; }
  // The names whose program call sites a query read, with the answer's fingerprint
  // (ProgramCalls::fingerprint): what a stored result depends on beyond the files it read.
  const std::map<std::string, std::string>& programFacts() const { return programFacts_; }
  // Records an assignment to a variable at namespace (or class static) scope: `g = x` (member
  // empty) or `g.m = x`.
  void noteGlobalSet(const clang::VarDecl* v, const std::string& member, const clang::Expr* value);

  // The integer value of `e` under `env`, or nullopt.
  std::optional<int64_t> integer(const clang::Expr* e, const Env& env);
  // Whether `e` is a tensor view's stride (`t.stride(0)`, `t.strides()[k]`, `t.stride()[k]`, a
  // local or a wrapper's parameter holding one): a layout the binding layer decides, 1 along the
  // innermost dimension of every contiguous tensor (gsplat's pose kernels, sixth stop check).
  bool viewStride(const clang::Expr* e, const Env& env) { return viewStrideAt(e, env, 0); }
  // A block or grid shape (an integer, dim3(...), make_uint3, a dim3 variable or member); with
  // `partial`, axes that are not known are 0 and the call succeeds when the form was read.
  // `origin`: the outermost expression the shape came through (a call site's argument when it came
  // through a parameter), for pointing at it.
  bool shape(const clang::Expr* e, const Env& env, unsigned dims[3], bool partial = false,
             const clang::Expr** origin = nullptr);
  // The shape in member `member` of the struct `base` names (`&cfg`, `cfg`) where `use` reads it
  // (cudaLaunchKernelEx's config.blockDim).
  bool memberShape(const clang::Expr* base, const std::string& member, const clang::Expr* use, const Env& env,
                   unsigned dims[3], bool partial = false);
  // The kernels a callee expression may name (`k`, `&k`, `k<T>`, a function pointer variable, a
  // parameter, `c ? k1 : k2`, a member of a struct): empty when not known.
  std::vector<const clang::FunctionDecl*> kernels(const clang::Expr* callee, const Env& env);
  // Whether a condition around `s` (inside `env[0].fn`) that the constants decide keeps it from running:
  // `if (block_size == 16) k<16><<<...>>>` with `block_size = 32`, a `case` the switch never takes.
  bool dead(const clang::Stmt* s, const Env& env);

  // The function whose parameters a query needed but `env` did not bind (its outermost frame's
  // function), or nullptr; cleared by clearMissing().
  const clang::FunctionDecl* missing() const { return missing_; }
  void clearMissing() { missing_ = nullptr; }
  // The function (or lambda call operator) whose body holds `s`, or nullptr.
  const clang::FunctionDecl* enclosingFunction(const clang::Stmt* s) const;
  // The call sites of `fn` (through its canonical declaration), or none.
  const std::vector<const clang::CallExpr*>& callsOf(const clang::FunctionDecl* fn) const;

 private:
  // How deep an evaluation follows variables, parameters and calls before it gives up.
  static constexpr int kMaxDepth = 16;
  // An expression to evaluate in another environment (the value a variable holds at a use).
  struct Bound {
    const clang::Expr* e = nullptr;
    Env env;
  };
  std::optional<Bound> parameterValue(const clang::ParmVarDecl* p, const Env& env);
  bool viewStrideAt(const clang::Expr* e, const Env& env, int depth);
  // What a lambda's parameter gets at each call of the lambda (`auto go = [&](auto k) {
  // k<<<g, b>>>(...); }; go(k1);`): the lambda's body belongs to the function around it, so a call
  // there is evaluated in the same environment.
  std::vector<Bound> lambdaArguments(const clang::ParmVarDecl* p, const Env& env);
  std::optional<Bound> variableValue(const clang::VarDecl* v, const clang::Expr* use, const Env& env);
  // The value an enclosing branch fixes for `v` at `use`: the then-branch of `if (v == C)` (also
  // as a conjunct of `&&`), a `case C:` of `switch (v)` (the case's own statement), when nothing
  // between assigns v.
  std::optional<int64_t> guardedValue(const clang::VarDecl* v, const clang::Expr* use);
  std::optional<Bound> memberValue(const clang::Expr* base, const std::string& member, const clang::Expr* use,
                                   const Env& env, int depth);
  std::optional<Bound> returnedValue(const clang::CallExpr* call, const Env& env);
  std::optional<int64_t> integerAt(const clang::Expr* e, const Env& env, int depth);
  bool shapeAt(const clang::Expr* e, const Env& env, unsigned dims[3], bool partial, int depth);
  void kernelsAt(const clang::Expr* e, const Env& env, int depth, std::vector<const clang::FunctionDecl*>& out);
  void need(const clang::FunctionDecl* fn) {
    if (!missing_) missing_ = fn;
  }

  clang::ASTContext& ctx_;
  const std::map<const clang::FunctionDecl*, std::vector<const clang::CallExpr*>>* calls_ = nullptr;
  std::map<const clang::VarDecl*, std::vector<std::pair<std::string, const clang::Expr*>>> globalSets_;
  const clang::FunctionDecl* missing_ = nullptr;
  const clang::Expr** origin_ = nullptr;
  const ProgramCalls* program_ = nullptr;
  // callsOf's answers with the program's calls added (by canonical declaration).
  mutable std::map<const clang::FunctionDecl*, std::vector<const clang::CallExpr*>> withProgram_;
  mutable std::set<const clang::CallExpr*> externalCalls_;
  mutable std::map<std::string, std::string> programFacts_;
  mutable std::optional<std::set<std::string>> unitFiles_;  // the files this parse read, canonical
  const std::vector<const clang::CallExpr*>& programCallsOf(const clang::FunctionDecl* fn,
                                                            const std::vector<const clang::CallExpr*>& here) const;
};

}  // namespace gpuopt
