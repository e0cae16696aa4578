// The binary with the flags users bring from clang-tidy and ruff, and progress on a terminal.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "test_util.h"

using namespace gpuopt::test;
namespace fs = std::filesystem;

namespace {
const std::string kStrided =
    "__global__ void k(float* a) {\n"
    "  int i = threadIdx.x;\n"
    "  a[i] = a[32 * i];\n"
    "}\n";
// Two fixable bank conflicts and one uncoalesced access.
const std::string kTranspose =
    "__global__ void t(float* out, const float* in) {\n"
    "  __shared__ float tile[32][32];\n"
    "  __shared__ float other[32][32];\n"
    "  int x = threadIdx.x, y = threadIdx.y;\n"
    "  tile[y][x] = in[y * 32 + x];\n"
    "  other[y][x] = in[x * 32 + y];\n"
    "  __syncthreads();\n"
    "  out[y * 32 + x] = tile[x][y] + other[x][y];\n"
    "}\n";
// A kernel in a header: `bad` reads strided.
std::string headerKernel(const std::string& name) {
  return "__global__ void " + name + "(float* a) {\n  int i = threadIdx.x;\n  a[i] = a[32 * i];\n}\n";
}
}  // namespace

TEST(Toolchain, StatisticsExitZeroAndAliases) {
  std::string d = tempDir("stats");
  writeFile(d + "/t.cu", kTranspose);
  writeFile(d + "/s.cu", kStrided);
  auto r = runLint("--block-dim 32,32 --statistics t.cu s.cu", d);
  EXPECT_EQ(r.rc, 1) << r.err;
  // The two conflicts of one line are one finding (grouped), with both fixes.
  EXPECT_EQ(r.out.rfind("    2  uncoalesced-access      global memory access", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\n    1  bank-conflict       [*] shared-memory access"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "") << "no summary line with --statistics";
  r = runLint("--block-dim 32,32 --statistics --output-format json --select bank-conflict t.cu s.cu", d);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u) << r.out;
  EXPECT_EQ(j[0]["code"], "bank-conflict");
  EXPECT_EQ(j[0]["count"], 1);
  r = runLint("--block-dim 32,32 --exit-zero --ignore bank-conflict t.cu", d);
  EXPECT_EQ(r.rc, 0) << "--exit-zero: findings do not fail";
  EXPECT_EQ(r.out.find("[bank-conflict]"), std::string::npos);
  EXPECT_NE(r.out.find("[uncoalesced-access]"), std::string::npos);
  r = runLint("--exit-zero missing.cu", d);
  EXPECT_EQ(r.rc, 2) << "an input error still fails";
  // clang-tidy's --checks: globs in order.
  r = runLint("--block-dim 32,32 --checks=-*,bank-conflict --format json t.cu", d);
  j = nlohmann::json::parse(r.out);
  for (const auto& f : j["files"][0]["findings"]) EXPECT_EQ(f["ruleId"], "bank-conflict");
  EXPECT_EQ(j["files"][0]["findings"].size(), 1u);
  r = runLint("--block-dim 32,32 --no-group --checks=-*,bank-conflict --format json t.cu", d);
  EXPECT_EQ(nlohmann::json::parse(r.out)["files"][0]["findings"].size(), 2u);
}

TEST(Toolchain, ShowFixes) {
  std::string d = tempDir("showfixes");
  writeFile(d + "/t.cu", kTranspose);
  auto r = runLint("--block-dim 32,32 --show-fixes --rules bank-conflict t.cu", d);
  EXPECT_EQ(r.rc, 1);
  // A patch git apply and patch -p1 take (the old "+++ t.cu (fixed)" header was not one).
  auto at = r.out.find("Fixes (apply with --fix):\n--- a/t.cu\n+++ b/t.cu\n");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+  __shared__ float tile[32][32 + 1];", at), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+  __shared__ float other[32][32 + 1];", at), std::string::npos) << r.out;
  EXPECT_EQ(readFile(d + "/t.cu"), kTranspose);
  r = runLint("--block-dim 32,32 --show-fixes --fix --rules bank-conflict t.cu", d);
  EXPECT_NE(r.out.find("Fixed 1 finding:\n- t.cu:\n    1 x bank-conflict\n"), std::string::npos) << r.out;
  // Both arrays are padded: the grouped finding carries the fix of the place folded into it.
  EXPECT_NE(readFile(d + "/t.cu").find("tile[32][32 + 1]"), std::string::npos);
  EXPECT_NE(readFile(d + "/t.cu").find("other[32][32 + 1]"), std::string::npos);
}

