// The front end: which compiler arguments each input is parsed with, and input checks.
// The Clang-facing part lives in analyzer/engine/ (parse.cpp, parse_command.cpp); this header is Clang-free.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuopt {

struct FrontendOptions {
  std::string compileCommandsDir;      // -p DIR
  std::vector<std::string> extraArgs;  // after `--`
  std::string cudaPath;                // --cuda-path
  bool noCuda = false;                 // --no-cuda: use the bundled header even if a toolkit exists
  std::string resourceDir;             // --resource-dir (default: baked in at configure time)
  std::string gpuArch = "sm_90";
  bool verbose = false;
  unsigned long long maxFileBytes = 8ull << 20;
};

// Checks a path before parsing: exists, regular file, CUDA/C++ extension, not binary, not huge.
// Returns the error message (without the file name), or nullopt if fine.
std::optional<std::string> checkInputFile(const std::string& path, unsigned long long maxBytes);

// Clang's resource directory (builtin headers), checked for __clang_cuda_runtime_wrapper.h.
// Order: --resource-dir, $GPUOPT_LINT_RESOURCE_DIR, the one baked in at configure time.
std::string findResourceDir(const FrontendOptions& o, std::string& error);

// The CUDA toolkit: --cuda-path, $CUDA_PATH, nvcc on PATH, /usr/local/cuda. Empty if none.
std::string findCudaPath(const FrontendOptions& o, std::vector<std::string>* log = nullptr);

// Arguments kept from a compile_commands.json entry (nvcc's or a compiler's), through
// translateCompileCommand (analyzer/frontend/nvcc_args.h: response files, nvcc's spellings,
// host-compiler options). Relative paths are made absolute against `directory` (the entry's
// working directory). Everything else is dropped and listed in `dropped`, with unreadable
// response files.
std::vector<std::string> filterCompileCommand(const std::vector<std::string>& cmd, const std::string& directory,
                                              std::vector<std::string>& dropped);

// Finds compile_commands.json in `dir` or a parent of the file's folder. Empty if none.
std::string findCompileCommandsDir(const std::string& file, const std::string& explicitDir);

// The files that decide how `file` is parsed and that exist: the compile_commands.json (or
// compile_flags.txt) its folder's database has, and the Makefiles makefileFlags reads.
std::vector<std::string> commandSources(const std::string& file, const std::string& explicitDbDir);

// The repository root above `file`: the nearest ancestor folder holding `.git`. Empty if none.
std::string repositoryRoot(const std::string& file);

// Include folders a project without compile_commands.json usually passes with -I: the file's own
// folder (for `#include <local.cu>`), the include/, inc/, common/, common/inc/ and Common/
// folders of the file's folder and of its ancestors up to the repository root (at most 4 levels
// up without one), and the repository root itself. Only existing folders, nearest first. They
// are searched last (-idirafter), so they only resolve includes that are not found otherwise.
std::vector<std::string> projectLayoutIncludeDirs(const std::string& file);

// The -I and -D flags of the Makefile that builds `file` (Makefile, makefile or GNUmakefile in its
// folder or up to two folders above, the nearest), for projects built with make and no
// compile_commands.json, and of the Makefiles it `include`s (-include, sinclude; relative to its
// folder). Only flags outside ifeq/ifdef blocks and without make variables are taken; -I folders
// are made absolute against the Makefile's folder. `makefile` gets its path.
// `included` gets the Makefiles it includes.
std::vector<std::string> makefileFlags(const std::string& file, std::string* makefile = nullptr,
                                       std::vector<std::string>* included = nullptr);

// nvcc accepts a launch written `k<< <grid, block>> >(...)`; Clang's lexer needs `<<<`/`>>>` in one
// piece. Rewrites `<<` + blanks + `<` to `<<<` + blanks (same length, so every column stays) and
// the `>>` + blanks + `>` that closes it. Returns whether anything changed.
bool normalizeLaunchChevrons(std::string& text);

// The `#include` directives of a source text: the spelled path and whether it was <angled>.
struct IncludeDirective {
  std::string spelled;
  bool angled = false;
};
std::vector<IncludeDirective> scanIncludes(const std::string& text);

// Files that include `target` (directly or through other files that do), found by reading the
// `#include` lines of: `inputs`, `dbFiles` (compile_commands.json entries), and the source files of
// target's folder and of up to two folders above it. Outermost includers first (a file no other
// candidate includes), then inputs and database entries before other files, .cu before the rest.
// `scanned`, when given, gets what the answer depends on (the result cache's dependencies): the
// folders listed and the files read.
// Whether a path names a C, C++ or CUDA source or header (.cu .cuh .cpp .cc .cxx .c .h .hpp .hh .inl).
bool isSourceExtension(const std::filesystem::path& p);

struct IncluderScan {
  std::vector<std::string> folders, files;
};
std::vector<std::string> findIncluders(const std::string& target, const std::vector<std::string>& inputs,
                                       const std::vector<std::string>& dbFiles, size_t max = 3,
                                       IncluderScan* scanned = nullptr);

struct ParseCommand {
  std::vector<std::string> args;  // argv for the Clang driver, args[0] is the program
  bool bundledCuda = false;       // parsing against the bundled header (no toolkit)
  std::vector<std::string> log;   // --verbose lines
  // Where the flags came from, for a header that is not found (analyzer/engine/compile_errors.h):
  // "the compile_commands.json entry for a.cu in build/compile_commands.json" or "the Makefile
  // /p/Makefile" (empty: neither), and the include-folder arguments with their origins.
  std::string flagsSource;
  bool fromDatabase = false;
  std::vector<std::string> includeOrigins;
};

// The full command used to parse `file`. `dbArgs` are the filtered compile_commands.json flags.
// `layoutDirs` are added with -idirafter (see projectLayoutIncludeDirs).
ParseCommand buildParseCommand(const std::string& file, const FrontendOptions& o,
                               const std::string& resourceDir, const std::string& cudaPath,
                               const std::vector<std::string>& dbArgs,
                               const std::vector<std::string>& layoutDirs = {});

// The bundled CUDA headers (analyzer/cuda_stub), embedded at build time.
const std::vector<std::pair<std::string_view, std::string_view>>& bundledCudaHeaders();
inline constexpr std::string_view kBundledIncludeDir = "/gpuopt-lint-bundled/include";

}  // namespace gpuopt
