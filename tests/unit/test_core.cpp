// Units of the Clang-free core.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "analyzer/app/cli.h"
#include "analyzer/app/config.h"
#include "analyzer/rule/embedded_docs.h"
#include "analyzer/report/fix.h"
#include "analyzer/frontend/frontend.h"
#include "analyzer/report/output.h"
#include "analyzer/rule/rule_info.h"
#include "analyzer/report/suppression.h"

using namespace gpuopt;
namespace fs = std::filesystem;

namespace {
Diagnostic diag(const std::string& rule, unsigned line, const std::string& file = "a.cu") {
  Diagnostic d;
  d.ruleId = rule;
  d.span.begin = {file, line, 3};
  d.span.endLine = line;
  d.span.endCol = 9;
  d.message = "msg for " + rule;
  return d;
}
std::string tmp(const std::string& name) {
  auto d = fs::temp_directory_path() / ("gpuopt-core-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return (d / name).string();
}
void write(const std::string& p, const std::string& t) {
  fs::create_directories(fs::path(p).parent_path());
  std::ofstream(p) << t;
}
}  // namespace

// ---- suppression ----------------------------------------------------------------------------
TEST(Glob, Matches) {
  EXPECT_TRUE(globMatch("bank-conflict", "bank-conflict"));
  EXPECT_TRUE(globMatch("bank-*", "bank-conflict"));
  EXPECT_TRUE(globMatch("*", "divergent-branch"));
  EXPECT_FALSE(globMatch("bank-*", "barrier-divergence"));
  EXPECT_TRUE(globMatch("*-divergence", "barrier-divergence"));
  // Exclude patterns match whole relative paths: '*' crosses folders; '?' and [...] as in a shell.
  EXPECT_TRUE(globMatch("third_party/*", "third_party/cub/block/scan.cuh"));
  EXPECT_TRUE(globMatch("src/k?.cu", "src/k1.cu"));
  EXPECT_TRUE(globMatch("*-[bc]*", "bank-conflict"));
  EXPECT_FALSE(globMatch("*-[bc]*", "divergent-warp"));
}

TEST(Suppression, NolintForms) {
  std::vector<std::string> lines = {
      "x; // NOLINT",                                   // 1: all rules
      "x; // NOLINT(bank-conflict)",                    // 2: listed rule
      "// NOLINTNEXTLINE(uncoalesced-*, bank-conflict)",  // 3
      "x;",                                             // 4: suppressed by 3
      "// NOLINTBEGIN(divergent-branch)",               // 5
      "x;",                                             // 6
      "// NOLINTEND(divergent-branch)",                 // 7
      "x;",                                             // 8
      "NOLINT outside a comment",                       // 9: not a marker
  };
  std::vector<Diagnostic> d = {diag("uncoalesced-access", 1), diag("uncoalesced-access", 2), diag("bank-conflict", 2),
                               diag("uncoalesced-access", 4), diag("divergent-branch", 4), diag("divergent-branch", 6),
                               diag("bank-conflict", 6), diag("divergent-branch", 8), diag("bank-conflict", 9)};
  applySuppressions("a.cu", lines, d);
  std::vector<std::pair<unsigned, std::string>> kept;
  for (auto& x : d) kept.emplace_back(x.span.begin.line, x.ruleId);
  std::vector<std::pair<unsigned, std::string>> want = {
      {2, "uncoalesced-access"}, {4, "divergent-branch"}, {6, "bank-conflict"}, {8, "divergent-branch"}, {9, "bank-conflict"}};
  EXPECT_EQ(kept, want);
}

TEST(Suppression, UnpairedBeginEndReported) {
  std::vector<std::string> lines = {"// NOLINTBEGIN(bank-conflict)", "x;", "// NOLINTEND(uncoalesced-access)"};
  std::vector<Diagnostic> d;
  applySuppressions("a.cu", lines, d);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].ruleId, "nolint-unpaired");
  EXPECT_NE(d[0].message.find("NOLINTEND"), std::string::npos);
  EXPECT_EQ(d[0].span.begin.line, 3u);
  EXPECT_NE(d[1].message.find("NOLINTBEGIN"), std::string::npos);
  EXPECT_EQ(d[1].span.begin.line, 1u);
}

