#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

// Many small host<->device copies in a loop, or copies of adjacent ranges one iteration at a time.
class UnbatchedMemcpyRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{
      "unbatched-memcpy",
      "small host<->device copies issued one per loop iteration, or consecutive iterations copying adjacent "
      "ranges that one copy could move",
      Severity::Warning, "unbatched-memcpy", "small-bytes"};
  // Below this many bytes a copy costs mostly its fixed latency (lecture 003: "If the data < 80KB,
  // the latency dominates the performance"); option `small-bytes`.
  static constexpr int64_t kSmallBytes = 80 * 1024;
  const RuleInfo& info() const override { return kInfo; }
  void checkTranslationUnit(clang::ASTContext& ctx, RuleContext& rc) override;
};

}  // namespace gpuopt
