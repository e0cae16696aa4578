// `gpuopt-lint profile` per SASS instruction (analyzer/profile/match.*, join.cpp, measured_only.cpp)
// against exports of our own programs recorded on an H100 (tests/data/ncu/programs/, README there).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "analyzer/profile/match.h"
#include "analyzer/profile/profile.h"
#include "analyzer/report/output.h"

using namespace gpuopt;
using namespace gpuopt::profile;

namespace {
const std::string kData = std::string(GPUOPT_SOURCE_DIR) + "/tests/data/ncu/";
const std::string kPrograms = kData + "programs/";

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

// Joins one finding into the export `name` (file tests/data/ncu/programs/<program>.cu).
Measurement judge(const std::string& name, const std::string& program, unsigned line, const std::string& kernel,
                  const std::string& rule, std::map<std::string, double> predicted) {
  Profile p = load(name);
  std::vector<FileResult> results(1);
  results[0].file = kPrograms + program + ".cu";
  results[0].diags.push_back(finding(rule, results[0].file, line, kernel, std::move(predicted)));
  joinProfile(p, results);
  for (const auto& d : results[0].diags)
    if (d.ruleId == rule && d.span.begin.line == line && d.measured) return *d.measured;
  ADD_FAILURE() << "no measurement";
  return {};
}

// An uncoalesced-access prediction with the line inventory the rule adds.
std::map<std::string, double> global(double sectors, double useful, int lineCount, unsigned width = 4, bool store = false) {
  return {{"sectors", sectors}, {"usefulSectors", useful}, {"store", store ? 1 : 0}, {"random", 0},
          {"width", width},     {"lineCount", lineCount},  {"lineCountSameWidth", lineCount}};
}
}  // namespace

TEST(ProfileImport, LaunchesOfOneKernelAreOneKernel) {
  // stepOnce ran 25 times, 16 of them profiled (-c 20): one kernel, its counters summed, not 16.
  Profile p = load("launches");
  EXPECT_EQ(p.launches, 20u);
  EXPECT_EQ(p.launchLimit, 20u);  // gpuopt-profile.json
  unsigned stepKernels = 0;
  for (const auto& k : p.kernels) stepKernels += k.name == "stepOnce";
  EXPECT_EQ(stepKernels, 1u);
  const Kernel* k = kernel(p, "stepOnce");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->launches, 16u);
  unsigned line38 = 0;
  for (const auto& l : k->lines)
    if (l.line == 38) {
      ++line38;
      EXPECT_DOUBLE_EQ(l.executed, 16 * 327680.0);
    }
  EXPECT_EQ(line38, 1u);
  // The grid as profiled, per block shape.
  auto grids = gridShapes(p);
  ASSERT_EQ(grids["smoothOnce"].size(), 1u);
  EXPECT_EQ(grids["smoothOnce"][0], (std::array<unsigned, 3>{1, 1, 1}));
  EXPECT_EQ(grids["scaleSmallBlocks"][0], (std::array<unsigned, 3>{65536, 1, 1}));
  EXPECT_EQ(blockShapes(p)["scaleSmallBlocks"][0], (std::array<unsigned, 3>{16, 1, 1}));
}

TEST(ProfileMatch, AMultiAccessLineIsJudgedOnItsOwnLoad) {
  // `tmp[i] += A[i * n + j] * x[j]`: A's loads touch 32 sectors for 4; x[j] (1 sector) comes first
  // in the SASS; the line's average (17 per request) is no access's figure.
  Measurement m = judge("global_lines", "global_lines", 15, "rowTimesVector", "uncoalesced-access", global(32, 4, 3));
  EXPECT_EQ(m.verdict, "confirmed") << m.text;
  EXPECT_DOUBLE_EQ(value(m, "measuredSectorsPerRequest"), 32.0);
  EXPECT_DOUBLE_EQ(value(m, "measuredExcess"), 8.0);
  EXPECT_DOUBLE_EQ(value(m, "instructionsMatched"), 16.0);  // unrolled 16 times
  size_t own = 0;
  for (const auto& in : m.instructions) own += in.own;
  EXPECT_EQ(own, 16u);
  EXPECT_GT(m.instructions.size(), own);  // x's loads listed too, not marked
  // x[j]: one sector for the warp, as the 1 useful sector predicts: a finding claiming 8 for it differs.
  Measurement x = judge("global_lines", "global_lines", 15, "rowTimesVector", "uncoalesced-access", global(8, 1, 3));
  EXPECT_EQ(x.verdict, "differs") << x.text;
  EXPECT_DOUBLE_EQ(value(x, "measuredExcess"), 1.0);
}

