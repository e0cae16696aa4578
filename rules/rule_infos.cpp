// Rule metadata (no Clang needed: used by --list-rules/--explain in every build).
#include "analyzer/rule/rule_info.h"
#include "analyzer/rule/embedded_docs.h"
#include "rules/all_rules.h"

namespace gpuopt {

const std::vector<RuleInfo>& allRuleInfos() {
  static const std::vector<RuleInfo> infos = [] {
    std::vector<RuleInfo> v;
    forEachRuleType([&](auto tag) { v.push_back(decltype(tag)::type::kInfo); });
    return v;
  }();
  return infos;
}

const RuleInfo* findRuleInfo(std::string_view id) {
  for (const auto& r : allRuleInfos())
    if (r.id == id) return &r;
  return nullptr;
}

bool ruleHasOption(const RuleInfo& info, std::string_view name) {
  std::string_view rest = info.options;
  while (!rest.empty()) {
    size_t sp = rest.find(' ');
    if (rest.substr(0, sp) == name) return true;
    if (sp == std::string_view::npos) break;
    rest.remove_prefix(sp + 1);
  }
  return false;
}

const EmbeddedDoc* findRuleDoc(std::string_view id) {
  for (const auto& d : embeddedRuleDocs())
    if (d.id == id) return &d;
  return nullptr;
}

}  // namespace gpuopt
