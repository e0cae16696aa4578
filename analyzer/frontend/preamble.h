// A precompiled preamble of the CUDA headers (a Clang PCH), shared by every file parsed with the
// same flags, kept in the cache folder (<dir>/v1/preamble/<key>.pch + <key>.json).
//
// What it holds: everything a parse includes before the file's own text -- the forced includes of
// the command (Clang's CUDA runtime wrapper, gpuopt-lint's nvcc-compatibility header, a database's
// -include) -- followed by the file's *leading* `#include <...>` lines (those before any other
// directive, declaration or quoted include). A parse with it sees exactly what it saw without it:
// the same headers in the same order before the file's text; the file's own #include lines then
// find their include guards set. It is used only when building it had no error and every header
// it contains is a system header (the project's own headers are never in it, so they are linted
// and re-read as usual); otherwise the file falls back to the preamble of the forced includes
// alone, then to no preamble. Used only with a CUDA toolkit (the bundled declarations parse in
// milliseconds).
//
// Validation: the key is a hash of the tool's identity, the working folder, the driver arguments
// (less the file and its project-layout -idirafter folders) and the leading includes; the manifest
// lists every file the PCH read with its size and modification time, and a PCH whose inputs changed
// is rebuilt. Writes go through a temporary file and a rename (concurrent runs are safe).
#pragma once
#include <llvm/ADT/IntrusiveRefCntPtr.h>
#include <llvm/Support/VirtualFileSystem.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/frontend/cache.h"

namespace gpuopt {

// The `#include <...>` lines at the start of a source text, before anything else but blank lines
// and comments (spelled names, in order, without duplicates).
std::vector<std::string> leadingSystemIncludes(const std::string& text);

// The leading `#include` lines, `<...>` and `"..."` alike, as directive operands in order
// (`<cuda_runtime.h>`, `"common.cuh"`), without duplicates; the block ends where anything else starts.
std::vector<std::string> leadingIncludes(const std::string& text);

struct Preamble {
  std::string pchPath;
  std::string headerPath, headerText;  // the virtual header the PCH was built from (must be visible)
  std::vector<FileStamp> deps;         // what the PCH read
  bool built = false;                  // built by this call (cold)
  size_t includes = 0;                 // leading includes it holds
};

// The file system of a parse, with one extra in-memory file (the preamble header).
using MakeParseFS = std::function<llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>(const std::string& path,
                                                                                  const std::string& text)>;

// The preamble for parsing `file` with driver arguments `args` (file last); `layoutArgs` are the
// -idirafter arguments left out of its key. Builds it when missing or stale, if `mayBuild` (which
// any build attempt then clears: the analysis of one file builds at most one preamble per run, so
// a cold run of a file parsed several times -- host-side retry, includers -- costs one build, and
// later runs build the rest). Nullopt when none can be used (log says why when `log`).
// With `defer` (a run with a core to spare), a preamble that must be built is handed to it as a
// task instead (run it on another thread, with a log of its own): this call then looks only for
// the lesser preambles already built, and the file is parsed with one of them or none.
// The task returns whether it built a usable preamble.
using DeferBuild = std::function<void(std::function<bool(std::vector<std::string>* log)>)>;
std::optional<Preamble> getPreamble(const std::string& cacheDir, const std::vector<std::string>& args,
                                    const std::vector<std::string>& layoutDirs, const std::string& file,
                                    const MakeParseFS& makeFS, std::vector<std::string>* log, bool& mayBuild,
                                    const DeferBuild* defer = nullptr);

}  // namespace gpuopt
