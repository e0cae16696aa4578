#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

// A loop that copies in, launches and copies out with nothing able to overlap: blocking copies,
// the default stream, or one stream synchronised every iteration.
class SerializedTransfersRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{
      "serialized-transfers",
      "a loop that copies to the device, launches kernels and copies back on the default stream or one "
      "synchronised stream, so transfers never overlap compute",
      Severity::Warning, "serialized-transfers", "small-bytes"};
  const RuleInfo& info() const override { return kInfo; }
  void checkTranslationUnit(clang::ASTContext& ctx, RuleContext& rc) override;
};

}  // namespace gpuopt
