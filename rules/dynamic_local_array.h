#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

class DynamicLocalArrayRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{"dynamic-local-array", "a per-thread array written with an index known only at run time: the compiler places it in (off-chip) local memory instead of registers", Severity::Warning, "dynamic-local-array", "min-written-elements min-read-elements"};
  const RuleInfo& info() const override { return kInfo; }
  void checkKernel(const KernelModel& model, RuleContext& rc) override;
};

}  // namespace gpuopt
