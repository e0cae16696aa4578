// Issue 28: one finding per place (a header line once per run however many units and
// instantiations reach it, one finding per expression), messages of a sane length with the full
// lists in JSON, the measured tag once per run and fitting the cause found.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <tuple>

#include "test_json.h"
#include "test_util.h"

using namespace gpuopt::test;
using nlohmann::json;

namespace {

json lintJson(const std::string& dir, const std::string& args) {
  auto r = runLint("--no-cuda --no-cache --format json " + args, dir);
  EXPECT_TRUE(r.rc == 0 || r.rc == 1) << r.out << r.err;
  return json::parse(r.out.empty() ? "{}" : r.out);
}

size_t countSubstr(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
// The findings of `args` in `dir` by line, and whether a finding's field holds a text.
std::map<int, json> findingsByLine(const std::string& dir, const std::string& args) {
  std::map<int, json> out;
  for (const auto& x : findings(lintJson(dir, args))) out[x["location"]["line"]] = x;
  return out;
}
bool says(const json& finding, const char* field, const std::string& text) {
  return finding.contains(field) && finding[field].get<std::string>().find(text) != std::string::npos;
}
}  // namespace

TEST(Places, ReadModifyWriteIsOneFindingNotALoadAndAStore) {
  std::string d = tempDir("rmw");
  writeFile(d + "/k.cu",
            "__global__ void bad(float* a) { a[threadIdx.x * 32] += 1.0f; }\n"
            "__global__ void good(float* a) { a[threadIdx.x] += 1.0f; }\n");
  auto all = findings(lintJson(d, "--no-group k.cu"));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0]["ruleId"], "uncoalesced-access");
  EXPECT_EQ(all[0]["location"]["line"], 1);
  EXPECT_NE(all[0]["message"].get<std::string>().find("load/store"), std::string::npos) << all[0].dump(2);
}

TEST(Places, InstantiationsAtOnePlaceAreOneFindingListedCompactly) {
  std::string d = tempDir("inst");
  writeFile(d + "/k.cu",
            "template <typename T> __global__ void k(T* a) { a[threadIdx.x * (sizeof(T) == 2 ? 1 : 64)] = T(); }\n"
            "void run(float* f, int* i, unsigned* u, wchar_t* w, char32_t* c, short* s, double* x) {\n"
            "  k<<<1, 256>>>(f); k<<<1, 256>>>(i); k<<<1, 256>>>(u); k<<<1, 256>>>(w); k<<<1, 256>>>(c);\n"
            "  k<<<1, 256>>>(s); k<<<1, 256>>>(x);\n}\n");
  // Every instantiation analysed (the default cap of 4 would leave 3 of the 7 to a note).
  auto all = findings(lintJson(d, "--no-group --max-instantiations 0 k.cu"));
  ASSERT_EQ(all.size(), 1u) << json(all).dump(2);
  std::string msg = all[0]["message"];
  EXPECT_NE(msg.find("; in instantiations 'k<char32_t>', 'k<float>', 'k<int>' and 2 more"), std::string::npos) << msg;
  EXPECT_NE(msg.find("other figures in 'k<double>' ("), std::string::npos) << msg;
  ASSERT_TRUE(all[0].contains("instantiations")) << all[0].dump(2);
  EXPECT_EQ(all[0]["instantiations"].size(), 5u) << all[0].dump(2);
}

