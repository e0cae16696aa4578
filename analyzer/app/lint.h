// One input from file to reportable findings: the analysis (analyzeFile), then NOLINT comments,
// per-rule severities, grouping of repeats and fingerprints. The command line and the language
// server both lint through here, so an editor shows what `gpuopt-lint FILE` prints.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/app/config.h"
#include "analyzer/engine/engine.h"
#include "analyzer/report/source_cache.h"

namespace gpuopt {

struct LintEnvironment {
  std::vector<std::unique_ptr<Rule>> rules;
  std::string resourceDir, cudaPath;
};

// `sources` must hold the text the analysis saw (setText for unsaved buffers): NOLINT comments and
// fingerprints are read from it.
FileAnalysis lintFile(const std::string& file, const ResolvedOptions& opts, const LintEnvironment& env,
                      bool group, SourceCache& sources);

// What lintFile does after the analysis (Clang-free, analyzer/app/lint_core.cpp): NOLINT comments,
// per-rule severities, grouping of repeats, fingerprints.
void finishLint(const std::string& file, const ResolvedOptions& opts, bool group, SourceCache& sources,
                FileAnalysis& fa);

// The launcher's lint of one file (no Clang loaded): the stored result of an unchanged file
// (analyzeFile's own lookup: same key, same dependencies), finished as lintFile finishes it.
// nullopt when the file has to be analysed. `toolId`: toolIdentityOf the analyzer that would run.
std::optional<FileAnalysis> lintFromCache(const std::string& file, const ResolvedOptions& opts,
                                          const std::string& resourceDir, const std::string& cudaPath,
                                          const std::string& toolId, bool group, SourceCache& sources);

}  // namespace gpuopt
