// What a user's daily loop goes through, end to end through the binary (issue 32): --fix that
// converges and says what it did, the block shape's precedence, output paths and columns as other
// tools read them, configuration mistakes, the result cache's key, the summary line, and reporting
// only new findings (--baseline, --diff, per-file-ignores).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "test_util.h"

using namespace gpuopt::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
// A 16x16 tile transposed by 16x16 blocks (the launch is in the file). The row store is
// conflict-free; the column read is an 8-way conflict. Padding the row ([16 + 1]) makes the row
// store a 2-way conflict: no padding helps without adding one, an XOR swizzle does.
const std::string kTranspose16 =
    "#define T 16\n"
    "__global__ void transpose16(const float* in, float* out, int n) {\n"
    "  __shared__ float tile[T][T];\n"
    "  int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;\n"
    "  tile[threadIdx.y][threadIdx.x] = in[y * n + x];\n"
    "  __syncthreads();\n"
    "  x = blockIdx.y * T + threadIdx.x;\n"
    "  y = blockIdx.x * T + threadIdx.y;\n"
    "  out[y * n + x] = tile[threadIdx.x][threadIdx.y];\n"
    "}\n"
    "void launch(const float* in, float* out, int n) {\n"
    "  transpose16<<<dim3(n / T, n / T), dim3(T, T)>>>(in, out, n);\n"
    "}\n";

// The 32x32 transpose: padding by one element removes the 32-way conflict.
const std::string kTranspose32 =
    "__global__ void transpose32(const float* in, float* out) {\n"
    "  __shared__ float tile[32][32];\n"
    "  int x = threadIdx.x, y = threadIdx.y;\n"
    "  tile[y][x] = in[y * 32 + x];\n"
    "  __syncthreads();\n"
    "  out[y * 32 + x] = tile[x][y];\n"
    "}\n"
    "void launch(const float* in, float* out) { transpose32<<<1, dim3(32, 32)>>>(in, out); }\n";

json lintJson(const std::string& args, const std::string& dir) {
  auto r = runLint("--format json " + args, dir);
  try {
    return json::parse(r.out);
  } catch (...) {
    ADD_FAILURE() << "not JSON: " << r.out << r.err;
    return json::object();
  }
}

std::vector<json> findings(const json& j, const std::string& rule = "") {
  std::vector<json> out;
  if (!j.contains("files")) return out;
  for (const auto& f : j["files"])
    for (const auto& d : f["findings"])
      if (rule.empty() || d["ruleId"] == rule) out.push_back(d);
  return out;
}

size_t withFix(const std::vector<json>& fs) {
  size_t n = 0;
  for (const auto& f : fs) n += f.contains("fixIts") && !f["fixIts"].empty();
  return n;
}

int sh(const std::string& cmd) { return WEXITSTATUS(std::system(cmd.c_str())); }

std::string gitRepo(const std::string& name) {
  std::string d = tempDir(name);
  sh("cd '" + d + "' && git init -q . && git config user.email t@example.org && git config user.name t");
  return d;
}
}  // namespace

// --- Item 1: the bank-conflict fix converges and never adds a conflict ----------------------------

TEST(Fix, BankConflictFixNeverAddsAConflictAndConverges) {
  std::string d = tempDir("fix16");
  writeFile(d + "/t.cu", kTranspose16);
  auto before = findings(lintJson("--rules=bank-conflict t.cu", d), "bank-conflict");
  ASSERT_EQ(before.size(), 1u) << "the column read";
  EXPECT_EQ(before[0]["location"]["line"], 9);
  ASSERT_EQ(withFix(before), 1u) << "a fix is offered: an XOR swizzle";
  auto r = runLint("--fix --rules=bank-conflict t.cu", d);
  std::string fixed = readFile(d + "/t.cu");
  EXPECT_EQ(fixed.find("[T + 1]"), std::string::npos) << "padding makes the row store a 2-way conflict:\n" << fixed;
  // Every access of the tile is rewritten the same way, so the layout stays one permutation.
  EXPECT_NE(fixed.find("tile[threadIdx.y][threadIdx.x ^ (threadIdx.y % T)]"), std::string::npos) << fixed;
  EXPECT_NE(fixed.find("tile[threadIdx.x][threadIdx.y ^ (threadIdx.x % T)]"), std::string::npos) << fixed;
  EXPECT_EQ(r.rc, 0) << "nothing remains: " << r.out << r.err;
  // Idempotent: the fixed file has no conflict and no fix to offer.
  auto after = findings(lintJson("--rules=bank-conflict t.cu", d), "bank-conflict");
  EXPECT_TRUE(after.empty()) << after.size() << " finding(s) after the fix: " << (after.empty() ? "" : after[0].dump());
  if (fs::exists("/usr/local/cuda/bin/nvcc")) {
    EXPECT_EQ(sh("/usr/local/cuda/bin/nvcc -arch=sm_90 -c '" + d + "/t.cu' -o '" + d + "/t.o' > '" + d + "/nvcc.log' 2>&1"), 0)
        << readFile(d + "/nvcc.log");
  }
}

