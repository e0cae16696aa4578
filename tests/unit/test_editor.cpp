// Units of the editor and toolchain conventions (Clang-free): the language server's JSON-RPC
// framing, URIs and positions; the clang-tidy and ruff flags; progress on a terminal.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "analyzer/app/cli.h"
#include "analyzer/report/grouping.h"
#include "analyzer/app/jsonrpc.h"
#include "analyzer/report/output.h"
#include "analyzer/app/progress.h"

using namespace gpuopt;
using nlohmann::json;

namespace {
std::string frame(const std::string& body) { return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body; }
}  // namespace

TEST(JsonRpc, ReadsFramedMessagesInSequence) {
  std::string a = R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})";
  std::string b = R"({"jsonrpc":"2.0","method":"x","params":{"text":"é\r\n}"}})";  // multi-byte, CRLF inside
  std::istringstream in(frame(a) + "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + frame(b));
  std::string err;
  auto m1 = lsp::readMessage(in, err);
  ASSERT_TRUE(m1) << err;
  EXPECT_EQ((*m1)["method"], "initialize");
  auto m2 = lsp::readMessage(in, err);
  ASSERT_TRUE(m2) << err;
  EXPECT_EQ((*m2)["params"]["text"], "é\r\n}");
  EXPECT_FALSE(lsp::readMessage(in, err));
  EXPECT_EQ(err, "");  // a clean end of input
}

TEST(JsonRpc, FramingErrorsAreNamed) {
  std::string err;
  std::istringstream noLength("Content-Type: x\r\n\r\n{}");
  EXPECT_FALSE(lsp::readMessage(noLength, err));
  EXPECT_EQ(err, "message without Content-Length");
  std::istringstream badLength("Content-Length: 12x\r\n\r\n{}");
  EXPECT_FALSE(lsp::readMessage(badLength, err));
  EXPECT_EQ(err, "bad Content-Length '12x'");
  std::istringstream truncated("Content-Length: 40\r\n\r\n{\"a\":1}");
  EXPECT_FALSE(lsp::readMessage(truncated, err));
  EXPECT_NE(err.find("input ended inside a message body (7 of 40 bytes)"), std::string::npos) << err;
  std::istringstream notJson(frame("{nope"));
  EXPECT_FALSE(lsp::readMessage(notJson, err));
  EXPECT_EQ(err, "message body is not JSON");
  std::istringstream header("Content-Length 3\r\n\r\n{}");
  EXPECT_FALSE(lsp::readMessage(header, err));
  EXPECT_NE(err.find("malformed header line"), std::string::npos);
}

