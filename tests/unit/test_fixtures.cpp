// Annotated fixtures: every "// expect: rule-id" line must get exactly that finding; any other
// finding fails. Each fixture runs with the bundled CUDA header and, when present, the toolkit
// (a fixture marked `// fixture: toolkit only` with the toolkit alone).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "test_util.h"

using namespace gpuopt::test;
namespace fs = std::filesystem;

namespace {
std::vector<std::string> fixtures() {
  std::vector<std::string> v;
  for (auto& e : fs::directory_iterator(std::string(GPUOPT_SOURCE_DIR) + "/tests/fixtures"))
    if (e.path().extension() == ".cu") v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

using Findings = std::set<std::pair<int, std::string>>;

Findings expected(const std::string& path) {
  Findings f;
  for (const auto& [line, rule] : expectAnnotations(readFile(path))) f.emplace(line, rule);
  return f;
}

Findings actual(const std::string& json, std::map<std::pair<int, std::string>, std::set<std::string>>* severities = nullptr) {
  Findings f;
  auto j = nlohmann::json::parse(json);
  for (auto& x : j["files"][0]["findings"]) {
    f.emplace(x["location"]["line"].get<int>(), x["ruleId"].get<std::string>());
    if (severities)
      (*severities)[{x["location"]["line"].get<int>(), x["ruleId"].get<std::string>()}].insert(x["severity"].get<std::string>());
  }
  EXPECT_TRUE(j["files"][0]["errors"].empty()) << j["files"][0]["errors"].dump();
  return f;
}

std::string describe(const Findings& f) {
  std::string s;
  for (auto& [l, r] : f) s += "  line " + std::to_string(l) + ": " + r + "\n";
  return s.empty() ? "  (none)\n" : s;
}

class Fixture : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};
}  // namespace

TEST_P(Fixture, FindingsMatchAnnotations) {
  auto [name, toolkit] = GetParam();
  if (toolkit && !fs::exists("/usr/local/cuda/include/cuda_runtime.h")) GTEST_SKIP() << "no CUDA toolkit here";
  std::string path = std::string(GPUOPT_SOURCE_DIR) + "/tests/fixtures/" + name;
  // `// fixture: toolkit only`: the fixture includes a toolkit header (CCCL) the bundled header
  // set does not have, so it runs with the toolkit alone.
  if (!toolkit && readFile(path).find("// fixture: toolkit only") != std::string::npos)
    GTEST_SKIP() << name << " includes toolkit headers";
  auto r = runLint(std::string(toolkit ? "--cuda-path /usr/local/cuda" : "--no-cuda") + " --no-group --format json '" + path + "'");
  ASSERT_TRUE(r.rc == 0 || r.rc == 1) << r.out << r.err;
  std::map<std::pair<int, std::string>, std::set<std::string>> severities;
  Findings want = expected(path), got = actual(r.out, &severities);
  // `expect: rule(severity)`: every finding of that rule on that line has that severity.
  for (const auto& [line, rule, severity] : expectAnnotationsWithSeverity(readFile(path))) {
    if (severity.empty()) continue;
    auto it = severities.find({line, rule});
    if (it == severities.end()) continue;  // reported as missing below
    EXPECT_EQ(it->second, std::set<std::string>{severity}) << name << ": line " << line << " " << rule;
  }
  Findings missing, unexpected;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::inserter(missing, missing.end()));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::inserter(unexpected, unexpected.end()));
  EXPECT_TRUE(missing.empty()) << name << ": expected but not reported:\n" << describe(missing);
  EXPECT_TRUE(unexpected.empty()) << name << ": reported but not expected:\n" << describe(unexpected);
  EXPECT_EQ(r.rc, want.empty() ? 0 : 1);
  // Every access of every analysed kernel is reached (issue 26: "0 findings" means "checked"): a
  // kernel the model walks only in part is marked in the fixture with `partly analysed (toolkit)`
  // (with the toolkit only) or `partly analysed` and the reason.
  const std::string text = readFile(path);
  int marked = 0;
  for (size_t at = text.find("// partly analysed"); at != std::string::npos; at = text.find("// partly analysed", at + 1))
    marked += toolkit || text.compare(at, 28, "// partly analysed (toolkit)") != 0;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["files"][0]["partlyAnalysed"].get<int>(), marked) << name << ":\n" << r.out;
  // `coverage-text: words`: some kernel's note on what was not analysed gives that reason (the
  // library call named, not "no walked path reached them").
  for (size_t at = text.find("// coverage-text: "); at != std::string::npos; at = text.find("// coverage-text: ", at + 1)) {
    std::string want = text.substr(at + 18, text.find('\n', at) - at - 18);
    while (!want.empty() && std::isspace(static_cast<unsigned char>(want.back()))) want.pop_back();
    bool said = false;
    for (const auto& k : j["files"][0]["kernelCoverage"]) {
      if (k.contains("notAnalysed") && k["notAnalysed"].get<std::string>().find(want) != std::string::npos) said = true;
      if (k.contains("unanalysed"))
        for (const auto& u : k["unanalysed"])
          if (u["reason"].get<std::string>().find(want) != std::string::npos) said = true;
    }
    EXPECT_TRUE(said) << name << ": no kernel's coverage note says \"" << want << "\"";
  }
  // `expect-text: words`: a finding on that line says them (a figure or a name the message, or its
  // fix, must give, as a lit CHECK line would).
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    size_t at = line.find("expect-text: ");
    if (at == std::string::npos) continue;
    std::string want = line.substr(at + 13);
    while (!want.empty() && std::isspace(static_cast<unsigned char>(want.back()))) want.pop_back();
    bool said = false;
    for (const auto& x : j["files"][0]["findings"])
      if (x["location"]["line"].get<int>() == n &&
          (x["message"].get<std::string>().find(want) != std::string::npos ||
           (x.contains("fix") && x["fix"].is_string() && x["fix"].get<std::string>().find(want) != std::string::npos)))
        said = true;
    EXPECT_TRUE(said) << name << ": line " << n << ": no finding says \"" << want << "\"";
  }
}

INSTANTIATE_TEST_SUITE_P(All, Fixture, ::testing::Combine(::testing::ValuesIn(fixtures()), ::testing::Bool()),
                         [](const auto& info) {
                           std::string n = std::get<0>(info.param);
                           n = n.substr(0, n.find('.'));
                           return n + (std::get<1>(info.param) ? "_toolkit" : "_bundled");
                         });
