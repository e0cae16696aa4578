#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

class PartialWarpBlockRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{"partial-warp-block", "a launch or __launch_bounds__ whose block is not a multiple of the 32-thread warp: the last warp runs with idle lanes", Severity::Warning, "partial-warp-block"};
  const RuleInfo& info() const override { return kInfo; }
  void checkKernel(const KernelModel& model, RuleContext& rc) override;
};

}  // namespace gpuopt