TEST(Fix, PaddingIsChosenWhereItHelpsAndTheFixIsIdempotent) {
  std::string d = tempDir("fix32");
  writeFile(d + "/t.cu", kTranspose32);
  auto r = runLint("--fix --rules=bank-conflict t.cu", d);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(readFile(d + "/t.cu").find("__shared__ float tile[32][32 + 1];"), std::string::npos) << readFile(d + "/t.cu");
  auto again = findings(lintJson("--rules=bank-conflict t.cu", d), "bank-conflict");
  EXPECT_TRUE(again.empty()) << again.size();
  EXPECT_EQ(withFix(again), 0u) << "no new fix proposed";
}

TEST(Fix, NoFixWhenNoLayoutImprovesAndTheGainIsSaidSmall) {
  std::string d = tempDir("fixnone");
  // A stride-2 read inside one row: neither padding rows nor a row-keyed swizzle changes it.
  writeFile(d + "/row.cu",
            "__global__ void k(float* out) {\n"
            "  __shared__ float t[32][64];\n"
            "  t[0][threadIdx.x] = threadIdx.x;\n"
            "  t[0][threadIdx.x + 32] = threadIdx.x;\n"
            "  __syncthreads();\n"
            "  out[threadIdx.x] = t[0][2 * threadIdx.x];\n"
            "}\n"
            "void launch(float* o) { k<<<1, 32>>>(o); }\n");
  auto f = findings(lintJson("--rules=bank-conflict row.cu", d), "bank-conflict");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(withFix(f), 0u) << f[0].dump();
  EXPECT_EQ(f[0]["fix"].get<std::string>().rfind("neither padding 't' nor swizzling", 0), 0u) << f[0]["fix"];
  // The 16x16 transpose: its global traffic outweighs the replays the swizzle saves.
  writeFile(d + "/t16.cu", kTranspose16);
  auto g = findings(lintJson("--rules=bank-conflict t16.cu", d), "bank-conflict");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_NE(g[0]["fix"].get<std::string>().find("gain is likely small"), std::string::npos) << g[0]["fix"];
  writeFile(d + "/t32.cu", kTranspose32);
  auto h = findings(lintJson("--rules=bank-conflict t32.cu", d), "bank-conflict");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0]["fix"].get<std::string>().find("small"), std::string::npos) << h[0]["fix"];
}

TEST(Fix, NoPaddingWhenTheArrayIsUsedThroughAPointer) {
  std::string d = tempDir("fixptr");
  // The tile's rows are read through a pointer elsewhere: padding would change what it reads.
  writeFile(d + "/t.cu",
            "__device__ float first(const float* row) { return row[0]; }\n"
            "__global__ void k(const float* in, float* out) {\n"
            "  __shared__ float tile[32][32];\n"
            "  tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];\n"
            "  __syncthreads();\n"
            "  out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y] + first(&tile[0][0]);\n"
            "}\n"
            "void launch(const float* i, float* o) { k<<<1, dim3(32, 32)>>>(i, o); }\n");
  auto f = findings(lintJson("--rules=bank-conflict t.cu", d), "bank-conflict");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(withFix(f), 0u) << f[0].dump();
}