// The golden volume test: a generated project of units sharing headers. Every unit includes both
// headers and instantiates the header's template kernel with its own type; each place is one
// finding, however many units reach it.
TEST(Places, GeneratedMultiUnitProjectGivesOneFindingPerPlace) {
  std::string d = tempDir("volume");
  writeFile(d + "/shared.cuh",
            "#pragma once\n"
            "template <typename T> __global__ void column(T* a, int n) {\n"
            "  a[threadIdx.x * 64] = T(n);\n"
            "}\n"
            "__global__ void tile(float* out) {\n"
            "  __shared__ float s[32][32];\n"
            "  s[threadIdx.x][0] = out[threadIdx.x];\n"
            "  __syncthreads();\n"
            "  out[threadIdx.x] = s[threadIdx.x][0];\n"
            "}\n");
  writeFile(d + "/util.cuh",
            "#pragma once\n"
            "__device__ inline void put(float* a, int i) { a[i * 32] = 1.0f; }\n");
  const char* types[] = {"float", "int", "unsigned", "long", "short", "char"};
  std::string files;
  const int units = 6;
  for (int u = 0; u < units; ++u) {
    std::string name = "u" + std::to_string(u) + ".cu";
    files += " " + name;
    writeFile(d + "/" + name, std::string("#include \"shared.cuh\"\n#include \"util.cuh\"\n") +
                                  "__global__ void own" + std::to_string(u) + "(float* a) { put(a, threadIdx.x); }\n" +
                                  "void run(" + types[u] + "* p, float* f) {\n  column<<<1, 256>>>(p, 4);\n  tile<<<1, 32>>>(f);\n  own" +
                                  std::to_string(u) + "<<<1, 256>>>(f);\n}\n");
  }
  auto j = lintJson(d, files);
  auto all = findings(j);
  std::set<std::tuple<std::string, int, std::string>> places;
  for (const auto& x : all) places.emplace(x["location"]["file"], x["location"]["line"], x["ruleId"]);
  EXPECT_EQ(all.size(), places.size()) << j.dump(2);
  // column's store, tile's conflicting shared accesses (lines 7 and 9), put's store (one place in
  // util.cuh, reached from every unit): four places.
  EXPECT_EQ(places.size(), 4u) << j.dump(2);
  for (const auto& x : all) {
    std::string msg = x["message"];
    EXPECT_NE(msg.find("reached from 6 translation units ('u0.cu', 'u1.cu', 'u2.cu' and 3 more)"), std::string::npos) << msg;
    EXPECT_EQ(x["units"].size(), 6u) << x.dump(2);
    EXPECT_LE(msg.size(), 600u);
  }
  // The helper's finding names the kernel's call that reached it.
  bool note = false;
  for (const auto& x : all)
    for (const auto& n : x["notes"]) note = note || n["message"].get<std::string>().find("'put' is called here") != std::string::npos;
  EXPECT_TRUE(note) << j.dump(2);
}

TEST(Places, MeasuredTagOncePerRuleInTextAndInTheRuleMetadata) {
  std::string d = tempDir("tag");
  writeFile(d + "/k.cu",
            "__global__ void a(float* x) { x[threadIdx.x * 32] = 0; }\n"
            "__global__ void b(float* x) { x[threadIdx.x * 32 + 1] = 0; }\n");
  auto r = runLint("--no-cuda --no-cache --no-group k.cu", d);
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_EQ(countSubstr(r.out, "[uncoalesced-access]"), 2u) << r.out;
  EXPECT_EQ(countSubstr(r.out, "7.9x slower than stride 1"), 1u) << r.out;
  auto all = findings(lintJson(d, "--no-group k.cu"));
  ASSERT_EQ(all.size(), 2u);
  for (const auto& x : all) {
    EXPECT_EQ(x["message"].get<std::string>().find("measured on"), std::string::npos) << x.dump(2);
    EXPECT_NE(x["measuredImpact"].get<std::string>().find("7.9x"), std::string::npos) << x.dump(2);
  }
  auto s = runLint("--no-cuda --no-cache --no-group --format sarif k.cu", d);
  auto sj = json::parse(s.out);
  bool tagged = false;
  for (const auto& rule : sj["runs"][0]["tool"]["driver"]["rules"])
    if (rule["id"] == "uncoalesced-access") tagged = rule["properties"].contains("measuredImpact");
  EXPECT_TRUE(tagged);
  for (const auto& res : sj["runs"][0]["results"])
    EXPECT_EQ(res["message"]["text"].get<std::string>().find("measured on"), std::string::npos);
}