TEST(ProfileMatch, StoresCompareByTheSameExcessFactor) {
  // columnStore writes columns: 32 sectors per request for 4, the load is coalesced.
  Measurement m = judge("global_lines", "global_lines", 37, "columnStore", "uncoalesced-access", global(32, 4, 1, 4, true));
  EXPECT_EQ(m.verdict, "confirmed") << m.text;
  EXPECT_DOUBLE_EQ(value(m, "measuredExcess"), 8.0);
  EXPECT_DOUBLE_EQ(value(m, "measuredSectorsPerRequest"), 32.0);
}

TEST(ProfileMatch, TwoLoadsOfOneShapeAreToldApartByElimination) {
  // `y[i] = a * x[i * 8] + y[i]`: both touch 4 useful sectors; x's are 32, y's 4, as predicted for y
  // (no finding): x's finding is confirmed on its instruction.
  Measurement m = judge("global_lines", "global_lines", 30, "stridedAxpy", "uncoalesced-access", global(32, 4, 2));
  EXPECT_EQ(m.verdict, "confirmed") << m.text;
  EXPECT_DOUBLE_EQ(value(m, "measuredExcess"), 8.0);
  // Claiming 4x for it: neither load measures that, so whichever is its own disagrees.
  Measurement wrong = judge("global_lines", "global_lines", 30, "stridedAxpy", "uncoalesced-access", global(16, 4, 2));
  EXPECT_EQ(wrong.verdict, "differs") << wrong.text;
}

TEST(ProfileMatch, WidthsSeparateAccessesOfOneLine) {
  // `v[i].x + v[i].w + float(d[2 * i]) + float(c[i])`: the double load is the only 8-byte one.
  auto pred = global(16, 8, 4, 8);
  pred["lineCountSameWidth"] = 1;
  Measurement m = judge("global_lines", "global_lines", 43, "mixedWidths", "uncoalesced-access", pred);
  EXPECT_EQ(m.verdict, "confirmed") << m.text;
  EXPECT_DOUBLE_EQ(value(m, "measuredExcess"), 2.0);
  EXPECT_DOUBLE_EQ(value(m, "instructionsMatched"), 1.0);
}

TEST(ProfileMatch, UnrolledCopiesAreOneAccess) {
  Measurement m = judge("global_lines", "global_lines", 52, "unrolledStride", "uncoalesced-access", global(16, 4, 1));
  EXPECT_EQ(m.verdict, "confirmed") << m.text;
  EXPECT_DOUBLE_EQ(value(m, "instructionsMatched"), 4.0);
  EXPECT_NE(m.text.find("4 copies"), std::string::npos) << m.text;
}

TEST(ProfileMatch, HoistedAccessesAreNotCompared) {
  // loopInvariant: `in[i]` is loaded once, before the loop, on another line; line 62 keeps only
  // the loads of w (1 sector per request). A finding on in[i] has nothing of its own there.
  Measurement m = judge("global_lines", "global_lines", 62, "loopInvariant", "uncoalesced-access", global(32, 4, 4));
  EXPECT_EQ(m.verdict, "not compared") << m.text;
  EXPECT_NE(m.text.find("register"), std::string::npos) << m.text;
  // rowTimesVectorRestrict keeps tmp[i] in a register: its store ran once per thread, after the loop.
  Measurement s = judge("global_lines", "global_lines", 24, "rowTimesVectorRestrict", "uncoalesced-access",
                        global(8, 4, 1, 4, true));
  EXPECT_EQ(s.verdict, "differs") << s.text;
  EXPECT_NE(s.text.find("out of the loop"), std::string::npos) << s.text;
  // `tmp[i] = 0.0f` compiles to a store only: a load there has no instruction to compare.
  Measurement none = judge("global_lines", "global_lines", 14, "rowTimesVector", "uncoalesced-access", global(8, 4, 1));
  EXPECT_EQ(none.verdict, "not compared") << none.text;
}

