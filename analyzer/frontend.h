// The front end: which compiler arguments each input is parsed with, and input checks.
// The Clang-facing part lives in engine.cpp; this header is Clang-free.
#pragma once
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

// Arguments kept from a compile_commands.json entry (nvcc's or a compiler's): -I/-D/-U/-isystem/
// -iquote/-include/-std. Relative paths they name are made absolute against `directory` (the
// entry's working directory), joined (-Iinc) or separate (-I inc). Everything else is dropped and
// listed in `dropped`.
std::vector<std::string> filterCompileCommand(const std::vector<std::string>& cmd, const std::string& directory,
                                              std::vector<std::string>& dropped);

// Finds compile_commands.json in `dir` or a parent of the file's folder. Empty if none.
std::string findCompileCommandsDir(const std::string& file, const std::string& explicitDir);

struct ParseCommand {
  std::vector<std::string> args;  // argv for the Clang driver, args[0] is the program
  bool bundledCuda = false;       // parsing against the bundled header (no toolkit)
  std::vector<std::string> log;   // --verbose lines
};

// The full command used to parse `file`. `dbArgs` are the filtered compile_commands.json flags.
ParseCommand buildParseCommand(const std::string& file, const FrontendOptions& o,
                               const std::string& resourceDir, const std::string& cudaPath,
                               const std::vector<std::string>& dbArgs);

// The bundled CUDA headers (analyzer/cuda_stub), embedded at build time.
const std::vector<std::pair<std::string_view, std::string_view>>& bundledCudaHeaders();
inline constexpr std::string_view kBundledIncludeDir = "/gpuopt-lint-bundled/include";

}  // namespace gpuopt
