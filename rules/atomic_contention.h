#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

class AtomicContentionRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{"atomic-contention", "many lanes of a warp, or every warp of the block and grid, atomically updating the same global address", Severity::Warning, "atomic-contention", "min-lanes"};
  const RuleInfo& info() const override { return kInfo; }
  void checkKernel(const KernelModel& model, RuleContext& rc) override;
};

}  // namespace gpuopt
