#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

class DivergentBranchRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{"divergent-branch", "branch whose outcome differs between lanes of one warp while its paths do real work (the paths run one after the other)", Severity::Warning, "divergent-branch"};
  const RuleInfo& info() const override { return kInfo; }
  void checkKernel(const KernelModel& model, RuleContext& rc) override;
};

}  // namespace gpuopt