TEST(Toolchain, HeaderFilterChoosesWhichIncludedFilesAreLinted) {
  std::string d = tempDir("hfilter");
  // The project is proj/ (no .git: its root is two folders above the file); ext/ is outside it.
  writeFile(d + "/proj/src/main.cu", "#include \"own.cuh\"\n#include \"ext.cuh\"\n" + kStrided);
  writeFile(d + "/proj/src/own.cuh", headerKernel("own"));
  writeFile(d + "/ext/ext.cuh", headerKernel("ext"));
  auto files = [&](const std::string& args) {
    auto r = runLint("--format json --rules uncoalesced-access " + args + " proj/src/main.cu -- -I" + d + "/ext", d);
    std::set<std::string> out;
    auto j = nlohmann::json::parse(r.out);
    for (const auto& f : j["files"][0]["findings"])
      out.insert(fs::path(f["location"]["file"].get<std::string>()).filename().string());
    return out;
  };
  EXPECT_EQ(files(""), (std::set<std::string>{"main.cu", "own.cuh"})) << "default: the project's own headers";
  EXPECT_EQ(files("--header-filter=''"), (std::set<std::string>{"main.cu"})) << "empty: the main file only";
  EXPECT_EQ(files("--header-filter='ext\\.cuh$'"), (std::set<std::string>{"main.cu", "ext.cuh"}));
  EXPECT_EQ(files("--header-filter='.*'"), (std::set<std::string>{"main.cu", "own.cuh", "ext.cuh"}));
  // The same from the configuration file.
  writeFile(d + "/proj/.gpuopt-lint.yaml", "header-filter: '/ext/'\n");
  EXPECT_EQ(files(""), (std::set<std::string>{"main.cu", "ext.cuh"}));
  writeFile(d + "/proj/.gpuopt-lint.yaml", "header-filter: '('\n");
  auto r = runLint("proj/src/main.cu", d);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("'header-filter' is not a valid regular expression"), std::string::npos) << r.out << r.err;
}

TEST(Toolchain, ProgressOnATerminalOnlyAndNeverOnAPipe) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "util-linux 'script' is not installed";
  std::string d = tempDir("progress");
  writeFile(d + "/a.cu", kStrided);
  writeFile(d + "/b.cu", kStrided);
  // On a pipe (stderr captured to a file): no progress line.
  auto piped = runLint("-j1 a.cu b.cu", d);
  EXPECT_EQ(piped.err.find("\033[K"), std::string::npos) << piped.err;
  // On a terminal: `script` gives the binary a pseudo-terminal.
  std::string log = d + "/tty.log";
  std::string cmd = "cd '" + d + "' && TERM=xterm script -qec \"'" + std::string(GPUOPT_LINT_BIN) +
                    "' -j1 a.cu b.cu\" '" + log + "' >/dev/null 2>&1";
  (void)std::system(cmd.c_str());
  std::string tty = readFile(log);
  EXPECT_NE(tty.find("[0/2] a.cu"), std::string::npos) << tty;
  EXPECT_NE(tty.find("[1/2] b.cu"), std::string::npos) << tty;
  // --quiet: none.
  cmd = "cd '" + d + "' && TERM=xterm script -qec \"'" + std::string(GPUOPT_LINT_BIN) + "' -q -j1 a.cu b.cu\" '" + log +
        "' >/dev/null 2>&1";
  (void)std::system(cmd.c_str());
  EXPECT_EQ(readFile(log).find("[0/2]"), std::string::npos);
}