// ---- rule registry and docs -------------------------------------------------------------------
TEST(Registry, FixedIdsAndEveryRuleHasItsDoc) {
  std::vector<std::string> ids;
  for (const auto& r : allRuleInfos()) ids.emplace_back(r.id);
  std::vector<std::string> want = {"divergent-branch", "uncoalesced-access", "missing-syncthreads", "bank-conflict",
                                   "pageable-memcpy", "unsafe-warp-reduce", "barrier-divergence", "unbatched-memcpy",
                                   "serialized-transfers", "alloc-in-loop", "global-memory-race", "atomic-contention",
                                   "partial-warp-block", "double-promotion", "dynamic-local-array", "unused-block-dimension",
                                   "compile-error"};
  EXPECT_EQ(ids, want);
  for (const auto& r : allRuleInfos()) {
    EXPECT_TRUE(std::regex_match(std::string(r.id), std::regex("[a-z]+(-[a-z]+)*"))) << r.id;
    // Every check has a demo named after it; compile-error reports the compiler's own errors.
    if (r.id == "compile-error") EXPECT_EQ(r.demo, "");
    else EXPECT_EQ(r.demo, r.id) << "demo name is the rule id";
    const EmbeddedDoc* doc = findRuleDoc(r.id);
    ASSERT_NE(doc, nullptr) << "docs/rules/" << r.id << ".md missing";
    std::string md(doc->markdown);
    for (const char* section : {"## What it does", "## Why is this bad?", "## Example", "## Use instead",
                                "## Measured impact", "## Limits"})
      EXPECT_NE(md.find(section), std::string::npos) << r.id << " lacks " << section;
    EXPECT_TRUE(fs::exists(std::string(GPUOPT_SOURCE_DIR) + "/docs/rules/" + std::string(r.id) + ".md"));
  }
}

// ---- output formats ---------------------------------------------------------------------------
namespace {
std::vector<FileResult> sampleResults(const std::string& dir) {
  FileResult r;
  r.file = dir + "/src/k.cu";
  Diagnostic d = diag("bank-conflict", 12, r.file);
  d.severity = Severity::Warning;
  d.notes.push_back({{{r.file, 3, 5}, 3, 20}, "declared here"});
  d.fixHint = "pad it";
  FixIt fx;
  fx.span = {{r.file, 3, 22}, 3, 23};
  fx.replacement = "32 + 1";
  d.fixIts.push_back(fx);
  d.demo = "bank-conflict";
  r.diags.push_back(d);
  FileResult bad;
  bad.file = dir + "/src/broken.cu";
  bad.errors.push_back({bad.file, "could not be parsed as CUDA"});
  return {r, bad};
}
}  // namespace

TEST(Output, SarifHasRulesResultsAndRelativePaths) {
  OutputContext oc;
  oc.cwd = "/work/proj";
  oc.toolVersion = "9.9";
  oc.docsBaseUri = "https://example.org/docs/rules/";
  std::ostringstream os;
  writeSarif(os, sampleResults("/work/proj"), oc);
  auto j = nlohmann::json::parse(os.str());
  EXPECT_EQ(j["version"], "2.1.0");
  EXPECT_TRUE(j.contains("$schema"));
  auto& run = j["runs"][0];
  auto& rules = run["tool"]["driver"]["rules"];
  ASSERT_EQ(rules.size(), allRuleInfos().size());
  for (auto& r : rules) {
    for (const char* key : {"id", "name", "shortDescription", "fullDescription", "help", "helpUri"})
      EXPECT_TRUE(r.contains(key)) << key;
    EXPECT_EQ(r["helpUri"], "https://example.org/docs/rules/" + r["id"].get<std::string>() + ".md");
    EXPECT_FALSE(r["fullDescription"]["text"].get<std::string>().empty());
  }
  ASSERT_EQ(run["results"].size(), 1u);
  auto& res = run["results"][0];
  EXPECT_EQ(res["ruleId"], "bank-conflict");
  EXPECT_EQ(res["level"], "warning");
  EXPECT_EQ(rules[res["ruleIndex"].get<int>()]["id"], "bank-conflict");
  auto& loc = res["locations"][0]["physicalLocation"];
  EXPECT_EQ(loc["artifactLocation"]["uri"], "src/k.cu");
  EXPECT_EQ(loc["region"]["startLine"], 12);
  EXPECT_EQ(loc["region"]["startColumn"], 3);
  EXPECT_EQ(loc["region"]["endLine"], 12);
  EXPECT_EQ(loc["region"]["endColumn"], 10);  // exclusive
  EXPECT_EQ(res["relatedLocations"][0]["message"]["text"], "declared here");
  EXPECT_EQ(res["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"], "32 + 1");
  EXPECT_EQ(run["invocations"][0]["executionSuccessful"], false);
  EXPECT_EQ(run["invocations"][0]["toolExecutionNotifications"][0]["level"], "error");
}

