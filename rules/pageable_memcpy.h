#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

// Host-device copies from pageable memory inside loops; any cudaMemcpyAsync from pageable memory.
class PageableMemcpyRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{
      "pageable-memcpy",
      "cudaMemcpy between the device and pageable host memory inside a loop (or any cudaMemcpyAsync "
      "from pageable memory)",
      Severity::Warning, "pageable-memcpy", "max-trips max-bytes max-small-bytes"};
  const RuleInfo& info() const override { return kInfo; }
  void checkTranslationUnit(clang::ASTContext& ctx, RuleContext& rc) override;
};

}  // namespace gpuopt
