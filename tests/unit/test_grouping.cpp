// analyzer/report/grouping.h without a parse: one finding per place across inputs, compact lists,
// capped messages.
#include <gtest/gtest.h>

#include "analyzer/report/grouping.h"

using namespace gpuopt;

namespace {
Diagnostic at(const std::string& file, unsigned line, const std::string& msg, std::vector<std::string> inst = {}) {
  Diagnostic d;
  d.ruleId = "uncoalesced-access";
  d.span.begin = {file, line, 3};
  d.span.endLine = line;
  d.span.endCol = 9;
  d.message = msg;
  d.function = "k";
  d.instantiations = std::move(inst);
  d.message += instantiationSuffix(d.instantiations);
  return d;
}
}  // namespace

TEST(Grouping, CompactListNamesTheFirstFewThenACount) {
  EXPECT_EQ(compactList({}), "");
  EXPECT_EQ(compactList({"a"}), "'a'");
  EXPECT_EQ(compactList({"a", "b", "c"}), "'a', 'b', 'c'");
  EXPECT_EQ(compactList({"a", "b", "c", "d", "e"}), "'a', 'b', 'c' and 2 more");
  EXPECT_EQ(instantiationSuffix({"k<int>"}), "; in instantiation 'k<int>'");
  EXPECT_EQ(instantiationSuffix({"a", "b", "c", "d"}), "; in instantiations 'a', 'b', 'c' and 1 more");
}

TEST(Grouping, AHeaderPlaceReachedFromSeveralUnitsIsOneFinding) {
  std::vector<FileResult> results(4);
  for (int u = 0; u < 4; ++u) {
    results[u].file = "u" + std::to_string(u) + ".cu";
    // The same header line, each unit with its own instantiation; and one place of the unit's own.
    results[u].diags.push_back(at("/tmp/shared.cuh", 7, "uncoalesced global store 'a[i]'", {"k<T" + std::to_string(u) + ">"}));
    results[u].diags.push_back(at(results[u].file, 2, "uncoalesced global load 'b[i]'"));
  }
  results[2].diags[0].severity = Severity::Error;
  mergeAcrossInputs(results);
  size_t total = 0;
  for (const auto& r : results) total += r.diags.size();
  EXPECT_EQ(total, 5u);  // one header place, four units' own
  const Diagnostic& h = results[0].diags[0];
  EXPECT_EQ(h.units, (std::vector<std::string>{"u0.cu", "u1.cu", "u2.cu", "u3.cu"}));
  EXPECT_EQ(h.instantiations.size(), 4u);
  EXPECT_EQ(h.severity, Severity::Error) << "the most severe of the merged";
  EXPECT_NE(h.message.find("; in instantiations 'k<T0>', 'k<T1>', 'k<T2>' and 1 more"), std::string::npos) << h.message;
  EXPECT_EQ(h.message.find("in instantiation 'k<T0>';"), std::string::npos) << "the old suffix is replaced: " << h.message;
  EXPECT_NE(h.message.find("; reached from 4 translation units ('u0.cu', 'u1.cu', 'u2.cu' and 1 more)"), std::string::npos)
      << h.message;
  EXPECT_TRUE(results[1].diags[0].units.empty()) << "a unit's own place names no units";
  // Merged again (after --fix lints some inputs again): the suffix is said once.
  mergeAcrossInputs(results);
  EXPECT_EQ(results[0].diags[0].message.find("reached from"), results[0].diags[0].message.rfind("reached from"));
}

TEST(Grouping, AFindingOfEveryInstantiationSomewhereDropsTheList) {
  std::vector<FileResult> results(2);
  results[0].file = "a.cu";
  results[1].file = "b.cu";
  results[0].diags.push_back(at("h.cuh", 3, "m", {"k<int>"}));
  results[1].diags.push_back(at("h.cuh", 3, "m"));
  mergeAcrossInputs(results);
  ASSERT_EQ(results[0].diags.size(), 1u);
  EXPECT_TRUE(results[0].diags[0].instantiations.empty());
  EXPECT_EQ(results[0].diags[0].message.find("in instantiation"), std::string::npos) << results[0].diags[0].message;
}

TEST(Grouping, LongMessagesAreCutWithTheFullTextKept) {
  Diagnostic d = at("a.cu", 1, "short");
  capMessage(d);
  EXPECT_EQ(d.message, "short");
  EXPECT_TRUE(d.fullMessage.empty());
  std::string lots = "uncoalesced global load 'x':";
  for (int i = 0; i < 300; ++i) lots += " 'inst" + std::to_string(i) + "',";
  d.message = lots;
  capMessage(d);
  EXPECT_LE(d.message.size(), kMaxMessageBytes);
  EXPECT_EQ(d.fullMessage, lots);
  EXPECT_NE(d.message.find("the full text in JSON and SARIF"), std::string::npos) << d.message;
}