TEST(ProfileMatch, SharedLinesWithSeveralAccesses) {
  // transposeTile: the 32-way column read, four unrolled copies.
  std::map<std::string, double> ways32 = {{"ways", 32}, {"store", 0}, {"width", 4}, {"lineCount", 1}, {"lineCountSameWidth", 1}};
  Measurement t = judge("shared_lines", "shared_lines", 47, "transposeTile", "bank-conflict", ways32);
  EXPECT_EQ(t.verdict, "confirmed") << t.text;
  EXPECT_DOUBLE_EQ(value(t, "measuredWays"), 32.0);
  // reduceInterleaved: two loads of sdata, 8-way at s = 4; every iteration is in the counters (3.9).
  std::map<std::string, double> ways8 = {{"ways", 8}, {"store", 0}, {"width", 4}, {"lineCount", 2}, {"lineCountSameWidth", 2}};
  Measurement r = judge("shared_lines", "shared_lines", 32, "reduceInterleaved", "bank-conflict", ways8);
  EXPECT_EQ(r.verdict, "differs") << r.text;
  EXPECT_NEAR(value(r, "measuredWays"), 3.9, 0.05);
  // tileStencil: five loads of s on one line, none conflicting: a 2-way claim differs on all.
  std::map<std::string, double> ways2 = {{"ways", 2}, {"store", 0}, {"width", 4}, {"lineCount", 5}, {"lineCountSameWidth", 5}};
  Measurement s = judge("shared_lines", "shared_lines", 21, "tileStencil", "bank-conflict", ways2);
  EXPECT_EQ(s.verdict, "differs") << s.text;
  EXPECT_DOUBLE_EQ(value(s, "measuredWays"), 1.0);
}

TEST(ProfileMatch, NotExecutedSaysWhyAndHow) {
  // afterTheLoop ran after 25 launches of stepOnce; ncu stopped at 20.
  Measurement m = judge("launches", "launches", 44, "afterTheLoop", "uncoalesced-access", global(32, 4, 1));
  EXPECT_EQ(m.verdict, "not executed in this run");
  EXPECT_NE(m.text.find("launch limit (-c 20)"), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("-k afterTheLoop"), std::string::npos) << m.text;
}

TEST(ProfileMeasuredOnly, OnePerLineAndKernelAndNoneTheLaunchExplains) {
  Profile p = load("launches");
  std::vector<FileResult> results(1);
  results[0].file = kPrograms + "launches.cu";
  joinProfile(p, results);
  std::map<unsigned, int> perLine;
  for (const auto& d : results[0].diags) {
    ASSERT_TRUE(d.measured);
    EXPECT_EQ(d.measured->verdict, "measured only");
    ++perLine[d.span.begin.line];
  }
  for (const auto& [line, n] : perLine) EXPECT_EQ(n, 1) << "line " << line;
  // scaleSmallBlocks' 16-thread blocks run 16 of 32 lanes: the launch says so, not a branch.
  EXPECT_EQ(perLine.count(19), 0u);
  // stepOnce's 16 profiled launches: no finding at all.
  EXPECT_EQ(perLine.count(38), 0u);
  // One lane of the block does the work: its own message.
  const Diagnostic* serial = nullptr;
  const Diagnostic* single = nullptr;
  for (const auto& d : results[0].diags) {
    if (d.span.begin.line == 26) serial = &d;
    if (d.span.begin.line == 33) single = &d;
  }
  ASSERT_TRUE(serial);
  EXPECT_NE(serial->message.find("one lane of each warp does the work"), std::string::npos) << serial->message;
  EXPECT_NE(serial->message.find("parallel loop"), std::string::npos);
  ASSERT_TRUE(single);
  EXPECT_NE(single->message.find("one thread per block"), std::string::npos) << single->message;
}

TEST(ProfileMeasuredOnly, AMatchedFindingCoversOnlyItsOwnInstructions) {
  // stridedAxpy's line: with the x finding matched, y's coalesced load adds nothing; without any
  // finding, the strided load is measured-only.
  Profile p = load("global_lines");
  std::vector<FileResult> bare(1);
  bare[0].file = kPrograms + "global_lines.cu";
  std::vector<FileResult> withFinding = bare;
  joinProfile(p, bare);
  bool measured30 = false;
  for (const auto& d : bare[0].diags) measured30 |= d.ruleId == "measured-uncoalesced" && d.span.begin.line == 30;
  EXPECT_TRUE(measured30);
  withFinding[0].diags.push_back(finding("uncoalesced-access", withFinding[0].file, 30, "stridedAxpy", global(32, 4, 2)));
  joinProfile(p, withFinding);
  for (const auto& d : withFinding[0].diags)
    EXPECT_FALSE(d.ruleId.rfind("measured-", 0) == 0 && d.span.begin.line == 30) << d.message;
}