TEST(Output, SarifWithNoFindingsIsValidShape) {
  OutputContext oc;
  oc.cwd = "/w";
  std::ostringstream os;
  writeSarif(os, {}, oc);
  auto j = nlohmann::json::parse(os.str());
  EXPECT_TRUE(j["runs"][0]["results"].empty());
  EXPECT_EQ(j["runs"][0]["invocations"][0]["executionSuccessful"], true);
}

TEST(Output, JsonCarriesEverything) {
  OutputContext oc;
  oc.cwd = "/work/proj";
  std::ostringstream os;
  writeJson(os, sampleResults("/work/proj"), oc);
  auto j = nlohmann::json::parse(os.str());
  auto& f = j["files"][0]["findings"][0];
  EXPECT_EQ(j["files"][0]["file"], "src/k.cu");
  EXPECT_EQ(f["ruleId"], "bank-conflict");
  EXPECT_EQ(f["location"]["line"], 12);
  EXPECT_EQ(f["notes"][0]["message"], "declared here");
  EXPECT_EQ(f["fix"], "pad it");
  EXPECT_EQ(f["demo"], "bank-conflict");
  EXPECT_EQ(j["files"][1]["errors"][0]["message"], "could not be parsed as CUDA");
}

TEST(Output, GithubEscaping) {
  EXPECT_EQ(githubEscapeData("50% a\r\nb"), "50%25 a%0D%0Ab");
  EXPECT_EQ(githubEscapeProperty("a:b,c%"), "a%3Ab%2Cc%25");
  OutputContext oc;
  oc.cwd = "/work/proj";
  std::ostringstream os;
  auto results = sampleResults("/work/proj");
  results[0].diags[0].message = "100% bad, really: yes";
  writeGithub(os, results, oc);
  std::string s = os.str();
  EXPECT_NE(s.find("::warning file=src/k.cu,line=12,col=3,endLine=12,endColumn=9,title=gpuopt-lint bank-conflict::100%25 bad, really: yes"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("::error file=src/broken.cu"), std::string::npos);
}

TEST(Output, TextIsClangStyleWithCaret) {
  std::string dir = fs::path(tmp("text/x")).parent_path().string();
  std::string file = dir + "/k.cu";
  write(file, "line one\n  float x = tile[ty][tx];\n");
  FileResult r;
  r.file = file;
  Diagnostic d = diag("bank-conflict", 2, file);
  d.span.begin.col = 13;
  d.span.endCol = 24;
  d.notes.push_back({{{file, 1, 1}, 1, 4}, "a note"});
  d.fixHint = "pad the tile";
  r.diags.push_back(d);
  OutputContext oc;
  SourceCache sc;
  std::ostringstream os;
  writeText(os, {r}, oc, sc);
  std::string s = os.str();
  EXPECT_NE(s.find(file + ":2:13: warning: msg for bank-conflict [bank-conflict]"), std::string::npos) << s;
  EXPECT_NE(s.find("    2 |   float x = tile[ty][tx];"), std::string::npos) << s;
  EXPECT_NE(s.find("      |             ^~~~~~~~~~~"), std::string::npos) << s;
  EXPECT_NE(s.find(file + ":1:1: note: a note"), std::string::npos);
  EXPECT_NE(s.find("fix: pad the tile"), std::string::npos);
  EXPECT_EQ(s.find("\033["), std::string::npos) << "no color unless asked";
  oc.color = true;
  std::ostringstream os2;
  writeText(os2, {r}, oc, sc);
  EXPECT_NE(os2.str().find("\033["), std::string::npos);
}

// ---- command line -----------------------------------------------------------------------------
TEST(Cli, ParsesOptionsAndRejectsBadOnes) {
  CliOptions o;
  std::string err;
  ASSERT_TRUE(parseCommandLine({"a.cu", "--format=sarif", "--rules=bank-*", "--block-dim", "16,16", "-j", "3", "b.cu",
                                "--", "-DX=1"},
                               o, err))
      << err;
  EXPECT_EQ(o.files, (std::vector<std::string>{"a.cu", "b.cu"}));
  EXPECT_EQ(o.format, OutputFormat::Sarif);
  EXPECT_EQ(o.blockDim[0], 16u);
  EXPECT_EQ(o.blockDim[1], 16u);
  EXPECT_EQ(o.jobs, 3u);
  EXPECT_EQ(o.frontend.extraArgs, (std::vector<std::string>{"-DX=1"}));
  auto bad = [](std::vector<std::string> args, const std::string& expect) {
    CliOptions x;
    std::string e;
    EXPECT_FALSE(parseCommandLine(args, x, e));
    EXPECT_NE(e.find(expect), std::string::npos) << e;
  };
  bad({"--bogus"}, "unknown option '--bogus'");
  bad({"--format", "xml"}, "unknown --format");
  bad({"--rules=no-such-rule"}, "unknown rule 'no-such-rule'");
  bad({"--block-dim", "0"}, "--block-dim");
  bad({"--block-dim", "64,64"}, "more than 1024");
  // GPUVerify's test suite runs kernels with --blockDim=2048: not "positive integers" (it is one).
  bad({"--block-dim", "2048"}, "at most 1024 threads (got 2048");
  bad({"--color", "sometimes"}, "--color");
  bad({"--dry-run"}, "--dry-run goes with --fix");
  bad({"-p"}, "needs a value");
}

// ---- configuration ----------------------------------------------------------------------------
TEST(Config, NearestFileWinsAndCommandLineWinsOverIt) {
  std::string root = fs::path(tmp("cfg/x")).parent_path().string();
  write(root + "/.gpuopt-lint.yaml",
        "rules: ['*', '-divergent-branch']\nblock-dim: [16, 16]\nseverity: {bank-conflict: error}\nfail-on: warning\n"
        "options: {bank-conflict: {min-ways: 4}}\ncompiler-args: ['-DA=1']\nexclude: ['gen/*']\n");
  write(root + "/sub/.gpuopt-lint.yaml", "rules: ['bank-conflict']\n");
  CliOptions cli;
  std::string err;
  ResolvedOptions r;
  ASSERT_TRUE(resolveOptions(cli, root + "/k.cu", r, err)) << err;
  EXPECT_EQ(r.analysis.enabledRules.count("divergent-branch"), 0u);
  EXPECT_EQ(r.analysis.enabledRules.count("bank-conflict"), 1u);
  EXPECT_EQ(r.analysis.model.blockX, 16u);
  EXPECT_EQ(r.analysis.model.blockY, 16u);
  EXPECT_EQ(r.severities["bank-conflict"], Severity::Error);
  EXPECT_EQ(r.failOn, Severity::Warning);
  EXPECT_EQ(r.analysis.model.ruleOption("bank-conflict", "min-ways", 2), 4);
  EXPECT_EQ(r.analysis.frontend.extraArgs, (std::vector<std::string>{"-DA=1"}));
  EXPECT_FALSE(r.excluded);
  ASSERT_TRUE(resolveOptions(cli, root + "/gen/x.cu", r, err));
  EXPECT_TRUE(r.excluded);
  ASSERT_TRUE(resolveOptions(cli, root + "/sub/k.cu", r, err));  // nearest wins
  EXPECT_EQ(r.analysis.enabledRules, (std::set<std::string>{"bank-conflict"}));
  ASSERT_TRUE(parseCommandLine({"--rules=divergent-branch", "--block-dim=64"}, cli, err));
  ASSERT_TRUE(resolveOptions(cli, root + "/k.cu", r, err));
  EXPECT_EQ(r.analysis.enabledRules, (std::set<std::string>{"divergent-branch"}));
  EXPECT_EQ(r.analysis.model.blockX, 64u);
  EXPECT_TRUE(r.analysis.model.blockDimGiven);
  std::string dump = dumpConfig(r);
  EXPECT_NE(dump.find("block-dim: [64, 1, 1]"), std::string::npos) << dump;
}

TEST(Config, BlockDimPerKernel) {
  CliOptions cli;
  std::string err;
  ASSERT_TRUE(parseCommandLine({"--block-dim", "softmax=32,8", "--block-dim", "ns::scan=128", "--block-dim", "64"}, cli, err)) << err;
  ASSERT_EQ(cli.kernelBlockDims.size(), 2u);
  EXPECT_EQ(cli.kernelBlockDims["softmax"], (std::array<unsigned, 3>{32, 8, 1}));
  EXPECT_EQ(cli.kernelBlockDims["ns::scan"], (std::array<unsigned, 3>{128, 1, 1}));
  EXPECT_EQ(cli.blockDim[0], 64u);
  CliOptions bad, none;
  EXPECT_FALSE(parseCommandLine({"--block-dim", "=32"}, bad, err) || err.find("[KERNEL=]X") == std::string::npos) << err;
  EXPECT_FALSE(parseCommandLine({"--block-dim", "k=64,64"}, bad, err) || err.find("more than 1024") == std::string::npos) << err;
  // In the configuration: a map per kernel ("*": every kernel); the command line adds to it.
  std::string root = fs::path(tmp("cfgk/x")).parent_path().string();
  write(root + "/.gpuopt-lint.yaml", "block-dim: {softmax: [16, 16], \"*\": [128]}\n");
  ResolvedOptions r;
  ASSERT_TRUE(resolveOptions(none, root + "/k.cu", r, err)) << err;
  EXPECT_EQ(r.analysis.model.kernelBlocks["softmax"], (std::array<unsigned, 3>{16, 16, 1}));
  EXPECT_TRUE(r.analysis.model.blockDimGiven && r.analysis.model.blockX == 128u) << "\"*\" is every other kernel";
  ASSERT_TRUE(resolveOptions(cli, root + "/k.cu", r, err)) << err;
  EXPECT_EQ(r.analysis.model.kernelBlocks["softmax"], (std::array<unsigned, 3>{32, 8, 1})) << "command line wins";
  EXPECT_NE(dumpConfig(r).find("softmax: [32, 8, 1]"), std::string::npos) << dumpConfig(r);
}

TEST(Config, BadFileIsAClearErrorWithItsLine) {
  std::string p = tmp("bad/.gpuopt-lint.yaml");
  write(p, "rules: ['*']\nseverity:\n  bank-conflict: loud\n");
  ResolvedOptions r;
  std::string err;
  EXPECT_FALSE(loadConfigFile(p, r, err));
  EXPECT_NE(err.find(p + ":3:"), std::string::npos) << err;
  EXPECT_NE(err.find("severity must be note, warning or error"), std::string::npos) << err;
  write(p, "rules: [unclosed\n");
  EXPECT_FALSE(loadConfigFile(p, r, err));
  EXPECT_NE(err.find(p + ":"), std::string::npos) << err;
  write(p, "colour: red\n");
  EXPECT_FALSE(loadConfigFile(p, r, err));
  EXPECT_NE(err.find("unknown key 'colour'"), std::string::npos) << err;
  write(p, "rules: ['no-such-rule']\n");
  EXPECT_FALSE(loadConfigFile(p, r, err));
  EXPECT_NE(err.find("unknown rule"), std::string::npos) << err;
}

// ---- fixes --------------------------------------------------------------------------------------
TEST(Fix, AppliesEditsOnceAndAtomically) {
  std::string text = "__shared__ float t[32][32];\nint x;\n";
  Diagnostic d;
  FixIt fx;
  fx.span = {{"f.cu", 1, 24}, 1, 25};
  fx.replacement = "32 + 1";
  d.fixIts = {fx};
  unsigned n = 0;
  EXPECT_EQ(applyFixesToText(text, {d, d}, &n), "__shared__ float t[32][32 + 1];\nint x;\n");
  EXPECT_EQ(n, 1u);
  std::string p = tmp("fix/f.cu");
  write(p, text);
  std::string err;
  std::ostringstream diff;
  ASSERT_TRUE(applyFixes(p, {d}, true, diff, err));
  EXPECT_NE(diff.str().find("+__shared__ float t[32][32 + 1];"), std::string::npos);
  EXPECT_EQ(std::ifstream(p).rdbuf() ? true : false, true);
  {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), text) << "dry run writes nothing";
  }
  ASSERT_TRUE(applyFixes(p, {d}, false, diff, err)) << err;
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "__shared__ float t[32][32 + 1];\nint x;\n");
  for (auto& e : fs::directory_iterator(fs::path(p).parent_path()))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << "temp file left: " << e.path();
}

