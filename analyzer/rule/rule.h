// The rule interface (Clang build). A rule is a small class: metadata (kInfo) plus check logic.
// Host-side rules look at the whole translation unit with AST matchers; kernel rules read the
// kernel model (what every thread of the assumed block computes, see kernel_model.h).
#pragma once
#include "analyzer/rule/rule_info.h"

namespace clang {
class ASTContext;
}

namespace gpuopt {

class KernelModel;
class RuleContext;

class Rule {
 public:
  virtual ~Rule() = default;
  virtual const RuleInfo& info() const = 0;
  virtual void checkTranslationUnit(clang::ASTContext& ctx, RuleContext& rc);
  virtual void checkKernel(const KernelModel& model, RuleContext& rc);
  // Whether the rule asks the model how addresses move between blocks (KernelModel::crossBlockRaces,
  // Access::stepX/Y): carrying them costs the model a pass per blockIdx-dependent value.
  virtual bool needsBlockSteps() const { return false; }
};

}  // namespace gpuopt