TEST(JsonRpc, WriteThenReadRoundTrips) {
  std::ostringstream out;
  json m = {{"jsonrpc", "2.0"}, {"id", 7}, {"result", {{"text", "ü ∑ 𝄞"}}}};
  lsp::writeMessage(out, m);
  std::string s = out.str();
  std::string body = m.dump();
  EXPECT_EQ(s.substr(0, s.find("\r\n\r\n")), "Content-Length: " + std::to_string(body.size()));  // bytes, not characters
  std::istringstream in(s);
  std::string err;
  auto back = lsp::readMessage(in, err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(*back, m);
}

TEST(JsonRpc, FileUrisAndPositions) {
  EXPECT_EQ(lsp::pathFromUri("file:///home/u/my%20proj/k.cu"), "/home/u/my proj/k.cu");
  EXPECT_EQ(lsp::pathFromUri("file://localhost/a/b.cu"), "/a/b.cu");
  EXPECT_EQ(lsp::pathFromUri("untitled:Untitled-1"), "");
  EXPECT_EQ(lsp::uriFromPath("/home/u/my proj/k#1.cu"), "file:///home/u/my%20proj/k%231.cu");
  EXPECT_EQ(lsp::pathFromUri(lsp::uriFromPath("/tmp/ü/a.cu")), "/tmp/ü/a.cu");
  // "é" is 2 bytes and 1 UTF-16 unit; "𝄞" is 4 bytes and 2 units (a surrogate pair).
  std::string line = "a é 𝄞 x";
  size_t xByte = line.find('x');
  EXPECT_EQ(lsp::characterOfByte(line, xByte, lsp::Encoding::Utf16), 7u);
  EXPECT_EQ(lsp::characterOfByte(line, xByte, lsp::Encoding::Utf8), xByte);
  EXPECT_EQ(lsp::byteOfCharacter(line, 7, lsp::Encoding::Utf16), xByte);
  EXPECT_EQ(lsp::byteOfCharacter(line, 99, lsp::Encoding::Utf16), line.size());
  EXPECT_EQ(lsp::characterOfByte(line, 3, lsp::Encoding::Utf16), 3u);  // inside "é": counts it whole
}

TEST(JsonRpc, ContentChangesFullAndRanged) {
  std::string text = "int a;\nint é = 1;\n";
  EXPECT_TRUE(lsp::applyContentChange(text, {{"range", {{"start", {{"line", 1}, {"character", 8}}},
                                                        {"end", {{"line", 1}, {"character", 9}}}}},
                                             {"text", "42"}},
                                      lsp::Encoding::Utf16));
  EXPECT_EQ(text, "int a;\nint é = 42;\n");
  EXPECT_TRUE(lsp::applyContentChange(text, {{"text", "new"}}, lsp::Encoding::Utf16));
  EXPECT_EQ(text, "new");
  EXPECT_FALSE(lsp::applyContentChange(text, {{"range", 3}}, lsp::Encoding::Utf16));
  EXPECT_EQ(text, "new");
  // A range without "start" or a position without "line" (issue 33, found by fuzz_jsonrpc: a
  // const operator[] read past the object): refused, the text unchanged.
  const nlohmann::json noStart = {{"range", {{"end", {{"line", 0}, {"character", 1}}}}}, {"text", "x"}};
  EXPECT_FALSE(lsp::applyContentChange(text, noStart, lsp::Encoding::Utf16));
  const nlohmann::json noLine = {{"range", {{"start", {{"character", 0}}}, {"end", {{"line", 0}, {"character", 1}}}}},
                                 {"text", "x"}};
  EXPECT_FALSE(lsp::applyContentChange(text, noLine, lsp::Encoding::Utf16));
  EXPECT_EQ(text, "new");
}

TEST(Cli, OtherLintersFlagsAndAliases) {
  CliOptions o;
  std::string err;
  ASSERT_TRUE(parseCommandLine({"--output-format=sarif", "--select", "bank-*", "--ignore=divergent-branch",
                                "--statistics", "--exit-zero", "--show-fixes", "--export-fixes", "f.yaml",
                                "--header-filter", "/include/", "--checks=-*,bank-conflict", "k.cu"},
                               o, err) == false);
  EXPECT_EQ(err, "--statistics prints text or json (not sarif or github)");
  o = {};
  ASSERT_TRUE(parseCommandLine({"--output-format=json", "--select", "bank-*", "--ignore=divergent-branch", "--statistics",
                                "--exit-zero", "--show-fixes", "--export-fixes", "f.yaml", "--header-filter",
                                "/include/", "--checks=-*,bank-conflict", "k.cu"},
                               o, err))
      << err;
  EXPECT_EQ(o.format, OutputFormat::Json);
  EXPECT_EQ(o.rules, std::vector<std::string>{"bank-*"});
  EXPECT_EQ(o.disable, std::vector<std::string>{"divergent-branch"});
  EXPECT_EQ(o.checks, (std::vector<std::string>{"-*", "bank-conflict"}));
  EXPECT_TRUE(o.statistics && o.exitZero && o.showFixes);
  EXPECT_EQ(o.exportFixes, "f.yaml");
  EXPECT_EQ(o.headerFilter, std::optional<std::string>("/include/"));
  o = {};
  EXPECT_FALSE(parseCommandLine({"--checks=-*,no-such-rule", "k.cu"}, o, err));
  EXPECT_EQ(err, "unknown rule 'no-such-rule' in --checks (see --list-rules)");
  o = {};
  EXPECT_FALSE(parseCommandLine({"--header-filter=(", "k.cu"}, o, err));
  EXPECT_NE(err.find("--header-filter '(' is not a valid regular expression"), std::string::npos) << err;
  o = {};
  ASSERT_TRUE(parseCommandLine({"--header-filter="}, o, err)) << err;
  EXPECT_EQ(o.headerFilter, std::optional<std::string>(""));  // main file only
  // The language server: a subcommand or a flag, no files.
  o = {};
  ASSERT_TRUE(parseCommandLine({"lsp", "--block-dim", "16,16"}, o, err)) << err;
  EXPECT_TRUE(o.lsp);
  o = {};
  ASSERT_TRUE(parseCommandLine({"--lsp"}, o, err)) << err;
  EXPECT_TRUE(o.lsp);
  o = {};
  EXPECT_FALSE(parseCommandLine({"lsp", "k.cu"}, o, err));
  EXPECT_NE(err.find("the language server takes no files"), std::string::npos);
  o = {};
  EXPECT_FALSE(parseCommandLine({"--lsp", "--fix"}, o, err));
  o = {};
  ASSERT_TRUE(parseCommandLine({"k.cu", "lsp"}, o, err));  // only first: a file named lsp elsewhere
  EXPECT_FALSE(o.lsp);
}

TEST(Output, StatisticsCountPerRuleMostFrequentFirst) {
  FileResult r;
  r.file = "a.cu";
  auto add = [&](const std::string& id, bool fix) {
    Diagnostic d;
    d.ruleId = id;
    d.span.begin = {"a.cu", 1, 1};
    if (fix) d.fixIts.push_back({d.span, "x"});
    r.diags.push_back(d);
  };
  add("uncoalesced-access", false);
  add("bank-conflict", true);
  add("bank-conflict", true);
  std::ostringstream text, js;
  writeStatistics(text, {r}, false);
  std::string t = text.str();
  EXPECT_EQ(t.rfind("    2  bank-conflict       [*] shared-memory access where lanes", 0), 0u) << t;
  EXPECT_NE(t.find("\n    1  uncoalesced-access      global memory access whose warp"), std::string::npos) << t;
  writeStatistics(js, {r}, true);
  auto j = json::parse(js.str());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["code"], "bank-conflict");
  EXPECT_EQ(j[0]["count"], 2);
  EXPECT_EQ(j[0]["fixable"], 2);
}

