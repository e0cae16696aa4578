// `gpuopt-lint profile`'s import and join (analyzer/profile/profile.*), against real Nsight Compute exports
// recorded on an H100 (tests/data/ncu/README.md says how). No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer/report/output.h"
#include "analyzer/profile/profile.h"

using namespace gpuopt;
using namespace gpuopt::profile;

namespace {
const std::string kData = std::string(GPUOPT_SOURCE_DIR) + "/tests/data/ncu/";
const std::string kSamples = std::string(GPUOPT_SOURCE_DIR) + "/samples/";

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Profile load(const std::string& name) {
  Profile p;
  std::string err;
  EXPECT_EQ(importExport(kData + name, p, err), 0) << err;
  return p;
}

const Kernel* kernel(const Profile& p, const std::string& name) {
  for (const auto& k : p.kernels)
    if (k.name == name) return &k;
  return nullptr;
}

const Line* line(const Kernel& k, unsigned n) {
  for (const auto& l : k.lines)
    if (l.line == n) return &l;
  return nullptr;
}

Diagnostic finding(const std::string& rule, const std::string& file, unsigned ln, const std::string& kernel,
                   std::map<std::string, double> predicted) {
  Diagnostic d;
  d.ruleId = rule;
  d.span.begin = {file, ln, 5};
  d.span.endLine = ln;
  d.span.endCol = 10;
  d.message = rule + " finding";
  d.function = kernel;
  d.predicted = std::move(predicted);
  return d;
}

double value(const Measurement& m, const std::string& key) {
  for (const auto& [k, v] : m.values)
    if (k == key) return v;
  return -1;
}

const Diagnostic* find(const FileResult& r, const std::string& rule, unsigned ln) {
  for (const auto& d : r.diags)
    if (d.ruleId == rule && d.span.begin.line == ln) return &d;
  return nullptr;
}
}  // namespace

TEST(ProfileImport, BaseNames) {
  EXPECT_EQ(baseName("transposeShared(const float *, float *, int, int)"), "transposeShared");
  EXPECT_EQ(baseName("void transposeUnrolled<(int)32, (int)8>(const float *, float *, int, int)"), "transposeUnrolled");
  EXPECT_EQ(baseName("void ns::k<(bool)1>(int)"), "k");
  EXPECT_EQ(baseName("transposeNaive"), "transposeNaive");
}

TEST(ProfileImport, SourceAndRawPagesOfTheTransposeSample) {
  Profile p = load("transpose");
  ASSERT_EQ(p.kernels.size(), 4u);
  const Kernel* k = kernel(p, "transposeShared");
  ASSERT_TRUE(k);
  EXPECT_GT(k->samples, 0);
  // Launch shapes and durations from the raw page.
  ASSERT_EQ(k->blocks.size(), 1u);
  EXPECT_EQ(k->blocks[0], (std::array<unsigned, 3>{32, 32, 1}));
  EXPECT_EQ(k->launches, 1u);
  EXPECT_GT(k->durationUs, 10);
  EXPECT_LT(k->durationUs, 200);
  const Kernel* u = kernel(p, "transposeUnrolled");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->blocks[0], (std::array<unsigned, 3>{32, 8, 1}));
  // Line 20's shared load: 32 wavefronts per request; ncu lists every instruction twice, kept once.
  const Line* l = line(*k, 20);
  ASSERT_TRUE(l);
  EXPECT_NE(l->file.find("samples/transpose_ladder.cu"), std::string::npos);
  EXPECT_NE(l->source.find("mat[threadIdx.x][threadIdx.y]"), std::string::npos);
  auto lds = std::find_if(l->instructions.begin(), l->instructions.end(),
                          [](const Instruction& in) { return in.space == "Shared" && in.op == "Load"; });
  ASSERT_NE(lds, l->instructions.end());
  EXPECT_EQ(std::count_if(l->instructions.begin(), l->instructions.end(),
                          [&](const Instruction& in) { return in.address == lds->address; }),
            1);
  EXPECT_DOUBLE_EQ(lds->sharedWavefronts / lds->sharedIdeal, 32.0);
  EXPECT_DOUBLE_EQ(lds->sharedWays, 32.0);
  EXPECT_DOUBLE_EQ(l->avgThreads(), 32.0);
  // The naive transpose's strided load: 32 sectors per request for 4 ideal.
  const Line* n = line(*kernel(p, "transposeNaive"), 10);
  ASSERT_TRUE(n);
  auto ldg = std::find_if(n->instructions.begin(), n->instructions.end(),
                          [](const Instruction& in) { return in.space == "Global" && in.op == "Load"; });
  ASSERT_NE(ldg, n->instructions.end());
  EXPECT_DOUBLE_EQ(ldg->sectors / ldg->executed, 32.0);
  EXPECT_DOUBLE_EQ(ldg->sectorsIdeal / ldg->executed, 4.0);
  auto shapes = blockShapes(p);
  EXPECT_EQ(shapes["transposeNaive"].size(), 1u);
}

