// Block shapes the code does not give (model/shapes.h): the plausible shapes and the merge of a
// kernel's findings under them (split from test_model.cpp).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "analyzer/model/shapes.h"

using namespace gpuopt;

namespace {
Diagnostic shapeDiag(const std::string& rule, int line, const std::string& text, const std::string& assumption,
                     Severity sev = Severity::Error) {
  Diagnostic d;
  d.ruleId = rule;
  d.severity = sev;
  d.span.begin.file = "k.cu";
  d.span.begin.line = line;
  d.message = text + assumption;
  if (text.find("-way") != std::string::npos) d.predicted["ways"] = std::stod(text);  // "8-way ..."
  return d;
}
ShapeRun shapeRun(unsigned x, unsigned y, std::vector<std::pair<std::string, std::pair<int, std::string>>> found) {
  ShapeRun r;
  r.shape = {x, y, 1};
  r.assumption = fmt::format("; assuming a {} block", r.shape.name());
  for (auto& [rule, where] : found) r.diags.push_back(shapeDiag(rule, where.first, where.second, r.assumption));
  return r;
}
}  // namespace

TEST(Shapes, PlausibleShapesRespectTheBoundAndTheAxesRead) {
  ShapeFacts oneD;
  auto s = plausibleShapes(oneD);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name(), "256-thread");
  EXPECT_EQ(s[1].name(), "64-thread");
  ShapeFacts bounded;
  bounded.maxThreads = 128;
  bounded.usesAxis[1] = true;  // __launch_bounds__(128) with threadIdx.y read: never a 128x1 block
  s = plausibleShapes(bounded);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name(), "32x4");
  EXPECT_EQ(s[1].name(), "16x8");
  EXPECT_EQ(guessedAxes(bounded), 2u);
  ShapeFacts rows;  // a launch gives x = 32 only
  rows.known[0] = 32;
  rows.usesAxis[1] = true;
  s = plausibleShapes(rows);
  EXPECT_EQ(guessedAxes(rows), 1u);
  ASSERT_FALSE(s.empty());
  for (const auto& g : s) EXPECT_EQ(g.x, 32u) << g.name();
}

// No error-severity finding depends on a guessed shape (issue 26): a race found with every shape is
// possible, one only some shapes give is possible naming them (one guessed extent) or dropped
// (several), and a conflict whose figures change with the shape says each shape's figures.
TEST(Shapes, FindingsThatDependOnTheGuessAreQualifiedOrDropped) {
  auto a = shapeRun(256, 1, {{"missing-syncthreads", {5, "race on s"}},
                             {"missing-syncthreads", {9, "race on t"}},
                             {"bank-conflict", {12, "8-way bank conflict"}},
                             {"bank-conflict", {14, "2-way bank conflict"}},
                             {"uncoalesced-access", {20, "a warp touches 32 sectors"}}});
  auto b = shapeRun(64, 1, {{"missing-syncthreads", {5, "race on s"}},
                            {"bank-conflict", {12, "2-way bank conflict"}},
                            {"bank-conflict", {14, "2-way bank conflict"}}});
  auto merged = mergeShapeRuns({a, b}, 1, "no launch of 'k' in this file", "k");
  std::map<int, const Diagnostic*> at;
  for (const auto& d : merged) at[d.span.begin.line] = &d;
  ASSERT_TRUE(at.count(5));
  EXPECT_EQ(at[5]->severity, Severity::Warning);
  EXPECT_EQ(at[5]->message.rfind("possible race on s", 0), 0u) << at[5]->message;
  EXPECT_NE(at[5]->message.find("the same with every shape tried"), std::string::npos) << at[5]->message;
  EXPECT_NE(at[5]->message.find("--block-dim k=X,Y,Z"), std::string::npos) << at[5]->message;
  ASSERT_TRUE(at.count(9));
  EXPECT_EQ(at[9]->severity, Severity::Warning);
  EXPECT_NE(at[9]->message.find("found with a 256-thread block, not with a 64-thread block"), std::string::npos);
  ASSERT_TRUE(at.count(12)) << "found with every shape";
  EXPECT_NE(at[12]->message.find("the count depends on it (8-way with a 256-thread block, 2-way with a 64-thread block)"),
            std::string::npos) << at[12]->message;
  ASSERT_TRUE(at.count(14));
  EXPECT_EQ(at[14]->message.find("assuming"), std::string::npos) << "the run's own assumption is replaced";
  EXPECT_FALSE(at.count(20)) << "only some shapes give it";
  // Two guessed extents: a race only some shapes give is not said at all.
  auto c = shapeRun(32, 8, {{"missing-syncthreads", {9, "race on t"}}});
  auto d = shapeRun(16, 16, {});
  EXPECT_TRUE(mergeShapeRuns({c, d}, 2, "why", "k").empty());
}

