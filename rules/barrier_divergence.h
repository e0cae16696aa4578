#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

class BarrierDivergenceRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{"barrier-divergence", "__syncthreads() (or a block-wide sync) reached by only some threads of the block (deadlock or undefined behaviour)", Severity::Error, "barrier-divergence"};
  const RuleInfo& info() const override { return kInfo; }
  void checkKernel(const KernelModel& model, RuleContext& rc) override;
};

}  // namespace gpuopt