TEST(ProfileImport, LinesOfSeveralFilesInOneKernel) {
  Profile p = load("reduction");
  const Kernel* k = kernel(p, "reduceShuffle");
  ASSERT_TRUE(k);
  bool header = false, sample = false;
  for (const auto& l : k->lines) {
    header = header || l.file.find("cooperative_groups") != std::string::npos;
    sample = sample || l.file.find("reduction_ladder.cu") != std::string::npos;
  }
  EXPECT_TRUE(header);
  EXPECT_TRUE(sample);
  EXPECT_EQ(std::count_if(p.kernels.begin(), p.kernels.end(), [](const Kernel& x) { return x.name == "reduceShuffle"; }), 1);
}

TEST(ProfileImport, ErrorsNameTheProblem) {
  Profile p;
  std::string err;
  EXPECT_EQ(importExport(kData + "nolineinfo", p, err), kNoLineInfo);
  EXPECT_NE(err.find("-lineinfo"), std::string::npos) << err;
  err.clear();
  Profile q;
  EXPECT_EQ(importExport(kData + "no-such-folder", q, err), 2);
  EXPECT_NE(err.find("no such file or folder"), std::string::npos) << err;
  err.clear();
  Profile r;
  EXPECT_EQ(importExport(kData + "ncu-output", r, err), 2);  // a folder without source.csv / raw.csv
  EXPECT_NE(err.find("source.csv"), std::string::npos) << err;
  Profile s;
  EXPECT_FALSE(importRawCsv("\"a\",\"b\"\n1,2\n", s, err));
  EXPECT_NE(err.find("raw"), std::string::npos);
  // A raw page alone has launches but no lines.
  Profile t;
  err.clear();
  EXPECT_EQ(importExport(kData + "transpose/raw.csv", t, err), 2);
  EXPECT_NE(err.find("source page"), std::string::npos) << err;
  // A source page whose rows come before any function.
  Profile u;
  EXPECT_FALSE(importSourceCsv("\"Line No\",\"Source\"\n\"1\",\"x\"\n", u, err));
}

TEST(ProfileImport, NcuOutcomesAreClassified) {
  // What ncu printed on the H100 for each failure (tests/data/ncu/ncu-output/).
  auto classify = [](const std::string& name, int rc) {
    std::string err;
    int s = classifyNcuRun(slurp(kData + "ncu-output/" + name + ".txt"), rc, "./app", err);
    return std::make_pair(s, err);
  };
  auto [failed, failedMsg] = classify("fails", 3);
  EXPECT_EQ(failed, kCommandFailed);
  EXPECT_NE(failedMsg.find("exit status 3"), std::string::npos) << failedMsg;
  EXPECT_EQ(classify("notfound", 1).first, kCommandNotFound);
  auto [none, noneMsg] = classify("nokernel", 0);
  EXPECT_EQ(none, kNoKernels);
  auto [nomatch, nomatchMsg] = classify("nomatch", 0);
  EXPECT_EQ(nomatch, kNoKernels);
  EXPECT_NE(nomatchMsg.find("kernel filter"), std::string::npos) << nomatchMsg;
  EXPECT_EQ(classify("nolineinfo", 0).first, 0);  // the import reports it, with the source page
  // Not reproducible on the GPU machine (counters are open to all users there): ncu's documented
  // error code.
  std::string err;
  EXPECT_EQ(classifyNcuRun("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                           "Performance Counters on the target device 0.\n",
                           1, "./app", err),
            kNoPermission);
  EXPECT_NE(err.find("NVreg_RestrictProfilingToAdminUsers"), std::string::npos);
}

