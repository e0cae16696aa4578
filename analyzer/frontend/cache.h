// The on-disk caches that make repeated runs cheap (pre-commit, CI):
//   <dir>/v1/preamble/  precompiled CUDA header preambles (analyzer/frontend/preamble.*)
//   <dir>/v1/results/   stored findings per input file (ruff-like result cache)
// <dir> is --cache-dir, else $XDG_CACHE_HOME/gpuopt-lint, else ~/.cache/gpuopt-lint.
// Every file is written to a temporary file and renamed into place, so concurrent runs never see a
// partial file; an entry that cannot be read is ignored (and replaced), never an error.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/report/output.h"

namespace gpuopt {

struct AnalysisOptions;

struct CacheOptions {
  std::string dir;       // root cache folder; empty: no cache at all (--no-cache)
  bool preamble = true;  // use/build precompiled header preambles
  bool results = true;   // use/store the result cache
  // A preamble that must be built is built on a thread of its own while the file is parsed
  // without it (the run has a core to spare: one file, fewer files than cores, the language
  // server); the analysis waits for it before it returns. Same findings; cold runs cost about a
  // bare parse instead of a preamble build and a parse with it.
  bool backgroundPreamble = false;
};

// The default cache folder (XDG), or empty when neither $XDG_CACHE_HOME nor $HOME is set.
std::string defaultCacheDir();
// Why `dir` cannot serve as the cache folder (it cannot be created, or a file cannot be made in
// it), or nullopt when it can. Creates it when missing.
std::optional<std::string> cacheDirProblem(const std::string& dir);

// Identifies a build of the analyzer: version, LLVM version, the executable's path, size and time,
// the bundled headers. Part of every cache key, so a rebuilt binary never reads stale entries.
// toolIdentity() is this process's own; toolIdentityOf(EXE) that of the analyzer at EXE (the
// launcher, tools/gpuopt_lint.cpp, computes the key of the engine it would run).
const std::string& toolIdentity();
std::string toolIdentityOf(const std::string& exe);

// Hex BLAKE3 of a text (cache keys, file names).
std::string hashText(std::string_view text);

// A stored text with its checksum: "MAGIC <BLAKE3 of BODY>\nBODY" (result entries, preamble
// manifests). checkedBody returns BODY only when the text is intact: a flipped bit, a truncated or
// edited text, another magic give nullopt (a cache miss, never a lie).
std::string withChecksum(std::string_view magic, std::string_view body);
std::optional<std::string_view> checkedBody(std::string_view magic, std::string_view text);

// Writes `text` to `path` through a temporary file in the same folder and a rename. False on error.
bool writeFileAtomically(const std::string& path, std::string_view text);

// A file a parse read, with what is needed to tell whether it changed.
// A folder is stamped by the names it holds (`hash` is "folder:" or "sources:" and a hash of the
// sorted names): adding, removing or renaming an entry changes it, while a change inside an entry
// (or, for "sources:", a file that is not C, C++ or CUDA source, such as a cache or log file) does
// not.
struct FileStamp {
  std::string path;
  uint64_t size = 0;
  int64_t mtimeNs = 0;
  std::string hash;  // content hash; empty for system/toolkit files (size + time are trusted there)
};
// The stamp of a folder now: every name, or (`sourcesOnly`) the C, C++ and CUDA source files' names,
// among its first 2000 entries. nullopt if it is not a folder.
std::optional<FileStamp> stampFolder(const std::string& path, bool sourcesOnly);
// The stamp of a file now; nullopt if it cannot be read. `withHash`: also hash the content.
std::optional<FileStamp> stampFile(const std::string& path, bool withHash);
// Whether the file still matches its stamp (content compared by hash when the stamp has one).
bool stampStillValid(const FileStamp& s);

// The result cache's key of one input file, computed without Clang so that the launcher (which does
// not load Clang) and the analyzer agree: the tool, the working folder, Clang's resource dir and
// the toolkit, the file as named, every option that changes findings, and what decides the parse
// command: the contents of the compile_commands.json (or compile_flags.txt) the file would use,
// or the Makefile's flags and the project layout folders, and the command they give. What the
// parse itself reads is checked by the entry's dependencies (stamps), not by the key.
std::string resultKey(const std::string& file, const AnalysisOptions& opts, const std::string& resourceDir,
                      const std::string& cudaPath, const std::string& toolId);

// What analyzeFile returns, as stored in the result cache.
struct CachedAnalysis {
  FileResult result;
  unsigned kernels = 0;
  std::vector<std::string> log;
};

// The result cache entry of one input file: valid only if `key` matches and every dependency is
// unchanged.
std::optional<CachedAnalysis> loadCachedResult(const std::string& cacheDir, const std::string& file,
                                               const std::string& key);
void storeCachedResult(const std::string& cacheDir, const std::string& file, const std::string& key,
                       const std::vector<FileStamp>& deps, const CachedAnalysis& a);

// An entry's text (with its checksum) and its reading, without the file system (the fuzz target
// tests/fuzz/fuzz_result_cache.cpp reads arbitrary bytes through parseResultEntry). parseResultEntry
// returns nullopt for anything but an intact entry of `key`; its dependencies are not checked.
struct StoredResult {
  CachedAnalysis analysis;
  std::vector<FileStamp> deps;
};
std::string resultEntryText(const std::string& key, const std::vector<FileStamp>& deps, const CachedAnalysis& a);
std::optional<StoredResult> parseResultEntry(std::string_view text, const std::string& key);

// Serialisation of a FileResult (lossless; also used by the tests that compare runs).
std::string fileResultToJson(const FileResult& r);

}  // namespace gpuopt
