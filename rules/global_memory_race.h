#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

class GlobalMemoryRaceRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{"global-memory-race", "global memory written by one thread and read or written by another thread of the same launch without ordering (data race), within a block or across blocks", Severity::Error, "global-memory-race", "possible"};
  const RuleInfo& info() const override { return kInfo; }
  void checkKernel(const KernelModel& model, RuleContext& rc) override;
  bool needsBlockSteps() const override { return true; }
};

}  // namespace gpuopt
