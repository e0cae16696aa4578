// Reporting only new findings, for pull requests and legacy code:
// - a baseline (`--write-baseline FILE`, `--baseline FILE`): the findings of a run, each keyed by
//   its file, rule and fingerprint (the SARIF partialFingerprints: rule, kernel and normalised
//   source text, so a finding whose lines moved keeps its key); each baseline entry hides one
//   finding with the same key;
// - changed lines (`--diff REV`, or `--diff -` with a unified diff on stdin as clang-tidy-diff
//   reads it): only findings on lines the diff adds or changes (or with a related place there).
// Paths are compared as absolute, normalised paths. Clang-free (the launcher applies them too).
#pragma once
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analyzer/report/output.h"

namespace gpuopt {

class Baseline {
 public:
  // Reads FILE; false with `error` ("FILE: ...") when it is missing or not a baseline.
  bool load(const std::string& path, std::string& error);
  // Removes from `results` the findings the baseline lists; returns how many it removed.
  size_t apply(std::vector<FileResult>& results);
  // Entries that matched no finding in the last apply (fixed since the baseline was written).
  size_t unmatched() const { return unmatched_; }

 private:
  std::map<std::tuple<std::string, std::string, std::string>, size_t> entries_;  // (path, rule, fingerprint)
  size_t unmatched_ = 0;
};

// Writes every finding of `results` to `path` (JSON; paths relative to the file's folder). Returns
// false with `error` when it cannot be written; `written` gets the count.
bool writeBaseline(const std::string& path, const std::vector<FileResult>& results, size_t& written, std::string& error);

// Lines a diff adds or changes, per file (absolute, normalised path): inclusive ranges.
class ChangedLines {
 public:
  // A unified diff (git diff, diff -u; any context). Paths are resolved against `root` (the
  // repository root, for git's "b/" paths) or else `cwd`. False with `error` when no file header
  // is found in a non-empty text.
  bool parse(const std::string& diff, const std::string& root, const std::string& cwd, std::string& error);
  // Runs `git diff -U0 REV` in `cwd`'s repository; files git does not track are new throughout.
  // `files`: restricts the diff; when empty, it is filled with the .cu/.cuh files changed since REV
  // (and the untracked ones). False with `error` (git's own message) on a bad revision or no repository.
  bool fromGit(const std::string& rev, const std::string& cwd, std::vector<std::string>& files, std::string& error);
  // Keeps only findings with their place, or one of their related places, on a changed line;
  // returns how many it removed.
  size_t apply(std::vector<FileResult>& results) const;
  bool changed(const std::string& file, unsigned line) const;
  // The files with a changed line (absolute paths).
  std::vector<std::string> files() const;

 private:
  std::map<std::string, std::vector<std::pair<unsigned, unsigned>>> ranges_;
  std::map<std::string, bool> whole_;  // new files: every line
};

}  // namespace gpuopt
