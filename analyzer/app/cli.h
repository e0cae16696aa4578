// Command-line parsing (no Clang needed).
#pragma once
#include <optional>
#include <array>
#include <map>
#include <string>
#include <vector>

#include "analyzer/engine/engine.h"
#include "analyzer/report/output.h"

namespace gpuopt {

struct CliOptions {
  std::vector<std::string> files;
  FrontendOptions frontend;
  OutputFormat format = OutputFormat::Text;
  std::string color = "auto";
  std::vector<std::string> rules;    // --rules (ids or globs)
  std::vector<std::string> disable;  // --disable
  std::vector<std::string> checks;   // --checks: appended to the configuration's rules list
  bool rulesGiven = false;
  unsigned blockDim[3] = {0, 0, 0};  // --block-dim X,Y,Z (0 = not given)
  std::map<std::string, std::array<unsigned, 3>> kernelBlockDims;  // --block-dim NAME=X,Y,Z
  std::string configFile;            // --config
  bool noConfig = false;
  bool dumpConfig = false;
  bool listRules = false, help = false, version = false, quiet = false;
  std::string explain;
  std::string demo;
  bool demoJson = false;
  bool fix = false, dryRun = false;
  bool noGroup = false;  // --no-group: one finding per place, repeats not folded
  unsigned jobs = 0;  // 0 = number of cores
  bool gpuArchGiven = false;
  std::string failOn;  // --fail-on
  // Conventions of other linters (clang-tidy, ruff).
  std::string exportFixes;                 // --export-fixes FILE: clang-apply-replacements YAML
  std::optional<std::string> headerFilter; // --header-filter REGEX (see AnalysisOptions)
  bool statistics = false;                 // --statistics: count per rule instead of the findings
  bool sortImpact = false;                 // --sort impact: highest static cost first, across files
  int maxInstantiations = -1;              // --max-instantiations N (-1: not given)
  double minImpact = -1;                   // --min-impact X: findings below X are not reported
  bool exitZero = false;                   // --exit-zero: findings do not fail the run
  std::string shard;                       // --shard I/N (analyzer/app/shard.h), checked when parsed
  bool showFixes = false;                  // --show-fixes: list the mechanical fixes
  bool lsp = false;                        // `gpuopt-lint lsp` / --lsp: language server on stdio
  // Only new findings (analyzer/report/new_findings.h).
  std::string baseline;       // --baseline FILE
  std::string writeBaseline;  // --write-baseline FILE
  std::optional<std::string> diff;  // --diff REV ("-": a unified diff on stdin)
  std::string cacheDir;  // --cache-dir (default: defaultCacheDir(), XDG)
  bool noCache = false;  // --no-cache: neither the precompiled preamble nor the result cache
};

bool parseCommandLine(int argc, char** argv, CliOptions& o, std::string& error);
bool parseCommandLine(const std::vector<std::string>& args, CliOptions& o, std::string& error);
std::string usageText();

}  // namespace gpuopt