// --- Item 2: --fix says what it fixed and reports only what remains --------------------------------

TEST(Fix, FixReportsWhatItChangedAndOnlyWhatRemains) {
  std::string d = tempDir("fixout");
  writeFile(d + "/t.cu", kTranspose32);
  auto r = runLint("--fix t.cu", d);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("bank-conflict"), std::string::npos) << "the fixed finding is not printed as present:\n" << r.out;
  EXPECT_NE(r.err.find("fixed 1 finding in 1 file"), std::string::npos) << r.err;
  // With a finding that has no fix, it remains, exit 1.
  writeFile(d + "/u.cu", kTranspose32 + "__global__ void s(float* o, const float* a) { o[threadIdx.x] = a[32 * threadIdx.x]; }\n");
  r = runLint("--fix u.cu", d);
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.out.find("[bank-conflict]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[uncoalesced-access]"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("fixed 1 finding in 1 file; 1 remains"), std::string::npos) << r.err;
}

// --- Item 3: one precedence for the block shape ---------------------------------------------------

TEST(BlockDim, ALaunchInTheCodeWinsOverTheOptionAndTheConfiguration) {
  std::string d = tempDir("blockdim");
  // Threads t and t + 32 store to the same element: a race with 64 threads, none with 32.
  const std::string body =
      "__global__ void k(float* out) {\n"
      "  __shared__ float s[32];\n"
      "  s[threadIdx.x % 32] = threadIdx.x;\n"
      "  out[threadIdx.x] = s[(threadIdx.x + 1) % 32];\n"
      "}\n";
  writeFile(d + "/launched.cu", body + "void launch(float* o) { k<<<1, 32>>>(o); }\n");
  writeFile(d + "/alone.cu", body);
  auto races = [&](const std::string& args, const std::string& file) {
    return findings(lintJson("--rules=missing-syncthreads " + args + " " + file, d), "missing-syncthreads").size();
  };
  EXPECT_EQ(races("--block-dim 64", "launched.cu"), 0u) << "the launch <<<1, 32>>> is what runs";
  EXPECT_GT(races("--block-dim 64", "alone.cu"), 0u) << "no launch: the option gives the shape";
  writeFile(d + "/cfg.yaml", "block-dim: [64]\n");
  EXPECT_EQ(races("--config cfg.yaml", "launched.cu"), 0u);
  EXPECT_GT(races("--config cfg.yaml", "alone.cu"), 0u) << "the configuration's key gives the shape too";
  writeFile(d + "/cfg32.yaml", "block-dim: [32]\n");
  EXPECT_GT(races("--config cfg32.yaml --block-dim 64", "alone.cu"), 0u) << "the command line wins over the configuration";
  EXPECT_EQ(races("--config cfg.yaml --block-dim 32", "alone.cu"), 0u);
  // Given, the shape is not said as assumed.
  auto r = runLint("--rules=missing-syncthreads --config cfg.yaml alone.cu", d);
  EXPECT_EQ(r.out.find("assum"), std::string::npos) << r.out;
}

// --- Item 4: columns, paths and diffs as other tools read them ------------------------------------

TEST(Output, SarifColumnsAreUtf16CodeUnits) {
  std::string d = tempDir("utf16");
  // "é" is 2 bytes and 1 UTF-16 unit, the emoji 4 bytes and 2 units: the load starts at byte
  // column 31 and UTF-16 column 28; its last character is at 49 / 46 (SARIF's end is exclusive).
  writeFile(d + "/u.cu",
            "__global__ void k(float* o, const float* a) {\n"
            "  /*é😀*/ o[threadIdx.x] = a[32 * threadIdx.x];\n"
            "}\n");
  auto text = runLint("--rules=uncoalesced-access u.cu", d);
  EXPECT_NE(text.out.find("u.cu:2:31:"), std::string::npos) << "text keeps byte columns, as clang: " << text.out;
  auto r = runLint("--rules=uncoalesced-access --format sarif u.cu", d);
  auto j = json::parse(r.out);
  auto& run = j["runs"][0];
  EXPECT_EQ(run["columnKind"], "utf16CodeUnits");
  ASSERT_FALSE(run["results"].empty()) << r.out;
  auto& region = run["results"][0]["locations"][0]["physicalLocation"]["region"];
  EXPECT_EQ(region["startColumn"], 28) << region.dump();
  EXPECT_EQ(region["endColumn"], 47) << region.dump();
}