TEST(Progress, OnlyOnATerminalAndCutToItsWidth) {
  EXPECT_TRUE(progressWanted(2, true, false, "xterm"));
  EXPECT_FALSE(progressWanted(1, true, false, "xterm"));   // one file: nothing to count
  EXPECT_FALSE(progressWanted(5, false, false, "xterm"));  // a pipe or a file
  EXPECT_FALSE(progressWanted(5, true, true, "xterm"));    // --quiet
  EXPECT_FALSE(progressWanted(5, true, false, "dumb"));    // no cursor control
  std::ostringstream os;
  {
    Progress p(os, 3, true, 40);
    p.started("src/a.cu");
    p.started("src/a_much_longer_directory_name/b.cu");
    p.finished("src/a.cu");
  }
  std::string s = os.str();
  EXPECT_NE(s.find("\r\033[K[0/3] src/a.cu"), std::string::npos) << s;
  // Two running: the newest is named, the line is cut to 39 columns from the left of the path.
  EXPECT_NE(s.find("\r\033[K[0/3] ...rectory_name/b.cu (+1 running)\r"), std::string::npos) << s;
  EXPECT_NE(s.find("\r\033[K[1/3] ...uch_longer_directory_name/b.cu\r"), std::string::npos) << s;
  EXPECT_EQ(s.substr(s.size() - 4), "\r\033[K");  // erased at the end
  std::ostringstream off;
  {
    Progress p(off, 3, false);
    p.started("a.cu");
    p.finished("a.cu");
  }
  EXPECT_EQ(off.str(), "");
}

TEST(Grouping, FoldedRepeatsKeepTheirMechanicalFixes) {
  // Two arrays with the same conflict on one line fold into one finding; --fix must pad both.
  auto d = [](const std::string& array, unsigned declLine) {
    Diagnostic x;
    x.ruleId = "bank-conflict";
    x.function = "t";
    x.span.begin = {"t.cu", 8, 21};
    x.message = "32-way bank conflict on shared load '" + array + "[x][y]': lanes hit bank 0";
    FixIt f;
    f.span.begin = {"t.cu", declLine, 25};
    f.replacement = "32 + 1";
    x.fixIts = {f, f};  // a duplicate is applied once
    return x;
  };
  std::vector<Diagnostic> v = {d("tile", 2), d("other", 3)};
  groupRepeats(v);
  ASSERT_EQ(v.size(), 1u);
  ASSERT_EQ(v[0].fixIts.size(), 3u);  // its own two (as they were) and the folded one's, once
  EXPECT_EQ(v[0].fixIts.back().span.begin.line, 3u);
}

