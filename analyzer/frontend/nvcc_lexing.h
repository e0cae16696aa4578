// Where nvcc's preprocessor (GCC's) and Clang's lexer read the same text differently, the source is
// rewritten, keeping every column where possible, before Clang reads it (the launch-chevron file
// system layer in analyzer/engine/parse.cpp applies it to the project's files). Clang-free; unit-tested.
#pragma once
#include <string>

namespace gpuopt {

// `extern "C"__global__ void k()`: C++11 lexes `"C"__global__` as one user-defined string literal
// (a ud-suffix may start with an underscore), Clang too; GCC's preprocessor splits a literal's
// suffix that names a macro (with -Wliteral-suffix), so nvcc reads `extern "C" __global__`. A
// suffix starting with two underscores is reserved for the implementation (no user-defined literal
// can have one), so it is always a macro of the toolkit or compiler: a blank is put between the
// literal and it. The blank before the literal on the same line moves there (`extern"C" __global__`:
// the literal moves one column left, everything after it stays); without one, it is inserted.
// Comments, character literals, raw strings and numbers are skipped. Returns whether anything changed.
bool splitReservedLiteralSuffixes(std::string& text);

// `#define PRAGMA_UNROLL #pragma unroll`, used alone on its line: nvcc preprocesses with GCC into a
// file that its front end reads again, and there the expansion starts a line, so it is a pragma;
// Clang reads the expansion as the tokens `#`, `pragma`, ... ("expected expression"). An
// object-like macro whose replacement is a pragma is rewritten as `_Pragma("...")` (the rest of the
// line after the name moves; the lines stay). Only single-line definitions; a use in the middle of
// a line, which nvcc rejects, is accepted here. Returns whether anything changed.
bool pragmaMacrosAsOperators(std::string& text);

// `asm("..." : "=r"(c) : "r"(a) "r"(b))`: nvcc's front end accepts inline-assembly operands that
// are not separated by a comma (device code; GCC rejects it in host code), Clang does not ("expected
// ')'"). Within the operand lists of an asm statement, a `)` followed by a constraint string gets
// the comma: the blank between them becomes it (same length), or one is inserted. Also, in the
// template of an asm statement with operands, a PTX special register written with one `%`
// (`"mov.u32 %0, %laneid;"`), which nvcc passes through and Clang rejects ("invalid % escape in
// inline assembly string"), gets its `%` doubled, as Clang wants. Returns whether anything changed.
bool commaSeparateAsmOperands(std::string& text);

}  // namespace gpuopt