// A count the guessed shape decides is never the headline's alone: the headline says the range
// over the shapes tried (issue 26; LeetCUDA's transpose, fifth stop check: 32 sectors for 4 useful
// with 32x8, 16 with 16x16, and the launch it really gets is 16x16).
TEST(Shapes, HeadlineCountIsTheRangeOverTheShapesTried) {
  auto run = [](unsigned x, unsigned y, double sectors, double ways) {
    ShapeRun r;
    r.shape = {x, y, 1};
    r.assumption = fmt::format("; assuming a {} block", r.shape.name());
    Diagnostic u;
    u.ruleId = "uncoalesced-access";
    u.severity = Severity::Warning;
    u.span.begin.file = "k.cu";
    u.span.begin.line = 3;
    u.message = fmt::format("uncoalesced global load 'x[c * n + r]': a warp touches {} sectors for 4 useful ({:.1f}% "
                            "efficiency); adjacent threads are 'n' elements apart{} [measured on H100: ...]",
                            sectors, 400.0 / sectors, r.assumption);
    u.predicted = {{"sectors", sectors}, {"usefulSectors", 4}};
    Diagnostic b;
    b.ruleId = "bank-conflict";
    b.severity = Severity::Warning;
    b.span.begin.file = "k.cu";
    b.span.begin.line = 7;
    b.message = fmt::format("{}-way bank conflict on shared load 't[r][c]': lanes 0, 1 of a warp hit bank 0 at {} "
                            "different addresses, so the access is replayed {} times{}",
                            ways, ways, ways, r.assumption);
    b.predicted = {{"ways", ways}};
    r.diags = {u, b};
    return r;
  };
  auto merged = mergeShapeRuns({run(32, 8, 32, 16), run(16, 16, 16, 8)}, 2, "no launch of 't' in this file", "t");
  ASSERT_EQ(merged.size(), 2u);
  const Diagnostic& u = merged[0].ruleId == "uncoalesced-access" ? merged[0] : merged[1];
  const Diagnostic& b = merged[0].ruleId == "bank-conflict" ? merged[0] : merged[1];
  EXPECT_NE(u.message.find("a warp touches 16 to 32 sectors for 4 useful (12.5 to 25.0% efficiency, by block shape)"),
            std::string::npos) << u.message;
  EXPECT_NE(u.message.find("the count depends on it (32 sectors for 4 useful with a 32x8 block, 16 sectors for 4 useful "
                           "with a 16x16 block)"),
            std::string::npos) << u.message;
  EXPECT_EQ(b.message.rfind("8- to 16-way bank conflict", 0), 0u) << b.message;
  EXPECT_NE(b.message.find("replayed 8 to 16 times"), std::string::npos) << b.message;
  // The same count with every shape: said as it is.
  auto same = mergeShapeRuns({run(32, 8, 32, 8), run(16, 16, 32, 8)}, 2, "why", "t");
  for (const auto& d : same) EXPECT_EQ(d.message.find(" to "), std::string::npos) << d.message;
}