TEST(Toolchain, LanguageServerProtocolErrorsAndShutdown) {
  // No file is opened: this checks the protocol, not the analysis (lsp_neovim_test.sh does that).
  std::string d = tempDir("lsp");
  auto frame = [](const std::string& body) {
    return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  std::string in = frame(R"({"jsonrpc":"2.0","id":0,"method":"textDocument/codeAction","params":{}})") +
                   frame(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}})") +
                   frame(R"({"jsonrpc":"2.0","method":"initialized","params":{}})") +
                   frame(R"({"jsonrpc":"2.0","id":2,"method":"workspace/symbol","params":{}})") +
                   frame("{not json") +
                   frame(R"({"jsonrpc":"2.0","id":3,"method":"textDocument/codeAction","params":{}})") +
                   frame(R"({"jsonrpc":"2.0","id":4,"method":"shutdown"})") + frame(R"({"jsonrpc":"2.0","method":"exit"})");
  writeFile(d + "/in.txt", in);
  auto r = runLint("lsp < in.txt", d);
  EXPECT_EQ(r.rc, 0) << "exit after shutdown: " << r.err;
  std::vector<nlohmann::json> replies;
  for (size_t at = 0; (at = r.out.find("Content-Length: ", at)) != std::string::npos;) {
    size_t n = std::stoul(r.out.substr(at + 16));
    size_t body = r.out.find("\r\n\r\n", at) + 4;
    replies.push_back(nlohmann::json::parse(r.out.substr(body, n)));
    at = body + n;
  }
  ASSERT_EQ(replies.size(), 6u) << r.out;
  EXPECT_EQ(replies[0]["error"]["code"], -32002) << "a request before initialize";
  EXPECT_EQ(replies[1]["result"]["capabilities"]["textDocumentSync"]["change"], 1);
  EXPECT_EQ(replies[1]["result"]["capabilities"]["positionEncoding"], "utf-16");
  EXPECT_EQ(replies[1]["result"]["capabilities"]["codeActionProvider"]["codeActionKinds"][0], "quickfix");
  EXPECT_EQ(replies[2]["error"]["code"], -32601);
  EXPECT_EQ(replies[3]["error"]["code"], -32700);
  EXPECT_EQ(replies[4]["error"]["code"], -32602) << "codeAction without a document: invalid params";
  EXPECT_TRUE(replies[5].contains("result") && replies[5]["result"].is_null());
  // exit without shutdown: status 1, as the protocol says.
  writeFile(d + "/in2.txt", frame(R"({"jsonrpc":"2.0","method":"exit"})"));
  EXPECT_EQ(runLint("lsp < in2.txt", d).rc, 1);
}

namespace {
std::string lspFrame(const std::string& body) { return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body; }
std::vector<nlohmann::json> lspReplies(const std::string& out) {
  std::vector<nlohmann::json> replies;
  for (size_t at = 0; (at = out.find("Content-Length: ", at)) != std::string::npos;) {
    size_t n = std::stoul(out.substr(at + 16));
    size_t body = out.find("\r\n\r\n", at) + 4;
    replies.push_back(nlohmann::json::parse(out.substr(body, n)));
    at = body + n;
  }
  return replies;
}
}  // namespace

