// Rule metadata, usable without Clang (--list-rules and --explain work in a demo-only build).
#pragma once
#include <string_view>
#include <vector>

#include "analyzer/report/diagnostic.h"

namespace gpuopt {

struct RuleInfo {
  std::string_view id;       // fixed kebab-case id: output, SARIF ruleId, NOLINT, docs, demo
  std::string_view summary;  // one line
  Severity severity;
  std::string_view demo;     // demo name for `gpuopt-lint --demo`
};

// Every rule's metadata, in registry order (rules/all_rules.h holds the one list).
const std::vector<RuleInfo>& allRuleInfos();
const RuleInfo* findRuleInfo(std::string_view id);

}  // namespace gpuopt
