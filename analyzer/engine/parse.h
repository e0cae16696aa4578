// The parse stage: one Clang parse of a translation unit with a compile command (the precompiled
// preamble when there is one, the bundled CUDA headers and unsaved editor buffers in its file
// system), whose AST the model-and-rules consumer (lint_consumer.h) analyses; and the two
// variants the driver's fallbacks need (the host-side command, keeping device-code errors).
#pragma once
#include <map>
#include <llvm/ADT/IntrusiveRefCntPtr.h>
#include <llvm/Support/VirtualFileSystem.h>

#include <array>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/engine/engine.h"
#include "analyzer/engine/parse_result.h"
#include "analyzer/frontend/frontend.h"

namespace gpuopt::engine {

// Text inserted into files for one parse: canonical path -> (byte offset on disk, text), ascending.
using TextInsertions = std::map<std::string, std::vector<std::pair<unsigned, std::string>>>;

struct Parser {
  const AnalysisOptions& opts;
  const std::vector<std::unique_ptr<Rule>>& rules;
  std::string resourceDir, cudaPath;
  bool preambleBuilt = false;
  bool mayBuildPreamble = true;  // one preamble build (attempt) per analyzed file and run
  // Toolkit headers Clang's CUDA wrapper includes by a quoted name that a project folder of the
  // command shadows (set by run(); fileSystem() forwards them to the toolkit's).
  std::vector<std::string> shadowedWrapperIncludes;
  // Files read with `template ` inserted before a member template's name at these byte offsets
  // (canonical path -> ascending offsets): nvcc's reading of `C<T>::f<N>(x)`, which Clang parses
  // as comparisons. Set by the parse strategies for one parse (with no preamble that holds one of
  // those files).
  std::map<std::string, std::vector<unsigned>> templateKeywords;
  // Declarations inserted before out-of-line definitions of function templates that match no
  // declaration of their namespace (ParseResult::declarationSites): nvcc (EDG) and GCC read such a
  // definition as declaring another overload; Clang rejects it. Set by the parse strategies for one
  // parse, as templateKeywords.
  TextInsertions declarations;
  // One parse without the preamble: its errors were made in the preamble's build, where the AST
  // positions of a missing `template` are not recorded (the strategies parse again to find them).
  bool skipPreamble = false;
  // Preambles being built beside the parse (CacheOptions::backgroundPreamble), their log lines,
  // and whether one was built: finishBackground() waits for them (so does the destructor).
  std::vector<std::thread> background;
  std::mutex backgroundMutex;
  std::vector<std::string> backgroundLog;
  bool backgroundBuilt = false;
  void finishBackground(std::vector<std::string>& log);
  ~Parser() {
    for (auto& t : background)
      if (t.joinable()) t.join();
  }

  // The file system of a parse: the real one (with `<< <` launches joined), the bundled headers
  // in memory, and `extraPath` (the preamble's header) when given.
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fileSystem(const std::string& extraPath = {},
                                                              const std::string& extraText = {});
  // One parse of `file` (the translation unit), linting either it and its project includes or,
  // with `target`, only that file.
  ParseResult run(const std::string& file, const ParseCommand& cmd, const std::vector<std::string>& layoutDirs,
                  const std::string& target = {}, const std::string& targetName = {});
  ParseResult runOnce(const std::string& file, const ParseCommand& cmd, const std::vector<std::string>& layoutDirs,
                      const std::string& target, const std::string& targetName, const Preamble* pre);
};

// Parser::fileSystem from its parts (a preamble built on another thread gets copies of them).
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> parseFileSystem(const AnalysisOptions& opts, const std::string& resourceDir,
                                                                const std::string& cudaPath,
                                                                const std::vector<std::string>& shadowedWrapperIncludes,
                                                                const std::string& extraPath, const std::string& extraText,
                                                                const std::map<std::string, std::vector<unsigned>>* templateKeywords = nullptr,
                                                                const TextInsertions* declarations = nullptr);

// The absolute path with symbolic links and `..` resolved (as far as the path exists).
std::string canonicalPath(const std::string& p);

// The texts inserted at their offsets (ascending) of `text`, and where each insertion starts in the
// new text as (line, column, length), 1-based, in order.
std::string insertTexts(const std::string& text, const std::vector<std::pair<unsigned, std::string>>& inserts,
                        std::vector<std::array<unsigned, 3>>* at = nullptr);
// The insertions of one file: `template ` at the keyword offsets and the declarations, by offset.
std::vector<std::pair<unsigned, std::string>> insertionsFor(const std::string& path,
                                                            const std::map<std::string, std::vector<unsigned>>& keywords,
                                                            const TextInsertions& declarations);

// The folders a command's include flags name, in order: each of `flags` (`-I`, `-iquote`,
// `-idirafter`, `-isystem`) as `-I dir`, `-Idir` or `-iquote=dir`.
std::vector<std::string> includeFolders(const std::vector<std::string>& args,
                                        std::initializer_list<std::string_view> flags);

// The same command parsing the host side (--cuda-host-only).
ParseCommand hostVariant(ParseCommand pc);

// nvcc also compiles the host side, where __CUDA_ARCH__ is not defined: the `#error` directives of
// `file` that its host pass reaches (preprocessed with the host-side command, only when the file
// has an `#error` under a condition on __CUDA_ARCH__). Findings at the directive, as `file` names it.
std::vector<CompileError> hostPassErrors(Parser& parser, const std::string& file, const ParseCommand& cmd);

// The host-side parse replaces a device-side one that had more errors (host code calling what only
// nvcc's host headers declare), but the device-side errors inside GPU code are nvcc's too (its
// device compilation fails there): they are kept as findings (the host parse's kernels are still
// analysed).
void keepDeviceCodeErrors(ParseResult& host, const ParseResult& device);

// The prefixes of files that are never linted: the toolkit, Clang's headers, the bundled ones.
std::vector<std::string> excludedPrefixes(const std::string& resourceDir, const std::string& cudaPath);

}  // namespace gpuopt::engine