// Issue 33: bad messages are answered as JSON-RPC says, and the server stays up.
TEST(Toolchain, LanguageServerAnswersBadMessagesAndStaysUp) {
  std::string d = tempDir("lsp-bad");
  std::string deep = R"({"jsonrpc":"2.0","id":9,"method":"x","params":{"a":)" + std::string(200000, '[') +
                     std::string(200000, ']') + "}}";
  std::string in = lspFrame(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}})") +
                   lspFrame("[]") +                                                   // an empty batch
                   lspFrame(R"([{"jsonrpc":"2.0","id":2,"method":"shutdown"}])") +   // a batch
                   lspFrame("42") +                                                   // not an object
                   lspFrame(R"({"jsonrpc":"2.0","id":3,"method":42})") +             // method not a string
                   lspFrame(R"({"jsonrpc":"2.0","method":["exit"]})") +              // ... in a notification
                   lspFrame(R"({"jsonrpc":"2.0","id":4,"method":"textDocument/didOpen","params":"x"})") +
                   lspFrame(R"({"jsonrpc":"2.0","id":5,"method":"textDocument/codeAction","params":{"textDocument":7}})") +
                   lspFrame(deep) +                                                   // 200,000 levels
                   lspFrame(R"({"jsonrpc":"2.0","id":6,"method":"shutdown"})") +
                   "Content-Length: 1000000000000\r\n\r\n{}";                          // no memory holds it
  writeFile(d + "/in.txt", in);
  auto r = runLint("lsp < in.txt", d);
  EXPECT_EQ(r.rc, 1) << "the input ended (inside the huge message) without exit: " << r.err;
  auto replies = lspReplies(r.out);
  ASSERT_EQ(replies.size(), 11u) << r.out;
  EXPECT_TRUE(replies[0].contains("result"));
  for (int i : {1, 2, 3}) {
    EXPECT_EQ(replies[i]["error"]["code"], -32600) << replies[i];
    EXPECT_TRUE(replies[i]["id"].is_null()) << replies[i];
  }
  EXPECT_NE(replies[2]["error"]["message"].get<std::string>().find("batch"), std::string::npos);
  EXPECT_EQ(replies[4]["error"]["code"], -32600);
  EXPECT_EQ(replies[4]["id"], 3) << "the id of an invalid request is kept when it is one";
  EXPECT_EQ(replies[5]["error"]["code"], -32600);
  EXPECT_EQ(replies[6]["error"]["code"], -32600) << "params must be an object or an array";
  EXPECT_EQ(replies[7]["error"]["code"], -32602);
  EXPECT_EQ(replies[8]["error"]["code"], -32700) << "nested too deep to parse";
  EXPECT_TRUE(replies[9].contains("result") && replies[9]["result"].is_null()) << "shutdown still answered";
  EXPECT_EQ(replies[10]["error"]["code"], -32600) << "the huge message refused";
  EXPECT_NE(replies[10]["error"]["message"].get<std::string>().find("larger than the limit"), std::string::npos);
  fs::remove_all(d);
}

// Issue 33: a file that crashes Clang, opened in the editor, gets an error; the server goes on.
TEST(Toolchain, LanguageServerSurvivesAFileThatCrashesClang) {
  std::string d = tempDir("lsp-crash");
  std::string text = "__global__ void deep(int* out, int x) {\n  out[threadIdx.x] = x";
  for (int i = 1; i < 65536; ++i) text += " + x";
  text += ";\n}\n";
  writeFile(d + "/deep.cu", text);
  nlohmann::json open = {{"jsonrpc", "2.0"},
                         {"method", "textDocument/didOpen"},
                         {"params", {{"textDocument", {{"uri", "file://" + d + "/deep.cu"}, {"languageId", "cuda"}, {"version", 1}, {"text", text}}}}}};
  writeFile(d + "/in1.txt", lspFrame(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}})") +
                                lspFrame(open.dump()));
  writeFile(d + "/in2.txt", lspFrame(R"({"jsonrpc":"2.0","id":2,"method":"shutdown"})") +
                                lspFrame(R"({"jsonrpc":"2.0","method":"exit"})"));
  // The second half is sent once the diagnostics are out (at most 120 s). The crashed parse's
  // objects are abandoned, not freed: no leak check at exit in the Sanitize build.
  std::string cmd = "cd '" + d + "' && { cat in1.txt; for i in $(seq 1200); do grep -q publishDiagnostics out.txt && break; "
                    "sleep 0.1; done; cat in2.txt; } | GPUOPT_LINT_PARSE_STACK_MB=8 " + kNoLeakCheckAfterCrash + " XDG_CACHE_HOME='" +
                    GPUOPT_TEST_CACHE_DIR + "' '" + GPUOPT_LINT_BIN + "' lsp --no-cuda > out.txt 2>err.txt";
  int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "server status " << status << ": " << readFile(d + "/err.txt");
  auto replies = lspReplies(readFile(d + "/out.txt"));
  ASSERT_EQ(replies.size(), 3u) << readFile(d + "/out.txt");
  EXPECT_EQ(replies[1]["method"], "textDocument/publishDiagnostics");
  auto diags = replies[1]["params"]["diagnostics"];
  ASSERT_EQ(diags.size(), 1u) << diags;
  EXPECT_NE(diags[0]["message"].get<std::string>().find("Clang crashed while parsing or analysing this file"), std::string::npos)
      << diags[0];
  EXPECT_TRUE(replies[2].contains("result")) << "shutdown answered after the crash";
  fs::remove_all(d);
}
