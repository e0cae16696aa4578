#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

// Not a check of its own: the compiler's errors, reported by the engine as findings (clang-tidy's
// clang-diagnostic-error). Listed here so that it has an id, a doc, a severity and takes part in
// --rules/--disable, configuration, NOLINT and every output format like any rule.
class CompileErrorRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{"compile-error", "code Clang could not compile; kernels that contain or call it are not analysed", Severity::Error, ""};
  const RuleInfo& info() const override { return kInfo; }
};

}  // namespace gpuopt
