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
  // The option names `options: {<id>: {...}}` in .gpuopt-lint.yaml takes, space-separated (the
  // rule reads them with RuleContext::option); any other name is a configuration error.
  std::string_view options = {};
};

// Whether `info` declares the option `name`.
bool ruleHasOption(const RuleInfo& info, std::string_view name);

// Every rule's metadata, in registry order (rules/all_rules.h holds the one list).
const std::vector<RuleInfo>& allRuleInfos();
const RuleInfo* findRuleInfo(std::string_view id);

}  // namespace gpuopt