// ---- front-end helpers --------------------------------------------------------------------------
TEST(Frontend, InputChecks) {
  std::string dir = fs::path(tmp("in/x")).parent_path().string();
  fs::create_directories(dir);
  EXPECT_EQ(checkInputFile(dir + "/missing.cu", 1 << 20).value_or(""), "no such file");
  EXPECT_NE(checkInputFile(dir, 1 << 20).value_or("").find("is a directory"), std::string::npos);
  write(dir + "/a.py", "print(1)\n");
  EXPECT_NE(checkInputFile(dir + "/a.py", 1 << 20).value_or("").find("not a CUDA source file"), std::string::npos);
  {
    std::ofstream b(dir + "/bin.cu", std::ios::binary);
    b << "abc" << '\0' << "def";
  }
  EXPECT_NE(checkInputFile(dir + "/bin.cu", 1 << 20).value_or("").find("binary file"), std::string::npos);
  write(dir + "/big.cu", std::string(2000, 'x'));
  EXPECT_NE(checkInputFile(dir + "/big.cu", 1000).value_or("").find("file too large"), std::string::npos);
  write(dir + "/ok.cuh", "__global__ void k() {}\n");
  EXPECT_FALSE(checkInputFile(dir + "/ok.cuh", 1 << 20).has_value());
}

