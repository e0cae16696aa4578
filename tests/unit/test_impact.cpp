// Issue 28: every finding carries a static cost (`impact`); below a rule's min-impact it is a note;
// --sort impact orders by it, --min-impact filters by it. Reported and quiet twins: the same
// pattern in hot code (a warning) and in setup, verification or one-off code (a note).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>

#include "test_json.h"
#include "test_util.h"

using namespace gpuopt::test;
using nlohmann::json;

namespace {

std::map<int, json> byLine(const std::string& dir, const std::string& args) {
  auto r = runLint("--no-cuda --no-cache --no-group --format json " + args, dir);
  EXPECT_TRUE(r.rc == 0 || r.rc == 1) << r.out << r.err;
  std::map<int, json> out;
  for (const auto& x : findings(json::parse(r.out.empty() ? "{}" : r.out))) out[x["location"]["line"]] = x;
  return out;
}

// A pageable copy in a loop that launches a kernel, and the same copy in a loop that only checks results.
const char* kCopies =
    "#include <cstdlib>\n"
    "__global__ void step(float* d) { d[threadIdx.x] += 1.0f; }\n"
    "void run(float* d, int steps, size_t n) {\n"
    "  float* h = (float*)malloc(n * sizeof(float));\n"
    "  for (int t = 0; t < steps; ++t) {\n"
    "    cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);\n"  // line 6: hot
    "    step<<<1, 256>>>(d);\n"
    "  }\n"
    "  for (int r = 0; r < 2; ++r) {\n"
    "    cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);\n"  // line 10: verification
    "    if (h[0] != 1.0f) abort();\n"
    "  }\n"
    "}\n";

// A strided load in a 64-iteration loop (most of the traffic) and a one-off strided store.
const char* kKernel =
    "__global__ void k(const float* a, float* out) {\n"
    "  float acc = 0;\n"
    "  for (int j = 0; j < 64; ++j) acc += a[(j * 256 + threadIdx.x) * 32];\n"  // line 3: hot
    "  out[threadIdx.x * 32] = acc;\n"                                   // line 4: once
    "}\n"
    "void go(const float* a, float* o) { k<<<1, 256>>>(a, o); }\n";
}  // namespace

TEST(Impact, SetupAndVerificationCopiesAreNotesHotCopiesWarnings) {
  std::string d = tempDir("impact-host");
  writeFile(d + "/copies.cu", kCopies);
  auto f = byLine(d, "--rules=pageable-memcpy copies.cu");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[6]["severity"], "warning") << f[6].dump(2);
  EXPECT_DOUBLE_EQ(f[6]["impact"].get<double>(), 1.0);
  EXPECT_EQ(f[10]["severity"], "note") << f[10].dump(2);
  EXPECT_LT(f[10]["impact"].get<double>(), 0.05);
  EXPECT_NE(f[10]["impactText"].get<std::string>().find("setup or verification"), std::string::npos);
  // Per rule, the threshold is configurable: min-impact 0 keeps every finding a warning.
  writeFile(d + "/.gpuopt-lint.yaml", "options:\n  pageable-memcpy:\n    min-impact: 0\n");
  auto g = byLine(d, "--rules=pageable-memcpy copies.cu");
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[10]["severity"], "warning") << g[10].dump(2);
}

TEST(Impact, AKernelAccessIsJudgedByItsShareOfTheKernelsTraffic) {
  std::string d = tempDir("impact-kernel");
  writeFile(d + "/k.cu", kKernel);
  auto f = byLine(d, "--rules=uncoalesced-access k.cu");
  ASSERT_EQ(f.size(), 2u) << json(f).dump(2);
  EXPECT_GT(f[3]["impact"].get<double>(), 0.9) << f[3].dump(2);
  EXPECT_EQ(f[3]["severity"], "warning");
  EXPECT_NE(f[3]["impactText"].get<std::string>().find("of 'k''s global traffic"), std::string::npos) << f[3].dump(2);
  EXPECT_LT(f[4]["impact"].get<double>(), 0.05) << f[4].dump(2);
  EXPECT_EQ(f[4]["severity"], "note") << f[4].dump(2);
  // The text names the estimate; SARIF carries it as a property.
  auto t = runLint("--no-cuda --no-cache --no-group --rules=uncoalesced-access k.cu", d);
  EXPECT_NE(t.out.find("of 'k''s global traffic] [uncoalesced-access]"), std::string::npos) << t.out;
  auto s = json::parse(runLint("--no-cuda --no-cache --no-group --rules=uncoalesced-access --format sarif k.cu", d).out);
  ASSERT_EQ(s["runs"][0]["results"].size(), 2u);
  for (const auto& res : s["runs"][0]["results"]) EXPECT_TRUE(res["properties"].contains("impact")) << res.dump(2);
}

TEST(Impact, SortAndMinImpact) {
  std::string d = tempDir("impact-sort");
  writeFile(d + "/a.cu", kCopies);  // a.cu first on the command line: its note and its warning
  writeFile(d + "/b.cu", kKernel);
  // --sort impact: one list across files, the costliest first; the notes last.
  auto r = runLint("--no-cuda --no-cache --no-group --rules=pageable-memcpy,uncoalesced-access --sort impact a.cu b.cu", d);
  ASSERT_EQ(r.rc, 1) << r.err;
  size_t hotCopy = r.out.find("a.cu:6:"), hotLoad = r.out.find("b.cu:3:"), once = r.out.find("b.cu:4:"),
         verify = r.out.find("a.cu:10:");
  ASSERT_TRUE(hotCopy != std::string::npos && hotLoad != std::string::npos && once != std::string::npos &&
              verify != std::string::npos)
      << r.out;
  EXPECT_LT(hotCopy, once) << r.out;
  EXPECT_LT(hotLoad, once) << r.out;
  EXPECT_LT(hotCopy, verify) << r.out;
  EXPECT_LT(hotLoad, verify) << r.out;
  // Without it: by file and line.
  auto p = runLint("--no-cuda --no-cache --no-group --rules=pageable-memcpy,uncoalesced-access a.cu b.cu", d);
  EXPECT_LT(p.out.find("a.cu:10:"), p.out.find("b.cu:3:")) << p.out;
  // --min-impact leaves out the findings below it.
  auto m = byLine(d, "--rules=pageable-memcpy,uncoalesced-access --min-impact 0.5 a.cu b.cu");
  std::vector<int> lines;
  for (const auto& [l, x] : m) lines.push_back(l);
  EXPECT_EQ(lines, (std::vector<int>{3, 6})) << json(m).dump(2);
  // Bad values are input errors naming the option.
  auto bad = runLint("--no-cuda --no-cache --min-impact 2 a.cu", d);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--min-impact"), std::string::npos) << bad.err;
  auto badSort = runLint("--no-cuda --no-cache --sort size a.cu", d);
  EXPECT_EQ(badSort.rc, 2);
  EXPECT_NE(badSort.err.find("--sort"), std::string::npos) << badSort.err;
}