TEST(ProfileJoin, VerdictsOnFindings) {
  Profile p = load("transpose");
  std::string file = kSamples + "transpose_ladder.cu";
  FileResult r;
  r.file = file;
  r.diags.push_back(finding("bank-conflict", file, 20, "transposeShared", {{"ways", 32}, {"store", 0}}));
  r.diags.push_back(finding("bank-conflict", file, 30, "transposePadded", {{"ways", 8}, {"store", 0}}));  // wrong on purpose
  r.diags.push_back(finding("uncoalesced-access", file, 10, "transposeNaive",
                            {{"sectors", 32}, {"usefulSectors", 4}, {"store", 0}, {"random", 0}}));
  r.diags.push_back(finding("missing-syncthreads", file, 18, "transposeShared", {}));
  r.diags.push_back(finding("bank-conflict", file, 14, "transposeShared", {{"ways", 32}}));  // a declaration: no SASS
  std::vector<FileResult> results = {r};
  joinProfile(p, results);
  const auto& out = results[0];
  const Diagnostic* conflict = find(out, "bank-conflict", 20);
  ASSERT_TRUE(conflict && conflict->measured);
  EXPECT_EQ(conflict->measured->verdict, "confirmed");
  EXPECT_DOUBLE_EQ(value(*conflict->measured, "measuredWays"), 32.0);
  EXPECT_EQ(conflict->measured->kernel, "transposeShared");
  EXPECT_GT(conflict->measured->stallShare, 0.1);
  EXPECT_NE(conflict->measured->text.find("of transposeShared's stall samples"), std::string::npos);
  const Diagnostic* wrong = find(out, "bank-conflict", 30);
  ASSERT_TRUE(wrong && wrong->measured);
  EXPECT_EQ(wrong->measured->verdict, "differs");
  EXPECT_NE(wrong->measured->text.find("1-way measured, 8-way predicted"), std::string::npos) << wrong->measured->text;
  const Diagnostic* strided = find(out, "uncoalesced-access", 10);
  ASSERT_TRUE(strided && strided->measured);
  EXPECT_EQ(strided->measured->verdict, "confirmed");
  EXPECT_DOUBLE_EQ(value(*strided->measured, "measuredSectorsPerRequest"), 32.0);
  const Diagnostic* race = find(out, "missing-syncthreads", 18);
  ASSERT_TRUE(race && race->measured);
  EXPECT_EQ(race->measured->verdict, "executed");
  const Diagnostic* decl = find(out, "bank-conflict", 14);
  ASSERT_TRUE(decl && decl->measured);
  EXPECT_EQ(decl->measured->verdict, "not executed in this run");
  // Ranked by the line's share of its kernel's samples; not executed last.
  for (size_t i = 1; i < out.diags.size(); ++i)
    EXPECT_GE(out.diags[i - 1].measured->stallShare, out.diags[i].measured->stallShare);
  EXPECT_EQ(out.diags.back().measured->verdict, "not executed in this run");
  // The transpose sample has no problem the findings above miss.
  for (const auto& d : out.diags) EXPECT_EQ(d.ruleId.rfind("measured-", 0), std::string::npos) << d.ruleId << " " << d.span.begin.line;
}

