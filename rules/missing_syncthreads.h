#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

class MissingSyncthreadsRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{"missing-syncthreads", "shared memory written by one thread and read or written by another in the same barrier interval (data race)", Severity::Error, "missing-syncthreads"};
  const RuleInfo& info() const override { return kInfo; }
  void checkKernel(const KernelModel& model, RuleContext& rc) override;
};

}  // namespace gpuopt
