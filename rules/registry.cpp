// registerAllRules(): one instance of every rule (Clang build).
#include <memory>

#include "analyzer/engine/engine.h"
#include "rules/all_rules.h"

namespace gpuopt {

std::vector<std::unique_ptr<Rule>> registerAllRules() {
  std::vector<std::unique_ptr<Rule>> rules;
  forEachRuleType([&](auto tag) { rules.push_back(std::make_unique<typename decltype(tag)::type>()); });
  return rules;
}

}  // namespace gpuopt
