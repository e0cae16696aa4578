// NOLINT handling with clang-tidy's syntax, applied as a filter on output:
//   // NOLINT                      this line, every rule
//   // NOLINT(bank-conflict, un*)  this line, listed rules (globs)
//   // NOLINTNEXTLINE(...)         the next line
//   // NOLINTBEGIN(...) ... // NOLINTEND(...)   a region
// An unpaired NOLINTBEGIN / NOLINTEND is itself reported (rule id `nolint-unpaired`), and so is a
// name that is neither a gpuopt-lint rule nor one of clang-tidy's checks nor a cpplint category
// (`runtime/arrays`) (`nolint-unknown-rule`,
// with the nearest rule id): a warning, not an error, because the comment suppresses nothing and
// hides nothing, and the same comments may name checks of other tools.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "analyzer/report/diagnostic.h"

namespace gpuopt {

bool globMatch(std::string_view pattern, std::string_view text);
// The warning for a NOLINT name that matches no gpuopt-lint rule and is not a clang-tidy check, or
// nullopt.
std::optional<std::string> unknownNolintRule(std::string_view glob);

class Suppressions {
 public:
  Suppressions(std::string file, const std::vector<std::string>& lines);
  bool suppresses(const Diagnostic& d) const;
  // Problems in the NOLINT comments themselves.
  const std::vector<Diagnostic>& problems() const { return problems_; }

 private:
  struct Entry {
    unsigned firstLine, lastLine;  // inclusive
    std::vector<std::string> globs;  // empty = all rules
  };
  std::vector<Entry> entries_;
  std::vector<Diagnostic> problems_;
};

// Removes suppressed diagnostics and appends NOLINT problems, using the file's text.
void applySuppressions(const std::string& file, const std::vector<std::string>& lines,
                       std::vector<Diagnostic>& diags);

}  // namespace gpuopt
