// Helpers for tests that read gpuopt-lint's JSON output.
#pragma once
#include <nlohmann/json.hpp>

#include <vector>

namespace gpuopt::test {

// Every finding of every file, in output order.
inline std::vector<nlohmann::json> findings(const nlohmann::json& j) {
  std::vector<nlohmann::json> out;
  for (const auto& f : j["files"])
    for (const auto& x : f["findings"]) out.push_back(x);
  return out;
}

}  // namespace gpuopt::test
