#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

class DoublePromotionRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{"double-promotion", "float arithmetic in device code silently done in double because of a double literal (1.1 instead of 1.1f)", Severity::Warning, "double-promotion"};
  const RuleInfo& info() const override { return kInfo; }
  void checkTranslationUnit(clang::ASTContext& ctx, RuleContext& rc) override;
};

}  // namespace gpuopt
