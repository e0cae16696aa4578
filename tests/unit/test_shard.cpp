// Large projects in parts: --shard I/N (analyzer/app/shard.*) and merge-sarif (analyzer/app/merge_sarif.*).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "analyzer/app/merge_sarif.h"
#include "analyzer/app/shard.h"
#include "test_util.h"

using namespace gpuopt;
using namespace gpuopt::test;
using json = nlohmann::json;

namespace {
const std::string kSrc = GPUOPT_SOURCE_DIR;

// (rule, file, line) of every result of a SARIF log's runs.
std::multiset<std::string> places(const json& log) {
  std::multiset<std::string> out;
  for (const auto& run : log["runs"])
    for (const auto& r : run["results"]) {
      const auto& pl = r["locations"][0]["physicalLocation"];
      out.insert(r["ruleId"].get<std::string>() + " " + pl["artifactLocation"]["uri"].get<std::string>() + ":" +
                 std::to_string(pl["region"]["startLine"].get<int>()));
    }
  return out;
}
}  // namespace

TEST(Shard, ParsesIOfN) {
  Shard s;
  std::string err;
  EXPECT_TRUE(parseShard("2/4", s, err));
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 4u);
  for (const char* bad : {"0/4", "5/4", "1/0", "2", "a/b", "1/2/3", "/2", "1/"}) {
    EXPECT_FALSE(parseShard(bad, s, err)) << bad;
    EXPECT_NE(err.find("--shard"), std::string::npos) << err;
  }
}

TEST(Shard, EveryFileIsInExactlyOneShardAndStaysThere) {
  std::vector<std::string> files;
  for (int i = 0; i < 200; ++i) files.push_back("src/kernels/unit" + std::to_string(i) + ".cu");
  std::multiset<std::string> seen;
  size_t smallest = files.size(), largest = 0;
  for (unsigned i = 1; i <= 4; ++i) {
    auto part = selectShard(files, "/proj", {i, 4});
    smallest = std::min(smallest, part.size()), largest = std::max(largest, part.size());
    seen.insert(part.begin(), part.end());
  }
  EXPECT_EQ(seen, std::multiset<std::string>(files.begin(), files.end()));
  EXPECT_GT(smallest, 30u);  // roughly even (50 each expected)
  EXPECT_LT(largest, 70u);
  // A unit's shard depends on its path only: not on the other inputs or their order, and the same
  // relative path under another checkout folder (another CI runner) lands on the same shard.
  std::vector<std::string> fewer(files.begin() + 100, files.end());
  std::reverse(fewer.begin(), fewer.end());
  for (const auto& f : fewer) {
    EXPECT_EQ(shardOf("/proj/" + f, "/proj", 4), shardOf("/other/checkout/" + f, "/other/checkout", 4)) << f;
    auto part = selectShard({"/proj/" + f}, "/proj", {shardOf("/proj/" + f, "/proj", 4), 4});
    EXPECT_EQ(part.size(), 1u);
  }
}

TEST(Shard, ShardedSarifMergesIntoTheWholeRunsReport) {
  std::string d = tempDir("shard");
  std::string all = "--no-config --no-cache --format sarif samples/reduction_ladder.cu samples/stream_upload.cu "
                    "samples/stream_upload_fixed.cu samples/transpose_ladder.cu";
  auto whole = runLint(all, kSrc);
  ASSERT_LE(whole.rc, 1) << whole.err;
  std::vector<std::string> parts;
  for (int i = 1; i <= 3; ++i) {
    auto r = runLint(all + " --shard " + std::to_string(i) + "/3", kSrc);
    ASSERT_LE(r.rc, 1) << r.err;
    parts.push_back(d + "/s" + std::to_string(i) + ".sarif");
    writeFile(parts.back(), r.out);
  }
  auto m = runLint("merge-sarif -o " + d + "/merged.sarif " + parts[0] + " " + parts[1] + " " + parts[2]);
  ASSERT_EQ(m.rc, 0) << m.err;
  json merged = json::parse(readFile(d + "/merged.sarif"));
  json ref = json::parse(whole.out);
  ASSERT_EQ(merged["runs"].size(), 1u);  // one run per tool: one upload, one analysis
  EXPECT_EQ(places(merged), places(ref));
  EXPECT_EQ(merged["runs"][0]["invocations"].size(), 3u);
  // ruleIndex points at the merged rule list.
  const auto& rules = merged["runs"][0]["tool"]["driver"]["rules"];
  for (const auto& r : merged["runs"][0]["results"])
    EXPECT_EQ(rules[r["ruleIndex"].get<int>()]["id"], r["ruleId"]);
  // To standard output, too.
  auto o = runLint("merge-sarif " + parts[0] + " " + parts[1] + " " + parts[2]);
  EXPECT_EQ(o.rc, 0);
  EXPECT_EQ(json::parse(o.out), merged);
}

TEST(Shard, MergeSarifNamesTheBadInput) {
  std::string d = tempDir("shard-bad");
  writeFile(d + "/notjson.sarif", "findings: 3\n");
  writeFile(d + "/old.sarif", R"({"version": "1.0.0", "runs": []})");
  auto r = runLint("merge-sarif " + d + "/notjson.sarif");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("notjson.sarif: not a JSON document"), std::string::npos) << r.err;
  r = runLint("merge-sarif " + d + "/old.sarif");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("old.sarif: not a SARIF 2.1.0 log"), std::string::npos) << r.err;
  r = runLint("merge-sarif " + d + "/missing.sarif");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("missing.sarif: cannot be read"), std::string::npos) << r.err;
  r = runLint("merge-sarif");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no input files"), std::string::npos) << r.err;
}

TEST(Shard, AnEmptyShardIsAnEmptyReportNotAnError) {
  // One input and four shards: three of them have nothing to do and say so, exit 0, valid SARIF.
  unsigned mine = shardOf(kSrc + "/samples/reduction_ladder.cu", kSrc, 4);
  unsigned other = mine % 4 + 1;
  auto r = runLint("--no-config --no-cache --format sarif --shard " + std::to_string(other) + "/4 samples/reduction_ladder.cu", kSrc);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("0 of 1 input"), std::string::npos) << r.err;
  json log = json::parse(r.out);
  EXPECT_EQ(log["runs"][0]["results"].size(), 0u);
  auto mineRun = runLint("--no-config --no-cache --format sarif --shard " + std::to_string(mine) + "/4 samples/reduction_ladder.cu", kSrc);
  EXPECT_GT(json::parse(mineRun.out)["runs"][0]["results"].size(), 0u);
  auto bad = runLint("--shard 3 samples/reduction_ladder.cu", kSrc);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--shard expects I/N"), std::string::npos) << bad.err;
}