TEST(Grouping, FindingsOfOneRuleOnOneLineAreOneFinding) {
  std::vector<Diagnostic> v;
  v.push_back(at("k.cu", 5, "uncoalesced global load 'b[j * 32]'"));
  v.back().span.begin.col = 20;
  v.back().impact = 0.9;
  v.back().impactText = "~90% of 'k''s global traffic";
  v.back().fixIts.push_back({{{"k.cu", 1, 1}, 1, 3}, "pad"});
  v.back().notes.push_back({{{"k.cu", 4, 1}, 4, 2}, "its own note"});
  v.push_back(at("k.cu", 5, "uncoalesced global store 'a[i * 32]'"));
  v.back().impact = 0.1;
  v.back().fixIts.push_back({{{"k.cu", 1, 1}, 1, 3}, "pad"});  // the same edit: once
  v.push_back(at("k.cu", 6, "uncoalesced global load 'c[i * 32]'"));  // another line: its own
  v.push_back(at("k.cu", 5, "8-way bank conflict"));                  // another rule: its own
  v.back().ruleId = "bank-conflict";
  Diagnostic err = at("k.cu", 5, "error: x");
  err.ruleId = "compile-error";
  v.push_back(err);
  v.push_back(err);  // compile errors are never folded
  foldSameLine(v);
  ASSERT_EQ(v.size(), 5u);
  const Diagnostic& k = v[0];
  EXPECT_EQ(k.message, "uncoalesced global load 'b[j * 32]'; and 1 more on this line")
      << "the highest impact leads (its message, not the first column's)";
  EXPECT_EQ(k.span.begin.col, 20u);
  ASSERT_EQ(k.notes.size(), 2u);
  EXPECT_EQ(k.notes[0].message, "its own note") << "the lead keeps its own notes";
  EXPECT_EQ(k.notes[1].message, "also here: uncoalesced global store 'a[i * 32]'");
  EXPECT_EQ(k.related.size(), 1u);
  EXPECT_DOUBLE_EQ(k.impact, 0.9) << "the highest impact";
  EXPECT_EQ(k.impactText, "~90% of 'k''s global traffic");
  EXPECT_EQ(k.fixIts.size(), 1u);
  EXPECT_EQ(v[1].span.begin.line, 6u);
  // A warning leads a note, whatever their impacts (a 4-way conflict after a 2-way one on a line).
  std::vector<Diagnostic> w;
  w.push_back(at("k.cu", 9, "2-way bank conflict on 's_a'"));
  w.back().severity = Severity::Note;
  w.back().impact = 0.9;
  w.push_back(at("k.cu", 9, "4-way bank conflict on 's_b'"));
  w.back().span.begin.col = 40;
  w.back().severity = Severity::Warning;
  w.back().impact = 0.2;
  foldSameLine(w);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].message, "4-way bank conflict on 's_b'; and 1 more on this line");
  EXPECT_EQ(w[0].severity, Severity::Warning);
  EXPECT_DOUBLE_EQ(w[0].impact, 0.9);
}

TEST(Grouping, AMissingHeaderIsOneFindingForTheRunWhereverItIsIncluded) {
  auto missing = [](const std::string& file, unsigned line, const std::string& header) {
    Diagnostic d;
    d.ruleId = "compile-error";
    d.severity = Severity::Error;
    d.span.begin = {file, line, 10};
    d.span.endLine = line;
    d.span.endCol = 20;
    d.message = "'" + header + "' file not found (the rest of the file was analysed without it)";
    return d;
  };
  std::vector<FileResult> results(3);
  for (int u = 0; u < 3; ++u) {
    results[u].file = "t" + std::to_string(u) + ".cu";
    results[u].diags.push_back(missing("lib/a.h", 21, "vendor.h"));              // the same header line in every unit
    results[u].diags.push_back(missing(results[u].file, 5, "vendor.h"));         // and each unit's own #include of it
  }
  results[1].diags.push_back(missing("lib/b.h", 3, "other.h"));  // another header: its own finding
  mergeAcrossInputs(results);
  size_t total = 0;
  for (const auto& r : results) total += r.diags.size();
  EXPECT_EQ(total, 2u);
  const Diagnostic& v = results[0].diags[0];
  EXPECT_EQ(v.span.begin.file, "lib/a.h");
  EXPECT_EQ(v.related.size(), 3u) << "the units' own #include lines";
  EXPECT_NE(v.message.find("; also included at 3 other places ('t0.cu:5', 't1.cu:5', 't2.cu:5')"), std::string::npos)
      << v.message;
  EXPECT_NE(v.message.find("; reached from 3 translation units"), std::string::npos) << v.message;
  EXPECT_NE(results[1].diags[0].message.find("'other.h' file not found"), std::string::npos);
  mergeAcrossInputs(results);  // again (--fix): said once
  EXPECT_EQ(results[0].diags[0].message.find("also included"), results[0].diags[0].message.rfind("also included"));
}

TEST(Grouping, TheMoreSevereFindingSpeaksForThePlace) {
  // One unit guesses the kernel's shape (a possible race, a warning), another launches it with a
  // known one (the race, an error): the error's words with the error's severity, never the guess
  // raised to an error (CudaSift's OrientAndExtractCONST, ninth stop check).
  std::vector<FileResult> results(2);
  results[0].file = "d.cu";
  results[1].file = "h.cu";
  results[0].diags.push_back(at("shared.cuh", 9, "possible race; assuming a 256-thread block", {"k<1>"}));
  results[0].diags[0].fixHint = "guess's fix";
  results[1].diags.push_back(at("shared.cuh", 9, "race between thread 0 and thread 32", {"k<2>"}));
  results[1].diags[0].severity = Severity::Error;
  results[1].diags[0].fixHint = "known shape's fix";
  mergeAcrossInputs(results);
  ASSERT_EQ(results[0].diags.size() + results[1].diags.size(), 1u);
  const Diagnostic& h = results[0].diags.empty() ? results[1].diags[0] : results[0].diags[0];
  EXPECT_EQ(h.severity, Severity::Error);
  EXPECT_EQ(h.message.find("assuming"), std::string::npos) << h.message;
  EXPECT_NE(h.message.find("race between thread 0 and thread 32"), std::string::npos) << h.message;
  EXPECT_EQ(h.fixHint, "known shape's fix");
  EXPECT_EQ(h.instantiations, (std::vector<std::string>{"k<1>", "k<2>"}));
  EXPECT_EQ(h.units, (std::vector<std::string>{"d.cu", "h.cu"}));
}
