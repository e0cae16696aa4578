#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

class BankConflictRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{"bank-conflict", "shared-memory access where lanes of a warp hit the same bank at different addresses (n-way conflict, serialised)", Severity::Warning, "bank-conflict", "min-ways warn-ways"};
  const RuleInfo& info() const override { return kInfo; }
  void checkKernel(const KernelModel& model, RuleContext& rc) override;
};

}  // namespace gpuopt
