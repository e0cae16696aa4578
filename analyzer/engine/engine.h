// Runs the analysis of one input file: parse with Clang, build the kernel model, run the rules.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analyzer/frontend/cache.h"
#include "analyzer/frontend/frontend.h"
#include "analyzer/frontend/program_calls.h"
#include "analyzer/model/model_options.h"
#include "analyzer/report/output.h"

namespace gpuopt {

class Rule;

// Every field that can change a file's result must be part of the result cache's key
// (analyzeFile in engine.cpp), or an unchanged file would be served a stale result.
struct AnalysisOptions {
  FrontendOptions frontend;
  ModelOptions model;
  std::set<std::string> enabledRules;  // ids; empty = all
  // The other files of the run: a file that does not compile alone is analysed through one of
  // them when it includes it.
  std::vector<std::string> otherInputs;
  // Unsaved editor buffers (the language server): absolute path -> text, read instead of the file
  // on disk by the parse (the file itself or a header it includes).
  std::map<std::string, std::string> overlays;
  // --header-filter: when set, an included file is linted when its absolute path matches this
  // POSIX extended regular expression (searched, as clang-tidy does), instead of "the project's own
  // files"; an empty one lints the main file only. Toolkit, Clang and bundled headers never are.
  std::optional<std::string> headerFilter;
  // The preamble and result caches (analyzer/frontend/cache.h); an empty dir disables both.
  CacheOptions cache;
  // The call sites of the program's files (a compile database's units and the headers beside them,
  // analyzer/engine/program_scan.h), or nullptr. Not part of the result cache's key: a result lists
  // the names it asked about with their answers (FileResult::programFacts), checked on lookup.
  std::shared_ptr<const ProgramCalls> programCalls;
};

struct FileAnalysis {
  FileResult result;
  double parseMs = 0;     // Clang: preprocess, parse, semantic analysis
  double analysisMs = 0;  // kernel model and rules
  // Where the analysis time went: "kernel model" and each rule id (checks of the translation unit
  // and of every kernel), in ms; `gpuopt-bench` prints it (as clang-tidy's check profile does).
  std::map<std::string, double> phaseMs;
  unsigned kernels = 0;
  std::vector<std::string> log;  // --verbose
  bool fromCache = false;        // the stored result of an unchanged file (nothing was parsed)
  bool preambleBuilt = false;    // a precompiled preamble was built for it (a cold run)
};

// The result cache's stored analysis of `file` when the file and everything its last analysis read
// are unchanged and the key (resultKey) matches; nullopt otherwise, or when the options disable the
// cache. Clang-free (analyzer/frontend/cache.cpp): analyzeFile and the launcher both look up through here.
// `key` gets the key (empty when the cache is off).
std::optional<FileAnalysis> cachedAnalysis(const std::string& file, const AnalysisOptions& opts,
                                           const std::string& resourceDir, const std::string& cudaPath,
                                           const std::string& toolId, std::string* key = nullptr);

// The kernel model makes and drops many per-thread value arrays (a few KiB each), and glibc's
// defaults give freed memory back to the system at once, so the next ones fault their pages in
// again: keep up to 512 MiB of freed heap for reuse and serve blocks below 256 MiB from the heap
// (mallopt). Called once at the start of a process that analyses files (measured on ggml's
// flash-attention unit: 18% less analysis time, docs/measurements.md).
void tuneAllocatorForAnalysis();

// The rules (rules/all_rules.h), one instance each.
std::vector<std::unique_ptr<Rule>> registerAllRules();

// Parses and analyses one file. Compile errors do not hide what parsed: kernels whose bodies (and
// the program's functions they call) are free of errors are analysed, the errors become
// `compile-error` findings, and kernels that could not be analysed are named in notes. Only when
// nothing in the file could be analysed (no kernel and no function free of errors) is the file an
// input error. A file with errors of its own is also tried through the files that include it
// (findIncluders), and the parse with the fewest errors in the file is used.
FileAnalysis analyzeFile(const std::string& file, const AnalysisOptions& opts,
                         const std::vector<std::unique_ptr<Rule>>& rules,
                         const std::string& resourceDir, const std::string& cudaPath);

// The CUDA translation units of a compile_commands.json (.cu/.cuh files, `-x cuda`, or nvcc).
std::vector<std::string> compileDatabaseCudaFiles(const std::string& dir, std::string& error);

}  // namespace gpuopt
