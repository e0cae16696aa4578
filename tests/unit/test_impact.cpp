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

// The cost of a kernel within its program: a strided read in a kernel launched once with 1 block
// next to a kernel launched in a loop over the data is scaled by the kernel's share of the program's
// work (a note, saying why); with the loop's count known the launches are counted; the same
// kernel launched in the loop too is a full share.
TEST(Impact, AKernelsShareOfItsProgramScalesItsFindings) {
  std::string d = tempDir("impact-program");
  const std::string kernels =
      "__global__ void hot(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 2.0f; }\n"
      "__global__ void once(const float* a, float* o) { o[threadIdx.x] = a[threadIdx.x * 32]; }\n";  // line 2
  writeFile(d + "/once.cu", kernels +
                                "int main() {\n"
                                "  float *a, *o; int n = 1 << 24;\n"
                                "  for (int t = 0; t < 50; ++t) hot<<<n / 256, 256>>>(a, n);\n"  // line 5
                                "  once<<<1, 256>>>(a, o);\n"
                                "}\n");
  auto f = byLine(d, "--rules=uncoalesced-access once.cu");
  ASSERT_EQ(f.count(2), 1u);
  EXPECT_EQ(f[2]["severity"], "note") << f[2].dump(2);
  EXPECT_LT(f[2]["impact"].get<double>(), 0.01);
  std::string why = f[2]["impactText"].get<std::string>();
  EXPECT_NE(why.find("'once' is launched once with 1 block"), std::string::npos) << why;
  EXPECT_NE(why.find("'hot' is launched in the loop at line 5 (50 launches) with 65536 blocks"), std::string::npos) << why;

  // Launched in the same loop with as many blocks: comparable, no discount.
  writeFile(d + "/both.cu", kernels +
                                "int main() {\n"
                                "  float *a, *o; int n = 1 << 24;\n"
                                "  for (int t = 0; t < 50; ++t) { hot<<<n / 256, 256>>>(a, n); once<<<n / 256, 256>>>(a, o); }\n"
                                "}\n");
  auto g = byLine(d, "--rules=uncoalesced-access both.cu");
  ASSERT_EQ(g.count(2), 1u);
  EXPECT_EQ(g[2]["severity"], "warning") << g[2].dump(2);
  EXPECT_EQ(g[2]["impactText"].get<std::string>().find("program"), std::string::npos);

  // No main: the functions that launch run as often as another file says; nothing is weighed.
  writeFile(d + "/lib.cu", kernels +
                               "void runHot(float* a, int n) { for (int t = 0; t < 50; ++t) hot<<<n / 256, 256>>>(a, n); }\n"
                               "void runOnce(const float* a, float* o) { once<<<1, 256>>>(a, o); }\n");
  auto h = byLine(d, "--rules=uncoalesced-access lib.cu");
  ASSERT_EQ(h.count(2), 1u);
  EXPECT_EQ(h[2]["severity"], "warning") << h[2].dump(2);
}

// double-promotion's cost is what the double work adds to its function's estimated time: nothing
// in a function bound by its memory accesses (a note), most of it in a loop of arithmetic.
TEST(Impact, DoublePromotionIsWeighedAgainstItsFunctionsWork) {
  std::string d = tempDir("impact-double");
  writeFile(d + "/dp.cu",
            "__global__ void update(float* w, const float* g, const float* m, float* out, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i < n) out[i] = w[i] - 0.01 * g[i] + m[i];\n"  // line 3: memory-bound
            "}\n"
            "__global__ void iterate(float* x, int k) {\n"
            "  float v = x[threadIdx.x];\n"
            "  for (int j = 0; j < 256; ++j) v = v * 1.1 - 0.1;\n"  // line 7: the loop's work
            "  x[threadIdx.x] = v;\n"
            "}\n");
  auto f = byLine(d, "--rules=double-promotion dp.cu");
  ASSERT_EQ(f.count(3), 1u);
  ASSERT_EQ(f.count(7), 1u);
  EXPECT_EQ(f[3]["severity"], "note") << f[3].dump(2);
  EXPECT_NE(f[3]["impactText"].get<std::string>().find("stays bound by its memory accesses"), std::string::npos);
  EXPECT_EQ(f[7]["severity"], "warning") << f[7].dump(2);
  EXPECT_GT(f[7]["impact"].get<double>(), 0.5);
}

// A 2-way bank conflict is a note by default however hot; `warn-ways: 2` makes it a warning.
TEST(Impact, TwoWayBankConflictsAreNotesUnlessWarnWaysSaysTwo) {
  std::string d = tempDir("impact-2way");
  writeFile(d + "/k.cu",
            "__global__ void k(float* out) {\n"
            "  __shared__ float s[512];\n"
            "  s[threadIdx.x] = out[threadIdx.x];\n"
            "  __syncthreads();\n"
            "  out[threadIdx.x] = s[threadIdx.x * 2];\n"  // line 5: 2-way
            "}\n"
            "void go(float* o) { k<<<1, 256>>>(o); }\n");
  auto f = byLine(d, "--rules=bank-conflict k.cu");
  ASSERT_EQ(f.count(5), 1u);
  EXPECT_EQ(f[5]["severity"], "note") << f[5].dump(2);
  EXPECT_NE(f[5]["impactText"].get<std::string>().find("warn-ways"), std::string::npos);
  writeFile(d + "/.gpuopt-lint.yaml", "options: {bank-conflict: {warn-ways: 2}}\n");
  auto g = byLine(d, "--rules=bank-conflict k.cu");
  ASSERT_EQ(g.count(5), 1u);
  EXPECT_EQ(g[5]["severity"], "warning") << g[5].dump(2);
}