// Issue 33: messages a client (or an attacker) may send never take the server down.
TEST(JsonRpc, OversizedDeepAndEndlessMessagesAreRefusedWithoutReadingThemWhole) {
  std::string err;
  int code = 0;
  lsp::ReadLimits small;
  small.maxBytes = 100;
  // Too large: skipped by its Content-Length, the next message is read.
  std::string big = R"({"jsonrpc":"2.0","method":"x","params":{"t":")" + std::string(200, 'a') + "\"}}";
  std::istringstream in(frame(big) + frame(R"({"jsonrpc":"2.0","id":1,"method":"shutdown"})"));
  EXPECT_FALSE(lsp::readMessage(in, err, &code, small));
  EXPECT_EQ(code, lsp::kInvalidRequest);
  EXPECT_NE(err.find("larger than the limit of 100 bytes"), std::string::npos) << err;
  auto next = lsp::readMessage(in, err, &code, small);
  ASSERT_TRUE(next) << err;
  EXPECT_EQ((*next)["method"], "shutdown");
  // A length no memory holds (bad_alloc before): refused, nothing allocated.
  std::istringstream huge("Content-Length: 1000000000000\r\n\r\n{}");
  EXPECT_FALSE(lsp::readMessage(huge, err, &code));
  EXPECT_EQ(code, lsp::kInvalidRequest);
  EXPECT_NE(err.find("1000000000000 bytes is larger than the limit"), std::string::npos) << err;
  // Nested 200,000 deep (a stack overflow in the JSON library before): not parsed, and the stream
  // goes on.
  std::string deep = R"({"jsonrpc":"2.0","method":"x","params":{"a":)" + std::string(200000, '[') +
                     std::string(200000, ']') + "}}";
  std::istringstream nested(frame(deep) + frame(R"({"jsonrpc":"2.0","method":"exit"})"));
  EXPECT_FALSE(lsp::readMessage(nested, err, &code));
  EXPECT_EQ(code, lsp::kParseError);
  EXPECT_NE(err.find("nested deeper than 512 levels"), std::string::npos) << err;
  ASSERT_TRUE(lsp::readMessage(nested, err, &code)) << err;
  // Brackets inside strings are not nesting.
  EXPECT_EQ(lsp::jsonNestingDepth(R"({"a":"[[[[{{{{\"[[["})", 100), 1u);
  EXPECT_EQ(lsp::jsonNestingDepth("[[[]],[]]", 100), 3u);
  // A header line that never ends: cut at 8 KiB, not read into memory whole.
  std::istringstream endless("Content-Length: 2" + std::string(100000, '0') + "\r\n\r\n{}");
  EXPECT_FALSE(lsp::readMessage(endless, err, &code));
  EXPECT_EQ(code, lsp::kParseError);
}

TEST(JsonRpc, MessagesThatAreNotRequestsAreNamed) {
  auto bad = [](const std::string& text) { return lsp::invalidRequest(json::parse(text)); };
  EXPECT_FALSE(bad(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})"));
  EXPECT_FALSE(bad(R"({"jsonrpc":"2.0","method":"initialized"})"));
  EXPECT_FALSE(bad(R"({"jsonrpc":"2.0","id":"a","result":null})"));  // a response
  EXPECT_FALSE(bad(R"({"jsonrpc":"2.0","id":null,"method":"x","params":[1]})"));
  EXPECT_NE(bad("[]").value_or("").find("batch"), std::string::npos);
  EXPECT_NE(bad(R"([{"jsonrpc":"2.0","method":"x"}])").value_or("").find("batch"), std::string::npos);
  EXPECT_NE(bad("42").value_or("").find("JSON object, not number"), std::string::npos);
  EXPECT_NE(bad("\"x\"").value_or("").find("not string"), std::string::npos);
  EXPECT_NE(bad("null").value_or("").find("not null"), std::string::npos);
  EXPECT_NE(bad(R"({"jsonrpc":"2.0","id":1,"method":42})").value_or("").find("\"method\" must be a string"),
            std::string::npos);
  EXPECT_NE(bad(R"({"jsonrpc":"2.0","id":{},"method":"x"})").value_or("").find("\"id\""), std::string::npos);
  EXPECT_NE(bad(R"({"jsonrpc":"2.0","id":1.5,"method":"x"})").value_or("").find("\"id\""), std::string::npos);
  EXPECT_NE(bad(R"({"id":1,"method":"x"})").value_or("").find("\"jsonrpc\" must be \"2.0\""), std::string::npos);
  EXPECT_NE(bad(R"({"jsonrpc":"2.0","id":1,"method":"x","params":7})").value_or("").find("\"params\""),
            std::string::npos);
  EXPECT_TRUE(bad(R"({"jsonrpc":"2.0"})"));
}

TEST(JsonRpc, TextThatIsNotUtf8IsWrittenAsReplacementCharacters) {
  std::ostringstream out;
  lsp::writeMessage(out, {{"jsonrpc", "2.0"}, {"method", "m"}, {"params", {{"message", "a \xff\xfe b \xe2\x82"}}}});
  std::istringstream in(out.str());
  std::string err;
  auto back = lsp::readMessage(in, err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ((*back)["params"]["message"], "a \xEF\xBF\xBD\xEF\xBF\xBD b \xEF\xBF\xBD");
}
