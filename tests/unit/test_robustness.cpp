// Issue 33 end to end: no input takes the run down, no fix damages a file, no cache entry lies.
// (The Clang-free units are in test_robust_core.cpp, the language server's in test_toolchain.cpp.)
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "test_util.h"

using namespace gpuopt::test;
namespace fs = std::filesystem;

namespace {
const std::string kStrided =
    "__global__ void k(float* o, const float* a) {\n"
    "  int i = threadIdx.x;\n"
    "  o[i] = a[32 * i];\n"
    "}\n";
// A tile read column-wise: a bank conflict --fix changes (padding or a swizzle).
const std::string kTranspose =
    "__global__ void transpose(float* out, const float* in) {\n"
    "  __shared__ float tile[32][32];\n"
    "  int x = threadIdx.x, y = threadIdx.y;\n"
    "  tile[y][x] = in[y * 32 + x];\n"
    "  __syncthreads();\n"
    "  out[y * 32 + x] = tile[x][y];\n"
    "}\n";

// A kernel whose one statement adds `terms` terms: Clang's parser and semantic analysis recurse
// once per term (stock clang -fsyntax-only overflows its 8 MiB stack at 65,536).
std::string longExpression(unsigned terms) {
  std::string s = "__global__ void deep(int* out, int x) {\n  out[threadIdx.x] = x";
  s.reserve(terms * 4 + 100);
  for (unsigned i = 1; i < terms; ++i) s += " + x";
  return s + ";\n}\n";
}

// Runs a shell command line (stderr joined to stdout: a file size limit would stop a redirect).
RunResult shell(const std::string& cmd) {
  RunResult r;
  FILE* p = popen(("{ " + cmd + "; } 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}
std::string lintCmd(const std::string& args) {
  return std::string("XDG_CACHE_HOME='") + GPUOPT_TEST_CACHE_DIR + "' '" + GPUOPT_LINT_BIN + "' " + args;
}
bool haveToolkit() { return fs::exists("/usr/local/cuda/include/cuda_runtime.h"); }
std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->path().filename().string().find(".tmp") != std::string::npos) out.push_back(it->path().string());
  return out;
}
}  // namespace

TEST(Robustness, AFileThatCrashesClangCostsThatFileNotTheRun) {
  std::string d = tempDir("crash");
  writeFile(d + "/deep.cu", longExpression(65536));
  writeFile(d + "/good.cu", kStrided);
  // With Clang's usual 8 MiB of stack (a test hook) the parse overflows it: the crash is caught,
  // named in the file's error, and the other file is still reported, in every format. (What the
  // crashed parse was building is abandoned, not freed (crash_guard.h): in the Sanitize build
  // LeakSanitizer would report it at exit, so these two runs leave the leak check out.)
  const std::string crashEnv = "GPUOPT_LINT_PARSE_STACK_MB=8 " + kNoLeakCheckAfterCrash;
  auto r = runLint("--no-cache --no-cuda --format json deep.cu good.cu", d, crashEnv);
  ASSERT_EQ(r.rc, 2) << "not killed by the crash: " << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files"][0]["file"], "deep.cu");
  ASSERT_EQ(j["files"][0]["errors"].size(), 1u) << r.out;
  std::string msg = j["files"][0]["errors"][0]["message"];
  EXPECT_NE(msg.find("Clang crashed while parsing or analysing this file (SIGSEGV"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nested too deeply"), std::string::npos) << msg;
  EXPECT_EQ(j["files"][1]["findings"][0]["ruleId"], "uncoalesced-access") << r.out;
  r = runLint("--no-cache --no-cuda -j 2 deep.cu good.cu", d, crashEnv);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("deep.cu: error: Clang crashed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("good.cu:3:10: warning: uncoalesced global load"), std::string::npos) << r.out;
  // With the parse's own large stack the same file is analysed like any other.
  r = runLint("--no-cache --no-cuda deep.cu good.cu", d);
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_EQ(r.out.find("Clang crashed"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("in 2 files analysed (2 kernels)"), std::string::npos) << r.err;
  fs::remove_all(d);
}

TEST(Robustness, SourceBytesThatAreNotUtf8NeverAbortTheOutput) {
  std::string d = tempDir("latin1");
  // The message quotes the load, and with it a string literal holding the byte 0xFF.
  writeFile(d + "/k.cu", "__global__ void k(float* o, const float* a) {\n"
                         "  int i = threadIdx.x;\n"
                         "  o[i] = a[32 * i + sizeof(\"\xff\") - 2];\n"
                         "}\n");
  for (const char* format : {"json", "sarif", "github", "text"}) {
    auto r = runLint(std::string("--no-cache --no-cuda --format ") + format + " k.cu", d);
    EXPECT_EQ(r.rc, 1) << format << ": " << r.err;
    EXPECT_NE(r.out.find("uncoalesced"), std::string::npos) << format << ": " << r.out;
    if (std::string(format) == "json" || std::string(format) == "sarif") {
      nlohmann::json j;
      ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << format << ": " << r.out;
      EXPECT_NE(r.out.find("sizeof(\\\"\xEF\xBF\xBD\\\")"), std::string::npos) << format << ": U+FFFD in place of 0xFF";
    }
  }
  fs::remove_all(d);
}

TEST(Robustness, ASymbolicLinkLoopIsReportedUnderItsName) {
  std::string d = tempDir("symloop");
  fs::create_symlink("loop.cu", d + "/loop.cu");
  for (const char* format : {"json", "sarif", "github", "text"}) {
    auto r = runLint(std::string("--no-cache --no-cuda --format ") + format + " loop.cu", d);
    EXPECT_EQ(r.rc, 2) << format;
    std::string f = format;
    std::string expected = f == "json"    ? "\"file\": \"loop.cu\""
                           : f == "sarif" ? "\"uri\": \"loop.cu\""
                           : f == "github" ? "::error file=loop.cu,"
                                           : "loop.cu: error:";
    EXPECT_NE(r.out.find(expected), std::string::npos) << format << ":\n" << r.out;
  }
  fs::remove_all(d);
}

TEST(Robustness, FixLeavesAFileEditedWhileTheToolRanAlone) {
  std::string d = tempDir("fix-edit");
  std::string hook = d + "/hook";
  fs::create_directories(hook);
  writeFile(d + "/t.cu", kTranspose);
  std::string edited = "// the user saved this while gpuopt-lint ran\n" + kTranspose;
  RunResult r;
  std::thread run([&] {
    r = runLint("--no-cache --no-cuda --block-dim 32,32 --fix t.cu", d, "GPUOPT_LINT_TEST_FIX_HOOK='" + hook + "'");
  });
  // --fix waits at the hook after the analysis: the file is edited then, as a user would.
  for (int i = 0; i < 1200 && !fs::exists(hook + "/ready"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(fs::exists(hook + "/ready"));
  writeFile(d + "/t.cu", edited);
  writeFile(hook + "/go", "");
  run.join();
  EXPECT_EQ(readFile(d + "/t.cu"), edited) << "fixes from stale offsets were applied";
  EXPECT_NE(r.err.find("t.cu: changed since it was analysed; not fixed"), std::string::npos) << r.err;
  EXPECT_EQ(r.rc, 1) << "its findings stay reported";
  // Unedited, the same run fixes it.
  fs::remove_all(hook);
  writeFile(d + "/t.cu", kTranspose);
  r = runLint("--no-cache --no-cuda --block-dim 32,32 --fix t.cu", d);
  EXPECT_NE(readFile(d + "/t.cu"), kTranspose) << r.out << r.err;
  EXPECT_TRUE(temporaries(d).empty());
  fs::remove_all(d);
}

TEST(Robustness, FixWritesThroughALinkKeepsHardLinksAndModeAndSurvivesAFullDisk) {
  std::string d = tempDir("fix-links");
  writeFile(d + "/src/t.cu", kTranspose);
  ::chmod((d + "/src/t.cu").c_str(), 0754);
  fs::create_symlink("src/t.cu", d + "/link.cu");
  fs::create_hard_link(d + "/src/t.cu", d + "/other-name.cu");
  // A temporary file of a run that was killed: removed.
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  writeFile(d + "/src/t.cu.gpuopt-lint.tmp." + std::to_string(dead), "partial");
  auto r = runLint("--no-cache --no-cuda --block-dim 32,32 --fix link.cu", d);
  EXPECT_TRUE(fs::is_symlink(d + "/link.cu")) << "the link was replaced by a file";
  std::string fixed = readFile(d + "/src/t.cu");
  EXPECT_NE(fixed, kTranspose) << r.out << r.err;
  EXPECT_EQ(readFile(d + "/other-name.cu"), fixed) << "the hard link was detached";
  struct stat st;
  ASSERT_EQ(::stat((d + "/src/t.cu").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0754u);
  EXPECT_TRUE(temporaries(d).empty()) << temporaries(d).front();
  // A full disk (no file may grow: ulimit -f 0, SIGXFSZ ignored so writes fail with EFBIG): an
  // error, the file as it was, no temporary file left.
  writeFile(d + "/full.cu", kTranspose);
  r = shell("cd '" + d + "' && trap '' XFSZ && ulimit -f 0 && " + lintCmd("--no-cache --no-cuda --block-dim 32,32 --fix full.cu"));
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("full.cu: error: cannot write the fixed file (nothing was changed)"), std::string::npos) << r.out;
  EXPECT_EQ(readFile(d + "/full.cu"), kTranspose);
  EXPECT_TRUE(temporaries(d).empty());
  fs::remove_all(d);
}

TEST(Robustness, AFullDiskLeavesNoTemporaryFilesInTheCache) {
  if (!haveToolkit()) GTEST_SKIP() << "no CUDA toolkit here: no preamble to write";
  std::string d = tempDir("cache-full");
  writeFile(d + "/k.cu", "#include <cstdio>\n" + kStrided);
  auto bare = runLint("--no-cache --cuda-path /usr/local/cuda k.cu", d);
  ASSERT_EQ(bare.rc, 1) << bare.err;
  // Files of at most 1 MiB: the result entry fits, the preamble (about 24 MB) does not.
  for (int run = 0; run < 2; ++run) {
    auto r = shell("cd '" + d + "' && trap '' XFSZ && ulimit -f 1024 && '" + GPUOPT_LINT_BIN +
                   "' --cache-dir cache --cuda-path /usr/local/cuda -q k.cu");
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_EQ(r.out, bare.out) << "the findings are those of a run without the cache";
    auto left = temporaries(d + "/cache");
    EXPECT_TRUE(left.empty()) << "run " << run << " left " << left.front();
  }
  fs::remove_all(d);
}

TEST(Robustness, StaleTemporaryEntriesOfKilledRunsAreRemoved) {
  std::string d = tempDir("cache-stale-tmp");
  writeFile(d + "/k.cu", kStrided);
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  std::string stale = d + "/cache/v1/results/0123.json.tmp." + std::to_string(dead) + ".140104110964736.0";
  writeFile(stale, "{\"partial");
  auto r = runLint("--no-cuda --cache-dir cache k.cu", d);
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_FALSE(fs::exists(stale));
  fs::remove_all(d);
}

namespace {
// `depth` nested loops of `trips` iterations each around a strided store (uncoalesced-access).
std::string nestedLoops(const std::string& name, unsigned depth, unsigned trips) {
  std::string s = "__global__ void " + name + "(float* o, const float* a) {\n";
  for (unsigned i = 0; i < depth; ++i)
    s += "for (int i" + std::to_string(i) + " = 0; i" + std::to_string(i) + " < " + std::to_string(trips) + "; ++i" +
         std::to_string(i) + ") {\n";
  s += "o[32 * threadIdx.x] += a[threadIdx.x];\n";
  return s + std::string(depth, '}') + "\n}\n";
}
// The accesses the verbose log gives a kernel ("kernel NAME: block ..., N accesses").
long accessesOf(const std::string& log, const std::string& kernel) {
  auto at = log.find("kernel " + kernel + ": block ");
  if (at == std::string::npos) return -1;
  auto comma = log.find(", ", at);
  return std::stol(log.substr(comma + 2));
}
}  // namespace

TEST(Robustness, NestedLoopsAreBoundedAndTheCutIsSaid) {
  std::string d = tempDir("nested-loops");
  // 14 nested 2-trip loops: 2^14 walks of the body without a bound (49,152 accesses, tens of
  // seconds a kernel); 3 nested 4-trip loops: 64 walks, well inside it.
  writeFile(d + "/deep.cu", nestedLoops("deep1", 14, 2) + nestedLoops("deep2", 14, 2));
  writeFile(d + "/small.cu", nestedLoops("small", 3, 4));
  auto r = runLint("--no-cache --no-cuda --verbose --format json deep.cu small.cu", d);
  ASSERT_EQ(r.rc, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["files"].size(), 2u);
  for (const char* k : {"deep1", "deep2"}) {
    long n = accessesOf(r.err, k);
    EXPECT_GT(n, 0) << r.err;
    EXPECT_LT(n, 4096 * 3) << k << ": the walk was not bounded\n" << r.err;
    EXPECT_NE(r.err.find(std::string("kernel ") + k + ": block 256x1x1 (assumed: no launch of '" + k + "' in this file)"), std::string::npos);
  }
  EXPECT_NE(r.err.find("loops cut by the work bound, the first at line"), std::string::npos) << r.err;
  // The findings in a cut kernel are still made (the load and the store of `+=`, one finding per
  // place: one a kernel), and say the analysis was cut.
  const auto& deep = j["files"][0]["findings"];
  ASSERT_EQ(deep.size(), 2u) << r.out;
  for (const auto& f : deep) {
    EXPECT_EQ(f["ruleId"], "uncoalesced-access");
    ASSERT_FALSE(f["notes"].empty()) << f.dump();
    EXPECT_NE(f["notes"].back()["message"].get<std::string>().find("cut by its work bound"), std::string::npos) << f.dump();
  }
  // The quiet twin: walked in full (64 walks of the body, 3 accesses each: `o` loaded and stored,
  // `a` loaded), no note.
  EXPECT_EQ(accessesOf(r.err, "small"), 192) << r.err;
  const auto& small = j["files"][1]["findings"];
  ASSERT_EQ(small.size(), 1u) << r.out;
  EXPECT_EQ(small.dump().find("work bound"), std::string::npos) << small.dump();
  fs::remove_all(d);
}