TEST(Frontend, CudaPathSearchOrderAndDefaults) {
  std::string fake = fs::path(tmp("cuda/include/cuda_runtime.h")).parent_path().parent_path().string();
  write(fake + "/include/cuda_runtime.h", "\n");
  FrontendOptions o;
  o.cudaPath = fake;
  EXPECT_EQ(findCudaPath(o), fake);
  o.noCuda = true;
  EXPECT_EQ(findCudaPath(o), "");
  o = {};
  setenv("CUDA_PATH", fake.c_str(), 1);
  std::string savedPath = getenv("PATH") ? getenv("PATH") : "";
  EXPECT_EQ(findCudaPath(o), fake);
  unsetenv("CUDA_PATH");
  auto pc = buildParseCommand("k.cu", o, "/res", "", {});
  auto has = [&](const std::string& a) { return std::find(pc.args.begin(), pc.args.end(), a) != pc.args.end(); };
  EXPECT_TRUE(pc.bundledCuda);
  EXPECT_TRUE(has("-nocudainc"));
  EXPECT_TRUE(has("--cuda-host-only"));
  EXPECT_TRUE(has("-std=c++17"));
  EXPECT_TRUE(has("--cuda-gpu-arch=sm_90"));
  EXPECT_TRUE(has("-Wno-unknown-cuda-version"));
  pc = buildParseCommand("k.cu", o, "/res", fake, {"-std=c++20"});
  EXPECT_FALSE(pc.bundledCuda);
  EXPECT_TRUE(has("--cuda-device-only"));
  EXPECT_TRUE(has("--cuda-path=" + fake));
  EXPECT_FALSE(has("-std=c++17")) << "the compile database's -std wins";
  EXPECT_EQ(pc.args.back(), "k.cu");
}

