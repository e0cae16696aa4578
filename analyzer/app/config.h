// .gpuopt-lint.yaml: found upward from each file; the nearest one is the whole configuration
// unless it says `extend: PATH` (ruff's `extend`): then PATH is read first and this file's keys
// apply on top of it (lists such as rules, exclude and compiler-args are appended, maps such as
// severity, options and per-file-ignores merged key by key, single values replaced). The command
// line wins over both.
//
//   extend: ../.gpuopt-lint.yaml          # inherit another configuration (relative to this file)
//   rules: ["*", "-divergent-branch"]     # enabled rules, globs; "-" disables
//   severity: {bank-conflict: error}      # per-rule severity
//   fail-on: warning                      # lowest severity that makes the exit status 1
//   block-dim: [16, 16]                   # block shape where no launch in the code gives one
//   block-dim: {softmax: [32, 8], "*": [256]}  # per kernel ("*": every other kernel)
//   max-instantiations: 4                 # instantiations of one kernel template analysed per file (0: all)
//   gpu-arch: sm_90
//   compiler-args: ["-DTILE=32"]
//   exclude: ["third_party/*"]            # globs on paths relative to the config's folder
//   header-filter: "/include/mylib/"      # which included files are linted (as --header-filter)
//   options: {bank-conflict: {min-ways: 4}, uncoalesced-access: {max-efficiency: 0.25}}
//   per-file-ignores: {"tests/*": [divergent-branch]}  # rules not reported in matching files
#pragma once
#include <map>
#include <string>
#include <vector>

#include "analyzer/app/cli.h"

namespace gpuopt {

struct ResolvedOptions {
  AnalysisOptions analysis;
  std::map<std::string, Severity> severities;
  Severity failOn = Severity::Note;  // every finding fails by default
  bool excluded = false;
  std::string configPath;            // the file used, or empty
  std::vector<std::string> extended; // the files it extends, nearest first (extend:)
  std::vector<std::string> enabledPatterns;  // for --dump-config
  // per-file-ignores: (absolute path glob, rule globs), applied to each finding's file.
  std::vector<std::pair<std::string, std::vector<std::string>>> perFileIgnores;
  std::vector<std::string> log;      // for --verbose: how the configuration was found
};

// Whether per-file-ignores drop a finding of `rule` in `file`.
bool ignoredInFile(const ResolvedOptions& r, const std::string& file, const std::string& rule);

// Loads a config file into `out` (merging). Returns false with "file:line: message".
bool loadConfigFile(const std::string& path, ResolvedOptions& out, std::string& error);
// Nearest .gpuopt-lint.yaml above `file`, or empty.
std::string findConfigFile(const std::string& file);
// Effective options for one input: defaults <- config file <- command line.
bool resolveOptions(const CliOptions& cli, const std::string& file, ResolvedOptions& out, std::string& error);
std::string dumpConfig(const ResolvedOptions& r);
void applySeverities(const ResolvedOptions& r, std::vector<Diagnostic>& diags);
bool meetsFailThreshold(const ResolvedOptions& r, const Diagnostic& d);

}  // namespace gpuopt