TEST(ProfileJoin, AveragesOverLoopIterationsDiffer) {
  // reduce1's `sdata[index] += sdata[index + s]`: 8-way at s = 4, but every iteration (2-way to
  // 16-way, with fewer lanes later) is in the counters: about 3.9 wavefronts per request.
  Profile p = load("reduction");
  std::string file = kSamples + "reduction_ladder.cu";
  std::vector<FileResult> results(1);
  results[0].file = file;
  results[0].diags.push_back(finding("bank-conflict", file, 29, "reduce1", {{"ways", 8}, {"store", 0}}));
  results[0].diags.push_back(finding("divergent-branch", file, 15, "reduce0", {{"lanes", 16}, {"firstLine", 15}, {"lastLine", 15}}));
  joinProfile(p, results);
  const Diagnostic* c = find(results[0], "bank-conflict", 29);
  ASSERT_TRUE(c && c->measured);
  EXPECT_EQ(c->measured->verdict, "differs");
  EXPECT_NEAR(value(*c->measured, "measuredWays"), 3.9, 0.1);
  const Diagnostic* b = find(results[0], "divergent-branch", 15);
  ASSERT_TRUE(b && b->measured);
  EXPECT_EQ(b->measured->verdict, "differs");
  EXPECT_LT(value(*b->measured, "measuredActiveLanes"), 8);
}

TEST(ProfileJoin, MeasuredOnlyFindings) {
  Profile p = load("hidden");
  std::string file = kSamples + "profile/hidden_costs.cu";
  std::vector<FileResult> results(1);
  results[0].file = file;
  std::vector<FileResult> covered = results;
  joinProfile(p, results);
  const auto& r = results[0];
  // sharedByTable: every lane in bank 0 through a table the analysis cannot read.
  const Diagnostic* bank = find(r, "measured-bank-conflict", 35);
  ASSERT_TRUE(bank && bank->measured);
  EXPECT_EQ(bank->measured->verdict, "measured only");
  EXPECT_DOUBLE_EQ(value(*bank->measured, "measuredWays"), 32.0);
  EXPECT_NE(bank->message.find("32-way"), std::string::npos) << bank->message;
  EXPECT_FALSE(bank->fixHint.empty());
  EXPECT_EQ(bank->span.begin.col, 3u);  // the line's first non-blank column
  // stridedByTable: a stride read from memory: 32 sectors per request for 4.
  const Diagnostic* strided = find(r, "measured-uncoalesced", 25);
  ASSERT_TRUE(strided && strided->measured);
  EXPECT_DOUBLE_EQ(value(*strided->measured, "measuredSectorsPerRequest"), 32.0);  // the load (the store is 4 for 4)
  EXPECT_DOUBLE_EQ(value(*strided->measured, "measuredIdealSectorsPerRequest"), 4.0);
  // threshold: half the lanes of each warp in the data-dependent branch's hot loop.
  const Diagnostic* div = find(r, "measured-divergence", 16);
  ASSERT_TRUE(div && div->measured);
  EXPECT_NEAR(value(*div->measured, "measuredActiveLanes"), 16.0, 1.0);
  // Nothing else: cold lines and full warps stay quiet.
  EXPECT_EQ(r.diags.size(), 3u);
  for (const auto& d : r.diags) EXPECT_EQ(d.function.empty(), false);

  // A finding that covers the line replaces the measured-only one.
  covered[0].diags.push_back(finding("uncoalesced-access", file, 25, "stridedByTable",
                                     {{"sectors", 32}, {"usefulSectors", 4}, {"store", 0}, {"random", 0}}));
  joinProfile(p, covered);
  EXPECT_FALSE(find(covered[0], "measured-uncoalesced", 25));
  const Diagnostic* s = find(covered[0], "uncoalesced-access", 25);
  ASSERT_TRUE(s && s->measured);
  EXPECT_EQ(s->measured->verdict, "confirmed");
  EXPECT_DOUBLE_EQ(value(*s->measured, "measuredSectorsPerRequest"), 32.0);
}