TEST(Frontend, ResourceDirIsCheckedWithAClearError) {
  FrontendOptions o;
  o.resourceDir = "/nonexistent/clang";
  std::string err;
  EXPECT_EQ(findResourceDir(o, err), "");
  EXPECT_NE(err.find("__clang_cuda_runtime_wrapper.h"), std::string::npos) << err;
  EXPECT_NE(err.find("--resource-dir"), std::string::npos) << err;
}

TEST(Frontend, LaunchChevronsWrittenWithSpacesAreJoinedInPlace) {
  std::string s = "  k << < grid, block >> > (a, b);\n  x = y << 2;\n  std::vector<std::vector<int>> v;\n";
  std::string before = s;
  EXPECT_TRUE(normalizeLaunchChevrons(s));
  EXPECT_EQ(s.size(), before.size()) << "same length: columns stay";
  EXPECT_EQ(s, "  k <<<  grid, block >>>  (a, b);\n  x = y << 2;\n  std::vector<std::vector<int>> v;\n");
  std::string ok = "k<<<g, b>>>(x); y = a << b; z = a<<<b;";  // nothing to join
  std::string copy = ok;
  EXPECT_FALSE(normalizeLaunchChevrons(ok));
  EXPECT_EQ(ok, copy);
  std::string tabs = "k<<\t<g, b>>\t>(x);";
  EXPECT_TRUE(normalizeLaunchChevrons(tabs));
  EXPECT_EQ(tabs, "k<<<\tg, b>>>\t(x);");
  // An operator's name with template arguments is no launch (kaldi's friend declarations; nvcc and
  // Clang accept them as written), nor is `<< <` without a closing `>>` in the statement.
  std::string friends = "friend std::ostream& operator << <>(std::ostream&, const M<R>&);\n"
                        "friend std::ostream& operator<< <R>(std::ostream&, const M<R>&);\n";
  std::string friendsCopy = friends;
  EXPECT_FALSE(normalizeLaunchChevrons(friends));
  EXPECT_EQ(friends, friendsCopy);
  std::string noClose = "x = a << <b>c;";  // not valid either way, but not a launch to join
  EXPECT_FALSE(normalizeLaunchChevrons(noClose));
}

