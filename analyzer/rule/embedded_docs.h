#pragma once
#include <string_view>
#include <vector>

namespace gpuopt {
struct EmbeddedDoc {
  std::string_view id;
  std::string_view markdown;
};
// docs/rules/<id>.md, embedded at build time (cmake/embed_docs.cmake).
const std::vector<EmbeddedDoc>& embeddedRuleDocs();
const EmbeddedDoc* findRuleDoc(std::string_view id);
}  // namespace gpuopt