// A program's only kernel, launched once on 512 threads with no loop: less than one wave of the GPU,
// its findings are notes; the same kernel launched on a grid known only at run time is not.
TEST(Impact, AKernelSmallerThanOneWaveIsASmallShare) {
  std::string d = tempDir("impact-wave");
  const std::string kernel = "__global__ void tiny(const float* a, float* o) { o[threadIdx.x] = a[threadIdx.x * 32]; }\n";
  writeFile(d + "/tiny.cu", kernel + "int main() { float *a, *o; tiny<<<2, 256>>>(a, o); }\n");
  auto f = byLine(d, "--rules=uncoalesced-access tiny.cu");
  ASSERT_EQ(f.count(1), 1u);
  EXPECT_EQ(f[1]["severity"], "note") << f[1].dump(2);
  EXPECT_NE(f[1]["impactText"].get<std::string>().find("'tiny' runs 512 thread iterations in all (1 launch of 2 blocks)"),
            std::string::npos) << f[1].dump(2);
  writeFile(d + "/big.cu", kernel + "int main(int argc, char**) { float *a, *o; tiny<<<argc * 4096, 256>>>(a, o); }\n");
  auto g = byLine(d, "--rules=uncoalesced-access big.cu");
  ASSERT_EQ(g.count(1), 1u);
  EXPECT_EQ(g[1]["severity"], "warning") << g[1].dump(2);
}

// How often code runs (warp-ctc's reduce_cols, second stop check). The rows loop reads through
// functors (`cur = g(cur, f(in[...]))`, reference parameters): the load is an argument of the call
// in the loop, counted once for that loop, not once more for the call around it. The combining
// loop `i < wpb && i < cols` runs at most wpb - 1 = 3 times, a local set once from constants,
// whatever `cols` is, and only by the one warp of four with threadIdx.y == 0. Both bank conflicts
// are then weighed against the 16-trip unknown loop every warp runs: 1/16 and 3/16 x 1/4 of its
// warp-executions (they were 1/256 and 9/256 when the argument's load counted both loops).
TEST(Impact, ArgumentsOfACallInALoopAndConstantCappedLoops) {
  std::string d = tempDir("impact-functors");
  writeFile(d + "/cols.cu",
            "struct Ident { __device__ float operator()(const float& x) const { return x; } };\n"
            "struct Add { __device__ float operator()(const float& x, const float& y) const { return x + y; } };\n"
            "template <int NT, typename F, typename G>\n"
            "__global__ void reduceCols(F f, G g, const float* in, float* out, int rows, int cols) {\n"
            "  __shared__ float s[NT];\n"
            "  int wpb = NT / 32;\n"
            "  int row = blockIdx.x * 32 + threadIdx.x;\n"
            "  int col = threadIdx.y;\n"
            "  float cur = 0.f;\n"
            "  if (row < rows && col < cols) {\n"
            "    cur = f(in[row + col * rows]);\n"
            "    col += blockDim.y;\n"
            "    while (col < cols) {\n"
            "      cur = g(cur, f(in[row + col * rows]));\n"
            "      col += blockDim.y;\n"
            "    }\n"
            "  }\n"
            "  s[threadIdx.x * wpb + threadIdx.y] = cur;\n"  // line 18: once
            "  __syncthreads();\n"
            "  if (threadIdx.y == 0 && row < rows) {\n"
            "    for (int i = 1; i < wpb && i < cols; ++i) cur = g(cur, s[i + threadIdx.x * wpb]);\n"  // line 21
            "    out[row] = cur;\n"
            "  }\n"
            "}\n"
            "void go(const float* in, float* out, int rows, int cols) {\n"
            "  dim3 block(32, 128 / 32);\n"
            "  reduceCols<128><<<(rows + 31) / 32, block>>>(Ident(), Add(), in, out, rows, cols);\n"
            "}\n");
  auto f = byLine(d, "--rules=bank-conflict cols.cu");
  ASSERT_EQ(f.count(18), 1u);
  ASSERT_EQ(f.count(21), 1u);
  // 4-way: 75% of the wavefronts are replays, times the share of the hottest code's runs.
  EXPECT_DOUBLE_EQ(f[18]["impact"].get<double>(), 0.75 / 16) << f[18].dump(2);
  EXPECT_DOUBLE_EQ(f[21]["impact"].get<double>(), 0.75 * 3 / 64) << f[21].dump(2);
  EXPECT_EQ(f[21]["severity"], "note") << f[21].dump(2);
}