TEST(ProfileJoin, FilesOfOtherFoldersAreNotJoined) {
  Profile p = load("transpose");
  std::vector<FileResult> results(1);
  results[0].file = "/elsewhere/other.cu";
  results[0].diags.push_back(finding("bank-conflict", "/elsewhere/other.cu", 20, "k", {{"ways", 32}}));
  joinProfile(p, results);
  EXPECT_FALSE(results[0].diags[0].measured);
}

TEST(ProfileJoin, EveryFormatCarriesTheMeasurement) {
  Profile p = load("transpose");
  std::string file = kSamples + "transpose_ladder.cu";
  std::vector<FileResult> results(1);
  results[0].file = file;
  results[0].diags.push_back(finding("bank-conflict", file, 20, "transposeShared", {{"ways", 32}, {"store", 0}}));
  joinProfile(p, results);
  OutputContext oc;
  oc.cwd = GPUOPT_SOURCE_DIR;
  std::ostringstream js, sa, gh, tx;
  writeJson(js, results, oc);
  // (The naive transpose's strided load, with no finding given here, comes back measured-only.)
  auto j = nlohmann::json::parse(js.str());
  nlohmann::json f;
  for (const auto& x : j["files"][0]["findings"])
    if (x["ruleId"] == "bank-conflict") f = x;
  ASSERT_TRUE(f.is_object());
  EXPECT_EQ(f["measured"]["verdict"], "confirmed");
  EXPECT_EQ(f["measured"]["measuredWays"], 32.0);
  EXPECT_EQ(f["predicted"]["ways"], 32.0);
  writeSarif(sa, results, oc);
  auto s = nlohmann::json::parse(sa.str());
  nlohmann::json props;
  for (const auto& x : s["runs"][0]["results"])
    if (x["ruleId"] == "bank-conflict") props = x["properties"]["measured"];
  EXPECT_EQ(props["verdict"], "confirmed");
  EXPECT_EQ(props["kernel"], "transposeShared");
  EXPECT_GT(props["stallShare"].get<double>(), 0.1);
  writeGithub(gh, results, oc);
  EXPECT_NE(gh.str().find("measured (confirmed)"), std::string::npos);
  SourceCache sc;
  writeText(tx, results, oc, sc);
  EXPECT_NE(tx.str().find("    measured: confirmed: this line: "), std::string::npos) << tx.str();
}

// Issue 28: `profile` shows the static cost beside the measured share of the kernel's global sectors.
TEST(ProfileJoin, StaticCostBesideTheMeasuredSectorShare) {
  Profile p = load("transpose");
  std::string file = kSamples + "transpose_ladder.cu";
  FileResult r;
  r.file = file;
  Diagnostic d = finding("uncoalesced-access", file, 10, "transposeNaive",
                         {{"sectors", 32}, {"usefulSectors", 4}, {"store", 0}, {"random", 0}});
  d.impact = 0.5;
  d.impactText = "~50% of 'transposeNaive''s global traffic";
  r.diags.push_back(d);
  r.diags.push_back(finding("missing-syncthreads", file, 18, "transposeShared", {}));  // no estimate, no sectors
  std::vector<FileResult> results = {r};
  joinProfile(p, results);
  const Diagnostic* strided = find(results[0], "uncoalesced-access", 10);
  ASSERT_TRUE(strided && strided->measured);
  double share = value(*strided->measured, "measuredSectorShare");
  EXPECT_GT(share, 0.0);
  EXPECT_LE(share, 1.0);
  EXPECT_DOUBLE_EQ(value(*strided->measured, "predictedImpact"), 0.5);
  EXPECT_NE(strided->measured->text.find("of its global sectors (static estimate: ~50% of 'transposeNaive''s global traffic)"),
            std::string::npos)
      << strided->measured->text;
  const Diagnostic* race = find(results[0], "missing-syncthreads", 18);
  ASSERT_TRUE(race && race->measured);
  EXPECT_EQ(value(*race->measured, "predictedImpact"), -1) << "no estimate given, none shown";
}