TEST(Output, SarifUrisArePercentEncoded) {
  std::string d = tempDir("sarifuri");
  writeFile(d + "/my dir/k 1.cu", "__global__ void k(float* o, const float* a) { o[threadIdx.x] = a[32 * threadIdx.x]; }\n");
  auto r = runLint("--format sarif 'my dir/k 1.cu'", d);
  auto j = json::parse(r.out);
  EXPECT_EQ(j["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "my%20dir/k%201.cu");
}

TEST(Output, GithubPathsAreRelativeToTheRepositoryRoot) {
  std::string d = gitRepo("ghroot");
  writeFile(d + "/src/k.cu", "__global__ void k(float* o, const float* a) { o[threadIdx.x] = a[32 * threadIdx.x]; }\n");
  auto r = runLint("--format github k.cu", d + "/src");
  EXPECT_NE(r.out.find("::warning file=src/k.cu,line=1"), std::string::npos) << r.out;
  // In GitHub Actions, relative to $GITHUB_WORKSPACE.
  r = runLint("--format github k.cu", d + "/src", "GITHUB_WORKSPACE='" + d + "/src'");
  EXPECT_NE(r.out.find("::warning file=k.cu,line=1"), std::string::npos) << r.out;
}

TEST(Output, FixDryRunIsAPatchGitApplies) {
  std::string d = gitRepo("gitapply");
  writeFile(d + "/sub/t.cu", kTranspose32);
  writeFile(d + "/sub/t16.cu", kTranspose16);
  sh("cd '" + d + "' && git add -A && git commit -qm x");
  auto r = runLint("--fix --dry-run t.cu t16.cu", d + "/sub");
  ASSERT_NE(r.out.find("--- a/sub/t.cu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+++ b/sub/t.cu"), std::string::npos) << r.out;
  writeFile(d + "/fix.patch", r.out);
  EXPECT_EQ(sh("cd '" + d + "/sub' && git apply --check ../fix.patch 2>'" + d + "/err'"), 0) << readFile(d + "/err") << r.out;
  EXPECT_EQ(sh("cd '" + d + "' && git apply fix.patch 2>'" + d + "/err'"), 0) << readFile(d + "/err");
  EXPECT_NE(readFile(d + "/sub/t.cu").find("tile[32][32 + 1]"), std::string::npos);
  // Outside a repository: paths relative to the current folder, applied with patch -p1.
  std::string o = tempDir("patchp1");
  writeFile(o + "/t.cu", kTranspose32);
  r = runLint("--fix --dry-run t.cu", o);
  writeFile(o + "/fix.patch", r.out);
  EXPECT_EQ(sh("cd '" + o + "' && patch -s -p1 < fix.patch"), 0) << r.out;
  EXPECT_NE(readFile(o + "/t.cu").find("tile[32][32 + 1]"), std::string::npos);
}

// --- Item 6: configuration mistakes are said, and inheritance is explicit --------------------------

TEST(Config, UnknownRuleOptionsAreErrors) {
  std::string d = tempDir("cfgopt");
  writeFile(d + "/k.cu", kTranspose32);
  writeFile(d + "/.gpuopt-lint.yaml", "options:\n  bank-conflict: {min-way: 4}\n");
  auto r = runLint("k.cu", d);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE((r.out + r.err).find(".gpuopt-lint.yaml:2:"), std::string::npos) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("unknown option 'min-way' for rule 'bank-conflict' (its options: min-ways, warn-ways)"),
            std::string::npos)
      << r.out << r.err;
  writeFile(d + "/.gpuopt-lint.yaml", "options:\n  divergent-branch: {anything: 1}\n");
  r = runLint("k.cu", d);
  EXPECT_NE((r.out + r.err).find("rule 'divergent-branch' has no options"), std::string::npos) << r.out << r.err;
  writeFile(d + "/.gpuopt-lint.yaml", "options:\n  bank-conflict: {min-ways: 64}\n");
  EXPECT_EQ(runLint("k.cu", d).rc, 0) << "a known option still works";
}

TEST(Config, UnknownRuleIdsInNolintAreWarned) {
  std::string d = tempDir("nolintid");
  writeFile(d + "/k.cu",
            "__global__ void k(float* o, const float* a) {\n"
            "  o[threadIdx.x] = a[32 * threadIdx.x];  // NOLINT(uncoalesced-acess)\n"
            "  o[threadIdx.x + 1] = a[2];  // NOLINT(bugprone-narrowing, readability-magic-numbers)\n"
            "  o[threadIdx.x + 2] = a[3];  // NOLINT(runtime/arrays, build/include_what_you_use)\n"
            "}\n");
  auto r = runLint("--format json k.cu", d);
  auto j = json::parse(r.out);
  auto all = findings(j);
  bool warned = false, tidyWarned = false, stillReported = false;
  for (const auto& f : all) {
    std::string m = f["message"];
    if (f["ruleId"] == "nolint-unknown-rule" && f["location"]["line"] == 2) {
      warned = true;
      EXPECT_EQ(f["severity"], "warning");
      EXPECT_NE(m.find("did you mean 'uncoalesced-access'"), std::string::npos) << m;
    }
    if (f["ruleId"] == "nolint-unknown-rule" && f["location"]["line"] >= 3) tidyWarned = true;
    if (f["ruleId"] == "uncoalesced-access" && f["location"]["line"] == 2) stillReported = true;
  }
  EXPECT_TRUE(warned) << r.out;
  EXPECT_TRUE(stillReported) << "a misspelled id suppresses nothing: " << r.out;
  EXPECT_FALSE(tidyWarned) << "clang-tidy's checks and cpplint's categories share the NOLINT syntax: " << r.out;
}

TEST(Config, ASubfolderConfigurationInheritsOnlyWithExtend) {
  std::string d = tempDir("cfgextend");
  writeFile(d + "/.gpuopt-lint.yaml", "rules: ['*', '-uncoalesced-access']\nseverity: {bank-conflict: error}\n");
  const std::string k = kTranspose32 + "__global__ void s(float* o, const float* a) { o[threadIdx.x] = a[32 * threadIdx.x]; }\n";
  writeFile(d + "/sub/k.cu", k);
  writeFile(d + "/sub/.gpuopt-lint.yaml", "fail-on: error\n");
  auto j = lintJson("sub/k.cu", d);
  EXPECT_FALSE(findings(j, "uncoalesced-access").empty()) << "without extend, the nearest file is the whole configuration";
  auto v = runLint("--verbose sub/k.cu", d);
  EXPECT_NE(v.err.find("does not extend"), std::string::npos) << "--verbose says the parent is not read: " << v.err;
  writeFile(d + "/sub/.gpuopt-lint.yaml", "extend: ../.gpuopt-lint.yaml\nrules: ['-divergent-branch']\nfail-on: error\n");
  j = lintJson("sub/k.cu", d);
  EXPECT_TRUE(findings(j, "uncoalesced-access").empty()) << "the parent's '-uncoalesced-access' is inherited";
  auto b = findings(j, "bank-conflict");
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(b[0]["severity"], "error") << "the parent's severity map is inherited";
  auto dump = runLint("--dump-config sub/k.cu", d);
  EXPECT_NE(dump.out.find("extends"), std::string::npos) << dump.out;
  writeFile(d + "/sub/.gpuopt-lint.yaml", "extend: .gpuopt-lint.yaml\n");
  auto cyc = runLint("sub/k.cu", d);
  EXPECT_EQ(cyc.rc, 2);
  EXPECT_NE((cyc.out + cyc.err).find("extends itself"), std::string::npos) << cyc.out << cyc.err;
  writeFile(d + "/sub/.gpuopt-lint.yaml", "extend: ../nowhere.yaml\n");
  auto missing = runLint("sub/k.cu", d);
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE((missing.out + missing.err).find("nowhere.yaml"), std::string::npos) << missing.out << missing.err;
}

// --- Item 7: output-only options do not change the result cache's key ------------------------------

TEST(Cache, VerboseAndOutputOptionsDoNotInvalidateStoredResults) {
  std::string d = tempDir("cacheverbose");
  std::string cache = d + "/cache";
  writeFile(d + "/k.cu", kTranspose32);
  auto r = runLint("--cache-dir '" + cache + "' k.cu", d);
  EXPECT_EQ(r.rc, 1);
  for (const char* args : {"--verbose", "--verbose --format json", "-q --format sarif", "--no-group --statistics",
                           "--color always --exit-zero"}) {
    r = runLint(std::string("--verbose --cache-dir '") + cache + "' " + args + " k.cu", d);
    EXPECT_NE(r.err.find("without starting the analyzer"), std::string::npos) << args << ": " << r.err;
  }
}

// --- Item 9: the summary names what failed, and counts what was analysed ---------------------------

TEST(Summary, NamesTheInputsThatCouldNotBeAnalysedAndExcludedFiles) {
  std::string d = tempDir("summary");
  writeFile(d + "/a_bad.cu", "__global__ void k(float* a) {\n  a[0] = ;\n");
  writeFile(d + "/b_host.cu", "int main() { return 0; }\n");
  writeFile(d + "/c_good.cu", kTranspose32);
  writeFile(d + "/third_party/x.cu", kTranspose32);
  writeFile(d + "/z_bad.cu", "this is not CUDA\n");
  writeFile(d + "/.gpuopt-lint.yaml", "exclude: ['third_party/*']\n");
  auto r = runLint("a_bad.cu b_host.cu c_good.cu third_party/x.cu z_bad.cu missing.cu", d);
  EXPECT_EQ(r.rc, 2);
  // Files with compile errors are reported (their errors are compile-error findings,
  // docs/rules/compile-error.md); only the missing one cannot be.
  EXPECT_NE(r.err.find("1 input could not be analysed: missing.cu"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("in 4 files analysed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no kernel analysed in 3 files: a_bad.cu, b_host.cu, z_bad.cu"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 excluded"), std::string::npos) << r.err;
}

TEST(Summary, HelpNamesEveryRule) {
  auto rules = runLint("--list-rules");
  auto help = runLint("--help");
  std::istringstream in(rules.out);
  for (std::string line; std::getline(in, line);) {
    std::string id = line.substr(0, line.find(' '));
    EXPECT_NE(help.out.find(id), std::string::npos) << id << " is not in --help";
  }
  EXPECT_NE(help.out.find("Exit status of --demo"), std::string::npos) << help.out;
}

// --- Item 10: only new findings -----------------------------------------------------------------------

TEST(NewFindings, BaselineHidesKnownFindingsAlsoWhenLinesMove) {
  std::string d = tempDir("baseline");
  const std::string strided = "__global__ void s(float* o, const float* a) { o[threadIdx.x] = a[32 * threadIdx.x]; }\n";
  writeFile(d + "/src/k.cu", kTranspose32 + strided);
  auto w = runLint("--write-baseline base.json src/k.cu", d);
  EXPECT_EQ(w.rc, 0) << w.err;
  EXPECT_NE(w.err.find("wrote 2 findings to base.json"), std::string::npos) << w.err;
  auto b = json::parse(readFile(d + "/base.json"));
  ASSERT_EQ(b["findings"].size(), 2u) << b.dump();
  EXPECT_EQ(b["findings"][0]["file"], "src/k.cu") << "paths relative to the baseline's folder";
  auto r = runLint("--baseline base.json src/k.cu", d);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("2 known findings in the baseline not shown"), std::string::npos) << r.err;
  // Lines move (a comment block above), a new finding appears: only it is reported.
  writeFile(d + "/src/k.cu", "// moved\n// down\n\n" + kTranspose32 + strided +
                                 "__global__ void t(float* o, const float* a) { o[threadIdx.x] = a[64 * threadIdx.x]; }\n");
  r = runLint("--format json --baseline base.json src/k.cu", d);
  EXPECT_EQ(r.rc, 1);
  auto f = findings(json::parse(r.out));
  ASSERT_EQ(f.size(), 1u) << r.out;
  EXPECT_NE(f[0]["message"].get<std::string>().find("a[64 * threadIdx.x]"), std::string::npos) << r.out;
  // From another folder: the baseline's paths are resolved against its own folder.
  r = runLint("--baseline ../base.json k.cu", d + "/src");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("a[64 * threadIdx.x]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("a[32 * threadIdx.x]"), std::string::npos) << r.out;
  // A missing or damaged baseline is an error, not a silent pass.
  EXPECT_EQ(runLint("--baseline nowhere.json src/k.cu", d).rc, 2);
  writeFile(d + "/bad.json", "{");
  auto bad = runLint("--baseline bad.json src/k.cu", d);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("bad.json"), std::string::npos) << bad.err;
}

TEST(NewFindings, DiffReportsOnlyFindingsOnChangedLines) {
  std::string d = gitRepo("diffmode");
  const std::string strided = "__global__ void s(float* o, const float* a) { o[threadIdx.x] = a[32 * threadIdx.x]; }\n";
  writeFile(d + "/k.cu", kTranspose32 + strided);
  writeFile(d + "/old.cu", strided);
  sh("cd '" + d + "' && git add -A && git commit -qm base");
  writeFile(d + "/k.cu", kTranspose32 + strided + "__global__ void t(float* o, const float* a) { o[threadIdx.x] = a[64 * threadIdx.x]; }\n");
  auto r = runLint("--format json --diff HEAD k.cu old.cu", d);
  EXPECT_EQ(r.rc, 1) << r.err;
  auto f = findings(json::parse(r.out));
  ASSERT_EQ(f.size(), 1u) << r.out;
  EXPECT_EQ(f[0]["location"]["line"], 10);
  // Without files: the CUDA files changed since REV.
  r = runLint("--format json --diff HEAD", d);
  f = findings(json::parse(r.out));
  ASSERT_EQ(f.size(), 1u) << r.out << r.err;
  EXPECT_EQ(f[0]["location"]["file"], "k.cu");
  // clang-tidy-diff's way: a unified diff on stdin.
  sh("cd '" + d + "' && git diff -U0 HEAD > changes.diff");
  r = runLint("--format json --diff - k.cu < changes.diff", d);
  f = findings(json::parse(r.out));
  ASSERT_EQ(f.size(), 1u) << r.out << r.err;
  EXPECT_EQ(f[0]["location"]["line"], 10);
  // Nothing changed: nothing reported, exit 0.
  sh("cd '" + d + "' && git add -A && git commit -qm next");
  r = runLint("--diff HEAD k.cu", d);
  EXPECT_EQ(r.rc, 0) << r.out;
  // A revision git does not know is an error.
  r = runLint("--diff no-such-rev k.cu", d);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no-such-rev"), std::string::npos) << r.err;
}

TEST(NewFindings, PerFileIgnores) {
  std::string d = tempDir("perfile");
  const std::string strided = "__global__ void s(float* o, const float* a) { o[threadIdx.x] = a[32 * threadIdx.x]; }\n";
  writeFile(d + "/tests/k.cu", kTranspose32 + strided);
  writeFile(d + "/src/k.cu", kTranspose32 + strided);
  writeFile(d + "/.gpuopt-lint.yaml", "per-file-ignores:\n  'tests/*': [uncoalesced-access]\n  'src/k.cu': ['bank-*']\n");
  auto f = findings(lintJson("tests/k.cu src/k.cu", d));
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& x : f) seen.insert({x["location"]["file"].get<std::string>(), x["ruleId"].get<std::string>()});
  EXPECT_EQ(seen, (std::set<std::pair<std::string, std::string>>{{"tests/k.cu", "bank-conflict"},
                                                                  {"src/k.cu", "uncoalesced-access"}}));
  writeFile(d + "/.gpuopt-lint.yaml", "per-file-ignores:\n  'tests/*': [no-such-rule]\n");
  auto r = runLint("tests/k.cu", d);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE((r.out + r.err).find("unknown rule 'no-such-rule'"), std::string::npos) << r.out << r.err;
}