TEST(Frontend, IncludeScanAndIncluderSearch) {
  auto incs = scanIncludes("#include \"a.cu\"\n  #  include <b.h>\n// #include \"c.h\" is a comment\nint x;\n");
  ASSERT_EQ(incs.size(), 2u);
  EXPECT_EQ(incs[0].spelled, "a.cu");
  EXPECT_FALSE(incs[0].angled);
  EXPECT_EQ(incs[1].spelled, "b.h");
  EXPECT_TRUE(incs[1].angled);
  // proj/main.cu includes kernels/wrapper.cu, which includes kernels/kernel.cu; other.cu includes
  // nothing. The outermost includer comes first.
  std::string d = fs::path(tmp("inc/x")).parent_path().string() + "/proj";
  fs::remove_all(d);
  fs::create_directories(d + "/kernels");
  write(d + "/kernels/kernel.cu", "__global__ void k() {}\n");
  write(d + "/kernels/wrapper.cu", "#include \"kernel.cu\"\nvoid run() {}\n");
  write(d + "/main.cu", "#include \"kernels/wrapper.cu\"\nint main() {}\n");
  write(d + "/other.cu", "int f();\n");
  auto found = findIncluders(d + "/kernels/kernel.cu", {}, {});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(fs::path(found[0]).filename(), "main.cu");
  EXPECT_EQ(fs::path(found[1]).filename(), "wrapper.cu");
  EXPECT_TRUE(findIncluders(d + "/other.cu", {}, {}).empty());
}

TEST(Frontend, ProjectLayoutFoldersUpToTheRepositoryRoot) {
  std::string root = fs::path(tmp("layout/x")).parent_path().string() + "/repo";
  fs::remove_all(root);
  fs::create_directories(root + "/.git");
  fs::create_directories(root + "/common");
  fs::create_directories(root + "/bench/include");
  fs::create_directories(root + "/bench/src");
  write(root + "/bench/src/k.cu", "\n");
  fs::create_directories(fs::path(root).parent_path() / "common");  // above the root: not used
  EXPECT_EQ(repositoryRoot(root + "/bench/src/k.cu"), root);
  auto dirs = projectLayoutIncludeDirs(root + "/bench/src/k.cu");
  // The repository root itself comes last (`#include "kernels/common.cuh"` written from the root).
  std::vector<std::string> want = {root + "/bench/src", root + "/bench/include", root + "/common", root};
  EXPECT_EQ(dirs, want);
}

// ---- grouping and fingerprints ----------------------------------------------------------------
#include "analyzer/report/grouping.h"

