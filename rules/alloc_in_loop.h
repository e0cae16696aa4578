#pragma once
#include "analyzer/rule/rule.h"

namespace gpuopt {

// cudaMalloc/cudaFree (and the pinned, managed, pitched and registered forms) allocated and freed
// again in every iteration of a loop.
class AllocInLoopRule final : public Rule {
 public:
  static constexpr RuleInfo kInfo{
      "alloc-in-loop",
      "cudaMalloc/cudaFree, cudaMallocHost/cudaFreeHost or cudaMallocManaged of the same buffer in every loop "
      "iteration",
      Severity::Warning, "alloc-in-loop"};
  const RuleInfo& info() const override { return kInfo; }
  void checkTranslationUnit(clang::ASTContext& ctx, RuleContext& rc) override;
};

}  // namespace gpuopt