TEST(Places, BankConflictQuotesTheFactorMeasuredForItsWays) {
  std::string d = tempDir("ways");
  writeFile(d + "/k.cu",
            "__global__ void two(float* out) {\n  __shared__ float s[512];\n  s[threadIdx.x * 2] = 1;\n"
            "  __syncthreads();\n  out[threadIdx.x] = s[threadIdx.x];\n}\n"
            "__global__ void all(float* out) {\n  __shared__ float s[32 * 32];\n  s[threadIdx.x * 32] = 1;\n"
            "  __syncthreads();\n  out[threadIdx.x] = s[threadIdx.x];\n}\n"
            "void run(float* o) { two<<<1, 32>>>(o); all<<<1, 32>>>(o); }\n");
  std::map<int, std::string> tag;
  for (const auto& x : findings(lintJson(d, "--no-group --rules=bank-conflict k.cu"))) tag[x["location"]["line"]] = x["measuredImpact"];
  ASSERT_EQ(tag.size(), 2u);
  EXPECT_NE(tag[3].find("2-way conflict (shared stride 2) 1.97x"), std::string::npos) << tag[3];
  EXPECT_EQ(tag[3].find("31.1x"), std::string::npos) << tag[3];
  EXPECT_NE(tag[9].find("32-way conflict (shared stride 32) 31.1x"), std::string::npos) << tag[9];
}

TEST(Places, PaddingSizedForSixteenBanksIsNamedWithTheFixForThirtyTwo) {
  // The lectures' conflict-free scan pads with `n >> 4` (16 banks); on 32 banks a 2-way conflict
  // remains (ncu on the H100: 100 shared-load wavefronts for 56 requests), `n >> 5` has none
  // (docs/measurements-data/bank-padding-h100.txt).
  std::string d = tempDir("pad16");
  auto kernel = [](const std::string& name, int shift) {
    return "__global__ void " + name + "(float* o, const float* in) {\n  __shared__ float t[600];\n"
           "  int ai = threadIdx.x;\n  t[ai + (ai >> " + std::to_string(shift) + ")] = in[ai];\n"
           "  __syncthreads();\n  o[ai] = t[ai + (ai >> " + std::to_string(shift) + ")];\n}\n";
  };
  writeFile(d + "/k.cu", kernel("pad16", 4) + kernel("pad32", 5) +
                             "void run(float* o, const float* i) { pad16<<<1, 256>>>(o, i); pad32<<<1, 256>>>(o, i); }\n");
  auto all = findings(lintJson(d, "--no-group --rules=bank-conflict k.cu"));
  ASSERT_EQ(all.size(), 2u) << all.size();
  for (const auto& f : all) {
    EXPECT_EQ(f["kernel"], "pad16");
    EXPECT_NE(f["message"].get<std::string>().find("sized for the 16 banks of GPUs before Fermi"), std::string::npos) << f.dump(2);
    EXPECT_NE(f["fix"].get<std::string>().find("shift by 5 instead of 4"), std::string::npos) << f.dump(2);
  }
}

