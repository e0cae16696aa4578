#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

class UncoalescedAccessRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{"uncoalesced-access", "global memory access whose warp touches many more 32-byte sectors than it uses (strided, misaligned structure, or data-dependent indexing)", Severity::Warning, "uncoalesced-access", "max-efficiency min-lanes data-dependent"};
  const RuleInfo& info() const override { return kInfo; }
  void checkKernel(const KernelModel& model, RuleContext& rc) override;
};

}  // namespace gpuopt