TEST(Grouping, RepeatsOfOnePatternInOneKernelFoldIntoOneFinding) {
  auto diag = [](unsigned line, std::string msg, std::string fn) {
    Diagnostic d;
    d.ruleId = "uncoalesced-access";
    d.span.begin = {"k.cu", line, 3};
    d.span.endLine = line;
    d.span.endCol = 9;
    d.message = std::move(msg);
    d.function = std::move(fn);
    return d;
  };
  std::vector<Diagnostic> v = {
      diag(10, "uncoalesced global load 'a[i * 32]': 32 sectors for 4 useful", "k"),
      diag(11, "uncoalesced global load 'a[i * 32 + 1]': 32 sectors for 4 useful (at s = 2)", "k"),
      diag(12, "uncoalesced global load 'b[i * 32]': 32 sectors for 4 useful", "k"),
      diag(13, "uncoalesced global load 'a[i * 2]': 8 sectors for 4 useful", "k"),
      diag(14, "uncoalesced global load 'a[i * 32]': 32 sectors for 4 useful", "other"),
      diag(15, "uncoalesced global load 'a[i * 32]': 32 sectors for 4 useful", ""),
      diag(16, "uncoalesced global load 'a[i * 32]': 32 sectors for 4 useful", ""),
  };
  groupRepeats(v);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].message,
            "uncoalesced global load 'a[i * 32]': 32 sectors for 4 useful; and 2 more like it in 'k' (lines 11, 12)");
  ASSERT_EQ(v[0].related.size(), 2u);
  EXPECT_EQ(v[0].related[1].begin.line, 12u);
  EXPECT_EQ(v[1].span.begin.line, 13u) << "another pattern (8 sectors) stays";
  EXPECT_EQ(v[2].span.begin.line, 14u) << "another kernel stays";
  EXPECT_EQ(v[3].span.begin.line, 15u) << "findings outside a kernel are not grouped";
  EXPECT_EQ(v[4].span.begin.line, 16u);
}

TEST(Grouping, FingerprintsSurviveMovedLinesAndTellRepeatsApart) {
  std::string dir = fs::path(tmp("fp/x")).parent_path().string();
  fs::create_directories(dir);
  write(dir + "/a.cu", "x\n  a[i * 32] = 0;\n  a[i * 32] = 0;\n");
  write(dir + "/b.cu", "x\n\n\n\n  a[i  *  32] = 0;\n  a[i * 32] = 0;\n");
  auto make = [&](const std::string& f, unsigned line) {
    Diagnostic d;
    d.ruleId = "uncoalesced-access";
    d.function = "k";
    d.span.begin = {dir + "/" + f, line, 3};
    d.span.endLine = line;
    d.span.endCol = 11;
    return d;
  };
  SourceCache sc;
  std::vector<Diagnostic> a = {make("a.cu", 2), make("a.cu", 3)};
  std::vector<Diagnostic> b = {make("b.cu", 5), make("b.cu", 6)};
  b[0].span.endCol = 14;  // the same expression, written with more blanks
  assignFingerprints(a, sc);
  assignFingerprints(b, sc);
  EXPECT_EQ(a[0].fingerprint, b[0].fingerprint) << "moved four lines down, blanks changed";
  EXPECT_EQ(a[1].fingerprint, b[1].fingerprint);
  EXPECT_NE(a[0].fingerprint, a[1].fingerprint) << "the second of two identical lines is another alert";
  EXPECT_EQ(a[0].fingerprint.size(), 16u);
}

// Every option a rule reads is declared in its RuleInfo (so the configuration accepts it and
// rejects misspellings) and named in its doc.
TEST(RuleOptions, DeclaredReadAndDocumented) {
  std::regex read(R"re(rc\.option\(kInfo, "([a-z-]+)")re");
  for (const auto& info : gpuopt::allRuleInfos()) {
    std::string id(info.id), file = id;
    std::replace(file.begin(), file.end(), '-', '_');
    std::ifstream src(std::string(GPUOPT_SOURCE_DIR) + "/rules/" + file + ".cpp");
    std::stringstream ss;
    ss << src.rdbuf();
    std::string code = ss.str();
    for (auto it = std::sregex_iterator(code.begin(), code.end(), read); it != std::sregex_iterator(); ++it)
      EXPECT_TRUE(gpuopt::ruleHasOption(info, (*it)[1].str())) << id << " reads undeclared option " << (*it)[1].str();
    std::ifstream docIn(std::string(GPUOPT_SOURCE_DIR) + "/docs/rules/" + id + ".md");
    std::stringstream doc;
    doc << docIn.rdbuf();
    std::stringstream names{std::string(info.options)};
    for (std::string name; names >> name;)
      EXPECT_NE(doc.str().find("`" + name), std::string::npos) << "docs/rules/" << id << ".md does not name option " << name;
  }
  EXPECT_FALSE(gpuopt::ruleHasOption(*gpuopt::findRuleInfo("bank-conflict"), "min-way"));
  EXPECT_TRUE(gpuopt::ruleHasOption(*gpuopt::findRuleInfo("bank-conflict"), "min-ways"));
}