TEST(Places, StrideIsNamedInTheSourcesVariablesNotAMacrosText) {
  std::string d = tempDir("macro");
  writeFile(d + "/k.cu",
            "#define IDX(r, c, ld) ((r) * (ld) + (c))\n"
            "__global__ void k(float* a, int m) { a[IDX(threadIdx.x, 0, m)] = 0; }\n");
  auto all = findings(lintJson(d, "--no-group k.cu"));
  ASSERT_EQ(all.size(), 1u);
  std::string msg = all[0]["message"];
  EXPECT_NE(msg.find("'m' elements apart"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("'IDX(threadIdx.x, 0, m)' elements apart"), std::string::npos) << msg;
}

// One element per thread along a run-time stride is said so only when it is (held-out wave 4:
// a window's first element read before the loop over the rest was called "one element per
// thread", with the callers'-stride fix); a thread walking its own run gets the measured run text.
TEST(Places, OneElementPerThreadOnlyWhenNothingElseWalksTheRow) {
  std::string d = tempDir("one-element");
  writeFile(d + "/w.cu",
            "__global__ void windowMax(const float* in, float* out, int n, int width) {\n"
            "  int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (tid >= n) return;\n"
            "  const float* b = in + tid * width;\n"
            "  float best = b[0];\n"
            "  for (int i = 1; i < width; ++i) best = fmaxf(best, b[i]);\n"
            "  out[tid] = best;\n"
            "}\n"
            "__global__ void column(const float* in, float* out, int n, int ld) {\n"
            "  int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (tid < n) out[tid] = in[tid * ld];\n"
            "}\n"
            "void run(const float* in, float* out, int n, int w) {\n"
            "  windowMax<<<(n + 255) / 256, 256>>>(in, out, n, w);\n  column<<<(n + 255) / 256, 256>>>(in, out, n, w);\n}\n");
  std::map<int, json> byLine;
  for (const auto& x : findings(lintJson(d, "--no-cuda --no-group --rules=uncoalesced-access w.cu"))) byLine[x["location"]["line"]] = x;
  ASSERT_TRUE(byLine.count(5) && byLine.count(6) && byLine.count(11)) << json(byLine).dump(2);
  EXPECT_EQ(byLine[5]["message"].get<std::string>().find("one element"), std::string::npos) << byLine[5].dump(2);
  EXPECT_NE(byLine[6]["message"].get<std::string>().find("runs of 16, 32, 64 and 128 bytes per thread"), std::string::npos)
      << byLine[6].dump(2);
  EXPECT_NE(byLine[11]["message"].get<std::string>().find("each thread touches one element along that stride"), std::string::npos)
      << byLine[11].dump(2);
  EXPECT_EQ(byLine[11]["severity"], "note");
}

TEST(Places, AdviceFitsTheCause) {
  std::string d = tempDir("advice");
  // Pageable copies: batching is advised for small repeated copies only.
  writeFile(d + "/copies.cu",
            "#include <cstdlib>\n"
            "void big(float* d, int steps) {\n  float* h = (float*)malloc(256 << 20);\n"
            "  for (int t = 0; t < steps; ++t) cudaMemcpy(d, h, 256 << 20, cudaMemcpyHostToDevice);\n}\n"
            "void small(float* d, int steps) {\n  float* h = (float*)malloc(4096);\n"
            "  for (int t = 0; t < steps; ++t) cudaMemcpy(d, h, 4096, cudaMemcpyHostToDevice);\n}\n");
  std::map<int, json> byLine;
  for (const auto& x : findings(lintJson(d, "--no-group --rules=pageable-memcpy copies.cu"))) byLine[x["location"]["line"]] = x;
  ASSERT_EQ(byLine.size(), 2u);
  EXPECT_EQ(byLine[4]["fix"].get<std::string>().find("batch"), std::string::npos) << byLine[4].dump(2);
  EXPECT_NE(byLine[4]["measuredImpact"].get<std::string>().find("one 256 MiB copy"), std::string::npos);
  EXPECT_NE(byLine[8]["fix"].get<std::string>().find("batch"), std::string::npos) << byLine[8].dump(2);
  // A race on a neighbour's element inside one block: the demo's figure, not its failed barrier fix.
  writeFile(d + "/race.cu",
            "__global__ void scan(int* c) { int i = threadIdx.x; if (i > 0) c[i] += c[i - 1]; }\n"
            "void run(int* c) { scan<<<1, 256>>>(c); }\n");
  auto race = findings(lintJson(d, "--no-group --rules=global-memory-race race.cu"));
  ASSERT_EQ(race.size(), 1u);
  std::string tag = race[0]["measuredImpact"];
  EXPECT_NE(tag.find("17 of 20"), std::string::npos) << tag;
  EXPECT_EQ(tag.find("Fix1"), std::string::npos) << tag;
  // A launch through cudaLaunchKernel names its kernel.
  writeFile(d + "/launch.cu",
            "__global__ void work(float* d) { d[threadIdx.x] = 1.0f; }\n"
            "void loop(float* d, float* h, size_t n, int steps) {\n  cudaMallocHost(&h, n * sizeof(float));\n"
            "  for (int t = 0; t < steps; ++t) {\n    cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);\n"
            "    void* args[] = {&d};\n    cudaLaunchKernel((const void*)work, dim3(256), dim3(256), args, 0, 0);\n"
            "    cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);\n  }\n}\n");
  auto st = findings(lintJson(d, "--no-group --rules=serialized-transfers launch.cu"));
  ASSERT_EQ(st.size(), 1u);
  EXPECT_NE(st[0]["message"].get<std::string>().find("launches 'work'"), std::string::npos) << st[0].dump(2);
  // Every thread writing one element in one statement: no barrier can come between the writes, so
  // none is advised; two statements writing one element: a barrier can order them.
  writeFile(d + "/waw.cu",
            "__global__ void one(float* out, float v) { out[0] = v * threadIdx.x; }\n"
            "__global__ void two(float* out) {\n  out[threadIdx.x] = 1.0f;\n"
            "  out[threadIdx.x + 1] = 2.0f;\n}\n"
            "__global__ void shared1(float* out) {\n  __shared__ float s;\n  s = threadIdx.x;\n  __syncthreads();\n"
            "  out[threadIdx.x] = s;\n}\n"
            "void run(float* o) { one<<<1, 64>>>(o, 2.0f); two<<<1, 64>>>(o); shared1<<<1, 64>>>(o); }\n");
  auto waw = findingsByLine(d, "--no-group --rules=global-memory-race,missing-syncthreads waw.cu");
  ASSERT_TRUE(waw.count(1) && waw.count(4) && waw.count(8)) << waw.size();
  for (int line : {1, 8}) {
    std::string fix = waw[line]["fix"];
    EXPECT_NE(fix.find("no barrier can order"), std::string::npos) << line << ": " << fix;
    EXPECT_EQ(fix.find("order the two with __syncthreads()"), std::string::npos) << fix;
  }
  EXPECT_TRUE(says(waw[4], "fix", "__syncthreads()") && !says(waw[4], "fix", "no barrier can order")) << waw[4].dump(2);
  // A branch only the lanes at the block's edge take (a zero-flux boundary row): the boundary
  // advice, a note when few warps split; a branch by lane parity: the warp-assignment advice.
  writeFile(d + "/edge.cu",
            "__global__ void rows(const float* u, float* o, int nx) {\n"
            "  int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;\n"
            "  if (threadIdx.y == 0) o[y * nx + x] = u[(y + 1) * nx + x] - u[(y + 2) * nx + x];\n"
            "  else o[y * nx + x] = u[(y - 1) * nx + x] + u[(y + 1) * nx + x];\n}\n"
            "__global__ void odd(const float* u, float* o, int nx) {\n"
            "  int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;\n"
            "  if (threadIdx.x % 2) o[y * nx + x] = u[(y + 1) * nx + x] - u[(y + 2) * nx + x];\n"
            "  else o[y * nx + x] = u[(y - 1) * nx + x] + u[(y + 1) * nx + x];\n}\n"
            "void run(const float* u, float* o, int nx) { rows<<<dim3(8, 8), dim3(16, 16)>>>(u, o, nx);"
            " odd<<<dim3(8, 8), dim3(16, 16)>>>(u, o, nx); }\n");
  auto div = findingsByLine(d, "--no-group --rules=divergent-branch edge.cu");
  ASSERT_TRUE(div.count(3) && div.count(8)) << div.size();
  EXPECT_EQ(div[3]["severity"], "note") << div[3].dump(2);
  EXPECT_TRUE(says(div[3], "fix", "halo") && says(div[3], "message", "at the edge of the block")) << div[3].dump(2);
  EXPECT_EQ(div[8]["severity"], "warning") << div[8].dump(2);
  EXPECT_TRUE(!says(div[8], "fix", "halo") && says(div[8], "fix", "uniform per warp")) << div[8].dump(2);
  // A kernel that reads its whole input (all pairs): no chunk-per-stream advice for its copies.
  writeFile(d + "/pairs.cu",
            "__global__ void pairs(const float* p, float* a, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  float s = 0.0f;\n"
            "  for (int j = 0; j < n; ++j) s += p[j] - p[i];\n  a[i] = s;\n}\n"
            "__global__ void own(const float* p, float* a, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  a[i] = p[i] * 2.0f;\n}\n"
            "void run(float* dp, float* da, float* h, size_t n, int iters) {\n  cudaMallocHost(&h, n * 4);\n"
            "  for (int t = 0; t < iters; ++t) {\n    cudaMemcpy(dp, h, n * 4, cudaMemcpyHostToDevice);\n"
            "    pairs<<<n / 256, 256>>>(dp, da, n);\n    cudaMemcpy(h, da, n * 4, cudaMemcpyDeviceToHost);\n  }\n"
            "  for (int t = 0; t < iters; ++t) {\n    cudaMemcpy(dp, h, n * 4, cudaMemcpyHostToDevice);\n"
            "    own<<<n / 256, 256>>>(dp, da, n);\n    cudaMemcpy(h, da, n * 4, cudaMemcpyDeviceToHost);\n  }\n}\n");
  auto ser = findingsByLine(d, "--no-group --rules=serialized-transfers pairs.cu");
  ASSERT_TRUE(ser.count(13) && ser.count(18)) << ser.size();
  EXPECT_TRUE(!says(ser[13], "fix", "split the data into chunks") && says(ser[13], "message", "reads 'p[j]'")) << ser[13].dump(2);
  EXPECT_TRUE(says(ser[18], "fix", "split the data into chunks")) << ser[18].dump(2);
  // An 80-thread block (a head size): padding and rows of work both said, with the row count that
  // fills whole warps.
  writeFile(d + "/rows.cu", "__global__ void fix(float* o) { o[blockIdx.x * 80 + threadIdx.x] = 1.0f; }\n"
                            "void run(float* o) { fix<<<100, 80>>>(o); }\n");
  auto pw = findings(lintJson(d, "--no-group --rules=partial-warp-block rows.cu"));
  ASSERT_EQ(pw.size(), 1u);
  std::string pwFix = pw[0]["fix"];
  EXPECT_NE(pwFix.find("(64 or 96)"), std::string::npos) << pwFix;
  EXPECT_NE(pwFix.find("2 rows of work instead (2 x 80 = 160 threads, 5 full warps)"), std::string::npos) << pwFix;
  // An atomic on the block's own element is contended by the block's warps, not the grid's.
  writeFile(d + "/atomics.cu",
            "__global__ void perBlock(const int* in, int* m) { atomicMax(&m[blockIdx.x], in[blockIdx.x * 256 + threadIdx.x]); }\n"
            "__global__ void whole(const int* in, int* t) { atomicAdd(t, in[blockIdx.x * 256 + threadIdx.x]); }\n"
            "void run(const int* in, int* o) { perBlock<<<64, 256>>>(in, o); whole<<<64, 256>>>(in, o); }\n");
  auto at = findingsByLine(d, "--no-group --rules=atomic-contention atomics.cu");
  ASSERT_TRUE(at.count(1) && at.count(2)) << at.size();
  EXPECT_TRUE(says(at[1], "message", "each block has an address of its own") &&
              !says(at[1], "message", "every block of the grid")) << at[1].dump(2);
  EXPECT_TRUE(says(at[2], "message", "every block of the grid")) << at[2].dump(2);
}

TEST(Places, WarpWritesThatOnlyOverwriteAreNotCalledAReduction) {
  std::string d = tempDir("ww");
  writeFile(d + "/k.cu",
            "__global__ void overwrite(float* out) {\n  __shared__ float s[64];\n  int t = threadIdx.x;\n"
            "  if (t < 32) {\n    s[t] = 1.0f;\n    s[t ^ 1] = 2.0f;\n  }\n  __syncthreads();\n  out[t] = s[t];\n}\n"
            "__global__ void tail(float* out) {\n  __shared__ float s[64];\n  int t = threadIdx.x;\n  s[t] = t;\n"
            "  __syncthreads();\n  if (t < 32) {\n    s[t] += s[t + 16];\n    s[t] += s[t + 8];\n  }\n"
            "  __syncthreads();\n  out[t] = s[0];\n}\n"
            "void go(float* o) { overwrite<<<1, 64>>>(o); tail<<<1, 64>>>(o); }\n");
  std::map<int, json> byLine;
  for (const auto& x : findings(lintJson(d, "--no-group --rules=unsafe-warp-reduce k.cu"))) byLine[x["location"]["line"]] = x;
  ASSERT_EQ(byLine.size(), 2u) << json(byLine).dump(2);
  std::string ww = byLine[6]["message"], red = byLine.rbegin()->second["message"];
  EXPECT_NE(ww.find("write the same words"), std::string::npos) << ww;
  EXPECT_EQ(ww.find("reduction"), std::string::npos) << ww;
  EXPECT_EQ(ww.find("read each other"), std::string::npos) << ww;
  EXPECT_EQ(byLine[6]["measuredImpact"].get<std::string>().find("not measured"), 0u) << byLine[6].dump(2);
  EXPECT_NE(red.find("reduction"), std::string::npos) << red;
}

TEST(Places, AnAddressIsNamedInTheTypeTheCodeCastsABufferTo) {
  std::string d = tempDir("cast");
  writeFile(d + "/k.cu",
            "__global__ void viaChar(float* out) {\n  extern __shared__ char buf[];\n  float* f = (float*)buf;\n"
            "  f[threadIdx.x] = 1.0f;\n  out[threadIdx.x] = f[threadIdx.x + 1];\n}\n"
            "__global__ void plain(float* out) {\n  extern __shared__ float g[];\n"
            "  g[threadIdx.x] = 1.0f;\n  out[threadIdx.x] = g[threadIdx.x + 1];\n}\n"
            "void go(float* o) { viaChar<<<1, 64, 1024>>>(o); plain<<<1, 64, 1024>>>(o); }\n");
  std::map<int, std::string> msg;
  for (const auto& x : findings(lintJson(d, "--no-group --rules=missing-syncthreads k.cu"))) msg[x["location"]["line"]] = x["message"];
  ASSERT_EQ(msg.size(), 2u);
  EXPECT_NE(msg[5].find("reads ((float*)buf)[32]"), std::string::npos) << msg[5];
  EXPECT_EQ(msg[5].find(" buf[32]"), std::string::npos) << msg[5];
  EXPECT_NE(msg[10].find("reads g[32]"), std::string::npos) << msg[10];
}

TEST(Places, OneFindingPerStatementLineUnlessNoGroup) {
  std::string d = tempDir("line");
  writeFile(d + "/k.cu",
            "__global__ void k(const float* a, const float* b, float* c) {\n"
            "  c[threadIdx.x * 32] = a[threadIdx.x * 32] + b[threadIdx.x * 64];\n"
            "  c[threadIdx.x * 32 + 1] = 0;\n"
            "}\n"
            "void go(const float* a, const float* b, float* c) { k<<<1, 256>>>(a, b, c); }\n");
  auto grouped = findings(lintJson(d, "--rules=uncoalesced-access k.cu"));
  std::map<int, int> perLine;
  for (const auto& x : grouped) ++perLine[x["location"]["line"]];
  EXPECT_EQ(perLine[2], 1) << json(grouped).dump(2);
  for (const auto& x : grouped)
    if (x["location"]["line"] == 2) {
      EXPECT_NE(x["message"].get<std::string>().find("; and 2 more on this line"), std::string::npos) << x.dump(2);
      EXPECT_GE(x["notes"].size(), 2u) << x.dump(2);
    }
  auto all = findings(lintJson(d, "--no-group --rules=uncoalesced-access k.cu"));
  size_t line2 = 0;
  for (const auto& x : all) line2 += x["location"]["line"] == 2;
  EXPECT_EQ(line2, 3u) << json(all).dump(2);
}
