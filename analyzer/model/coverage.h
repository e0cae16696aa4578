// What a kernel's source holds to analyse: its memory accesses as written (in its body and the
// bodies of the project's functions it calls), so that the model can say how many it reached and
// name the lines it did not ("0 findings" must mean "checked").
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>

#include <string>
#include <vector>

namespace gpuopt {

struct SourceAccess {
  const clang::Expr* expr = nullptr;  // a subscript, a dereference, a `->` member, or a call
  const clang::FunctionDecl* function = nullptr;  // where it is written
  // A call of a library function (no body in the project: wmma::load_matrix_sync, memcpy) that
  // takes a pointer: it touches memory the model cannot follow into. Its callee's name.
  std::string libraryCall;
};

// The memory accesses of `kernel` as written: array subscripts, dereferences and `->` members
// (not those inside another one's base: `a[i][j]` once, nor the operand of `&` or `sizeof`),
// calls of library functions that take a pointer argument other than a string literal (atomics
// and the intrinsics the model evaluates excepted), in the kernel and in the project functions it
// calls (with bodies, not in system headers, followed through direct calls and constructors).
// Branches a constant decides (`if constexpr`, `if (false)`, a template argument's test) and
// unevaluated operands are left out.
std::vector<SourceAccess> sourceAccesses(const clang::FunctionDecl* kernel, clang::ASTContext& ctx);

// The access expressions of one statement (the same rules; with `calls`, also those of the project
// functions it calls, transitively): for marking the accesses of code no thread runs, under a
// condition the model decided, as analysed (`calculateMip(...)` after the `return` every lane of a
// template instance takes: its body's accesses are decided too, not "not reached").
void accessesIn(const clang::Stmt* s, clang::ASTContext& ctx, std::vector<const clang::Expr*>& out, bool calls = false);

}  // namespace gpuopt
