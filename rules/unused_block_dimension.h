#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

class UnusedBlockDimensionRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{"unused-block-dimension", "a launch gives blockDim.y or blockDim.z above 1 to a kernel that never reads threadIdx.y or .z: the rows of every block repeat the same work", Severity::Warning, "unused-block-dimension"};
  const RuleInfo& info() const override { return kInfo; }
  void checkKernel(const KernelModel& model, RuleContext& rc) override;
};

}  // namespace gpuopt
