#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

class UnsafeWarpReduceRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{"unsafe-warp-reduce", "warp-synchronous code (lanes of one warp exchanging values through shared or global memory) without __syncwarp(), unsafe since Volta's independent thread scheduling", Severity::Error, "unsafe-warp-reduce"};
  const RuleInfo& info() const override { return kInfo; }
  void checkKernel(const KernelModel& model, RuleContext& rc) override;
};

}  // namespace gpuopt