namespace {
// A global memory instruction as the export gives it: `executed` requests, sectors and the ideal.
Instruction globalInstr(const std::string& address, bool store, double executed, double sectors, double ideal) {
  Instruction in;
  in.address = address;
  in.sass = store ? "STG.E" : "LDG.E";
  in.space = "Global";
  in.op = store ? "Store" : "Load";
  in.width = 4;
  in.executed = executed;
  in.sectors = sectors;
  in.sectorsIdeal = ideal;
  return in;
}

// `s[j * n + k] += d[i * n + j] * d[i * n + k]` unrolled 4x, as nvcc keeps the `+=`'s loaded value
// in a register after the previous iteration's store: per copy two coalesced loads (the d's) and one
// store at a stride of n (32 sectors for 4 useful). 8 loads for the line's 3 static loads.
Line rmwLine() {
  Line l;
  l.file = "rmw.cu";
  l.line = 12;
  for (int c = 0; c < 4; ++c) {
    l.instructions.push_back(globalInstr(fmt::format("0x{:x}", 0x100 + c * 0x40), false, 1000, 4400, 4000));
    l.instructions.push_back(globalInstr(fmt::format("0x{:x}", 0x110 + c * 0x40), false, 1000, 4000, 4000));
    l.instructions.push_back(globalInstr(fmt::format("0x{:x}", 0x120 + c * 0x40), true, 1000, 31500, 4000));
  }
  return l;
}
}  // namespace

TEST(ProfileMatch, ReadModifyWriteWithoutItsLoadIsJudgedOnItsStore) {
  Line l = rmwLine();
  std::vector<const Line*> lines{&l};
  auto pred = global(32, 4, 3);
  pred["storeLineCount"] = 1;
  pred["storeLineCountSameWidth"] = 1;
  MemoryVerdict v = judgeMemoryFinding(lines, pred, false, 0.25, 2.0);
  // Every load disagrees, but 8 loads cannot be 3 accesses' copies each: not "differs" on the loads;
  // its store (the only one on the line) measures 31.5 / 4 = 7.9x, the 8x predicted.
  EXPECT_EQ(v.verdict, "confirmed") << v.text;
  EXPECT_NE(v.text.find("judged on its store"), std::string::npos) << v.text;
  // Its store instructions are the finding's: no measured-only finding repeats it.
  unsigned stores = 0;
  for (const auto* in : v.covered) stores += in->op == "Store";
  EXPECT_EQ(stores, 4u);

  // Without the store inventory (a plain load): the same loads are not compared, never "differs".
  MemoryVerdict plain = judgeMemoryFinding(lines, global(32, 4, 3), false, 0.25, 2.0);
  EXPECT_EQ(plain.verdict, "not compared") << plain.text;
  EXPECT_NE(plain.text.find("not a multiple"), std::string::npos) << plain.text;
  // With 2 static loads the 8 instructions are 4 copies of each: every one disagreeing is a real "differs".
  MemoryVerdict two = judgeMemoryFinding(lines, global(32, 4, 2), false, 0.25, 2.0);
  EXPECT_EQ(two.verdict, "differs") << two.text;
}

TEST(ProfileMatch, AFigureForOneIterationIsNotContradictedByTheAverage) {
  // A shared access whose figure is the 8-way of one iteration; the counters average 3.9-way.
  Line l;
  l.file = "ladder.cu";
  l.line = 29;
  Instruction in;
  in.address = "0x200";
  in.sass = "LDS";
  in.space = "Shared";
  in.op = "Load";
  in.width = 4;
  in.executed = 1000;
  in.sharedWavefronts = 3900;
  in.sharedIdeal = 1000;
  l.instructions.push_back(in);
  std::vector<const Line*> lines{&l};
  std::map<std::string, double> pred{{"ways", 8}, {"store", 0}, {"width", 4}, {"lineCount", 1}, {"lineCountSameWidth", 1}};
  EXPECT_EQ(judgeMemoryFinding(lines, pred, true, 0.25, 2.0).verdict, "differs");
  pred["perIteration"] = 1;
  MemoryVerdict v = judgeMemoryFinding(lines, pred, true, 0.25, 2.0);
  EXPECT_EQ(v.verdict, "not compared") << v.text;
  EXPECT_NE(v.text.find("average every iteration"), std::string::npos) << v.text;
  // More than predicted stays a disagreement, iteration or not.
  l.instructions[0].sharedWavefronts = 16000;
  EXPECT_EQ(judgeMemoryFinding(lines, pred, true, 0.25, 2.0).verdict, "differs");
}
