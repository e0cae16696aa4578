// A compilation database entry's arguments, as nvcc (or GCC/Clang) reads them, translated into the
// arguments of gpuopt-lint's Clang parse, each with where it came from. Pure functions of the
// entry's arguments and directory (and the response files they name): Clang-free, unit-tested
// alone (tests/unit/test_nvcc_args.cpp).
//
// What is read:
// - response files: nvcc's `--options-file F`, `-optf F`, `--options-file=F`, `-optf=F` and the
//   `@F` of GCC, Clang and nvcc, relative to the entry's directory, nested (CMake's Makefile
//   generator puts every include folder of a CUDA unit in `includes_CUDA.rsp`);
// - include folders and macros in every spelling nvcc accepts: `-I DIR`, `-IDIR`, `-I=DIR`,
//   `--include-path DIR`, `--include-path=DIR`, the same for `-isystem`/`--system-include`,
//   `-D`/`--define-macro`, `-U`/`--undefine-macro`, `-include`/`--pre-include`; nvcc's list
//   values (`-I a,b`, `-DA,B`) are split at commas as nvcc splits them;
// - host-compiler options (`-Xcompiler A,B`, `-Xcompiler=A`, `--compiler-options "A B"`, and
//   unknown options under `-forward-unknown-to-host-compiler`): their -I/-D/-U/-isystem/-include/
//   -std, and `-fopenmp` (GCC's: `_OPENMP` is defined for the whole file as GCC defines it);
// - `-std`, `--std` in both forms; nvcc's `--extended-lambda` (also `--expt-extended-lambda`) and
//   `--expt-relaxed-constexpr` define `__CUDACC_EXTENDED_LAMBDA__` / `__CUDACC_RELAXED_CONSTEXPR__`
//   as nvcc does;
// - `-ccbin DIR|COMPILER` (`--compiler-bindir`, `=` forms): the host compiler, whose own include
//   folder nvcc searches (GCC's `omp.h`); see hostCompilerIncludeDir.
// Everything else (architectures, optimisation, warnings, output, linking, ptxas options) does not
// change what the code means to a parse and is dropped, listed in `dropped`.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuopt {

// One Clang argument (or a flag and its value, kept together) and where it came from: the spelling
// in the entry (`-isystem=/usr/local/cuda/include`) and, when it was read from a response file,
// that file (`--options-file CMakeFiles/x.dir/includes_CUDA.rsp`).
struct TranslatedArg {
  std::vector<std::string> args;  // e.g. {"-I/abs/inc"} or {"-include", "/abs/pre.h"}
  std::string spelled;            // as written in the entry or the response file
  std::string responseFile;       // the response file's option as written, empty when in the entry
  // "`-I=inc` (from --options-file CMakeFiles/x.dir/includes_CUDA.rsp)"
  std::string origin() const;
};

struct TranslatedCommand {
  std::vector<TranslatedArg> kept;          // in order
  std::vector<std::string> dropped;         // as spelled (with its value), not for Clang
  std::vector<std::string> responseFiles;   // absolute paths of the response files read
  std::vector<std::string> problems;        // e.g. a response file that cannot be read
  std::string hostCompiler;                 // -ccbin's value, absolute when it is a path
  bool hostOpenMP = false;                  // -fopenmp for the host compiler
  bool isNvcc = false;                      // the compiler is nvcc
  // The Clang arguments, flattened.
  std::vector<std::string> args() const;
  // The kept include-folder arguments with their origins ("-I/abs/inc from `-I=inc` (from
  // --options-file ...)"), for messages about a header that was not found.
  std::vector<std::string> includeOrigins() const;
};

// Reads a response file's text into arguments as nvcc and GCC do: words separated by blanks and
// newlines, "double" and 'single' quotes group (and are removed), a backslash escapes the next
// character outside single quotes.
std::vector<std::string> splitResponseFile(const std::string& text);

// Reads a file's text; nullopt when it cannot be read. Replaceable in tests.
using ReadTextFn = std::function<std::optional<std::string>(const std::string& path)>;

// Translates `cmd` (argv of one compile command; cmd[0] is the compiler) run in `directory`.
// Relative paths (include folders, pre-included files, response files) are made absolute against
// `directory`. The source file itself, `-c` and `-o` are not kept, nor are warning options (-W...:
// the parse reports no warnings, and -Werror=x would make one an error nvcc does not give).
// `keepUnknown`, when given, keeps an option neither nvcc nor this translation knows when it
// returns true (the flags after `--`: Clang's own options pass through).
TranslatedCommand translateCompileCommand(const std::vector<std::string>& cmd, const std::string& directory,
                                          const ReadTextFn& read = {},
                                          const std::function<bool(const std::string&)>& keepUnknown = {});

// The include folder of the host compiler nvcc uses (GCC's own folder with omp.h, quadmath.h:
// `g++ -print-file-name=include`), searched by nvcc's front end after the system folders. `ccbin`
// is -ccbin's value (a compiler or its folder); empty: `c++`/`g++` on PATH, as nvcc looks for it.
// Empty when none is found. The answer is remembered per ccbin (one process run each).
std::string hostCompilerIncludeDir(const std::string& ccbin);

}  // namespace gpuopt
