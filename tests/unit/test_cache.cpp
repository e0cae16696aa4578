// The caches (issue 10): the precompiled CUDA header preamble changes no finding, the result
// cache serves unchanged files and notices every change of the file and of what it includes, and
// a damaged cache is rebuilt, never trusted. Each test makes its own --cache-dir.
#include <chrono>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <thread>

#include "test_util.h"

using namespace gpuopt::test;
namespace fs = std::filesystem;

namespace {
bool haveToolkit() { return fs::exists("/usr/local/cuda/include/cuda_runtime.h"); }

std::string quoted(const std::vector<std::string>& files) {
  std::string s;
  for (const auto& f : files) s += " '" + f + "'";
  return s;
}

// Every sample and fixture (the files whose findings the preamble must not change).
std::vector<std::string> samplesAndFixtures() {
  std::vector<std::string> v;
  for (const char* dir : {"samples", "tests/fixtures"})
    for (auto& e : fs::directory_iterator(std::string(GPUOPT_SOURCE_DIR) + "/" + dir))
      if (e.path().extension() == ".cu") v.push_back(e.path().string());
  std::sort(v.begin(), v.end());
  return v;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST(Cache, PreambleAndResultCacheChangeNoFindingOverSamplesAndFixtures) {
  if (!haveToolkit()) GTEST_SKIP() << "no CUDA toolkit here: the preamble is only used with one";
  auto files = samplesAndFixtures();
  ASSERT_GE(files.size(), 10u);
  std::string cache = tempDir("cache-identical");
  std::string common = "--cuda-path /usr/local/cuda --no-group --format json -j 2" + quoted(files);
  RunResult bare = runLint("--no-cache " + common);
  ASSERT_TRUE(bare.rc == 0 || bare.rc == 1) << bare.err;
  ASSERT_NE(bare.out.find("\"findings\""), std::string::npos);

  // Cold: the preambles are built, then used.
  RunResult cold = runLint("--verbose --cache-dir '" + cache + "' " + common);
  EXPECT_EQ(cold.rc, bare.rc);
  EXPECT_EQ(cold.out, bare.out) << "findings differ with a freshly built preamble";
  EXPECT_NE(cold.err.find(": built in"), std::string::npos) << cold.err;

  // Warm preamble, no stored results: every file parsed with a preamble, most with their
  // leading #include lines in it.
  fs::remove_all(fs::path(cache) / "v1" / "results");
  RunResult warm = runLint("--verbose --cache-dir '" + cache + "' " + common);
  EXPECT_EQ(warm.rc, bare.rc);
  EXPECT_EQ(warm.out, bare.out) << "findings differ with a warm preamble";
  EXPECT_EQ(warm.err.find(": built in"), std::string::npos) << "a warm run built a preamble:\n" << warm.err;
  EXPECT_GE(count(warm.err, "parsed with the preamble"), files.size()) << warm.err;
  std::smatch m;
  EXPECT_TRUE(std::regex_search(warm.err, m, std::regex(R"(parsed with the preamble \S+ \([1-9][0-9]* leading includes\))")))
      << warm.err;

  // Unchanged files: every result from the result cache (the fixture with compile errors too),
  // the same output, answered by the launcher alone (no analyzer started).
  RunResult cached = runLint("--verbose --cache-dir '" + cache + "' " + common);
  EXPECT_EQ(cached.rc, bare.rc);
  EXPECT_EQ(cached.out, bare.out) << "findings differ from the result cache";
  EXPECT_EQ(count(cached.err, "findings from the result cache"), files.size()) << cached.err;
  EXPECT_NE(cached.err.find("compile_errors.cu: unchanged"), std::string::npos) << cached.err;
  EXPECT_NE(cached.err.find("without starting the analyzer"), std::string::npos) << cached.err;
  // Every output format of the launcher is the analyzer's, byte for byte. A few files are
  // enough for the formats (the samples, whose findings cover most rules, and the fixture with
  // compile errors), all of them served from the cache filled above; three more analyses of every
  // fixture had pushed this test past its limit under the sanitizers on CI's 2 cores.
  std::vector<std::string> some;
  for (const auto& f : files)
    if (f.find("/samples/") != std::string::npos || f.ends_with("/compile_errors.cu") ||
        f.ends_with("/bank_conflict.cu"))
      some.push_back(f);
  ASSERT_GE(some.size(), 4u);
  for (const char* format : {"text", "sarif", "github"}) {
    std::string other = std::string("--cuda-path /usr/local/cuda --no-group -j 2 --format ") + format + quoted(some);
    RunResult analysed = runLint("--no-cache " + other);
    RunResult served = runLint("--cache-dir '" + cache + "' " + other);
    EXPECT_EQ(served.rc, analysed.rc) << format;
    EXPECT_EQ(served.out, analysed.out) << format;
  }
  fs::remove_all(cache);
}

TEST(Cache, ResultCacheNoticesChangesToTheFileAndToWhatItIncludes) {
  std::string dir = tempDir("cache-invalidate");
  std::string cache = dir + "/cache";
  // The stride comes from an included header: 1 is coalesced, 4 is not (same file size).
  writeFile(dir + "/stride.cuh", "#define STRIDE 1\n");
  writeFile(dir + "/k.cu",
            "#include \"stride.cuh\"\n"
            "__global__ void k(float* a) { a[(blockIdx.x * blockDim.x + threadIdx.x) * STRIDE] = 1.f; }\n"
            "__global__ void s(float* a) {\n"
            "  __shared__ float t[32][32];\n"
            "  t[threadIdx.x][0] = a[threadIdx.x];  // NOLINT(bank-conflict)\n"
            "  __syncthreads();\n"
            "  a[threadIdx.x] = t[0][threadIdx.x];\n"
            "}\n");
  std::string args = "--no-cuda --verbose --block-dim 32 --cache-dir '" + cache + "' '" + dir + "/k.cu'";
  RunResult first = runLint(args);
  ASSERT_TRUE(first.rc == 0 || first.rc == 1) << first.err;
  EXPECT_EQ(first.out.find("uncoalesced-access"), std::string::npos) << first.out;
  EXPECT_EQ(first.out.find("bank-conflict"), std::string::npos) << "NOLINT applies:\n" << first.out;
  EXPECT_EQ(first.err.find("from the result cache"), std::string::npos);

  RunResult again = runLint(args);
  EXPECT_EQ(again.out, first.out);
  EXPECT_EQ(again.rc, first.rc);
  EXPECT_NE(again.err.find("findings from the result cache"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("1 unchanged (from the cache)"), std::string::npos) << again.err;

  // The included header changes (same size, so only its content tells): analysed again.
  writeFile(dir + "/stride.cuh", "#define STRIDE 4\n");
  RunResult changed = runLint(args);
  EXPECT_EQ(changed.err.find("from the result cache"), std::string::npos) << changed.err;
  EXPECT_NE(changed.out.find("uncoalesced-access"), std::string::npos) << changed.out;
  EXPECT_EQ(changed.out.find("bank-conflict"), std::string::npos) << "NOLINT still applies:\n" << changed.out;
  RunResult changedAgain = runLint(args);
  EXPECT_EQ(changedAgain.out, changed.out);
  EXPECT_NE(changedAgain.err.find("from the result cache"), std::string::npos);

  // The file itself changes: analysed again.
  std::string text = readFile(dir + "/k.cu");
  writeFile(dir + "/k.cu", std::regex_replace(text, std::regex("  // NOLINT\\(bank-conflict\\)"), ""));
  RunResult edited = runLint(args);
  EXPECT_EQ(edited.err.find("from the result cache"), std::string::npos) << edited.err;
  EXPECT_NE(edited.out.find("bank-conflict"), std::string::npos) << edited.out;

  // Other options are another key: not served from the cache.
  RunResult otherRules = runLint("--rules uncoalesced-access " + args);
  EXPECT_EQ(otherRules.err.find("from the result cache"), std::string::npos) << otherRules.err;
  EXPECT_EQ(otherRules.out.find("bank-conflict"), std::string::npos) << otherRules.out;

  // --no-cache neither reads nor writes.
  fs::remove_all(cache);
  RunResult none = runLint("--no-cache --no-cuda --verbose --block-dim 32 '" + dir + "/k.cu'");
  EXPECT_EQ(none.out, edited.out);
  EXPECT_FALSE(fs::exists(cache));
  fs::remove_all(dir);
}

TEST(Cache, DamagedEntriesAreIgnoredAndReplaced) {
  std::string dir = tempDir("cache-damaged");
  std::string cache = dir + "/cache";
  writeFile(dir + "/k.cu", "__global__ void k(float* a) { a[threadIdx.x * 32] = 1.f; }\n");
  std::string args = "--no-cuda --verbose --cache-dir '" + cache + "' '" + dir + "/k.cu'";
  RunResult first = runLint(args);
  ASSERT_EQ(first.rc, 1) << first.out << first.err;
  size_t entries = 0;
  for (auto& e : fs::directory_iterator(fs::path(cache) / "v1" / "results")) {
    writeFile(e.path().string(), "{\"key\": 42, garbage");
    ++entries;
  }
  ASSERT_EQ(entries, 1u);
  RunResult damaged = runLint(args);
  EXPECT_EQ(damaged.rc, first.rc);
  EXPECT_EQ(damaged.out, first.out);
  EXPECT_EQ(damaged.err.find("from the result cache"), std::string::npos) << damaged.err;
  RunResult repaired = runLint(args);
  EXPECT_EQ(repaired.out, first.out);
  EXPECT_NE(repaired.err.find("from the result cache"), std::string::npos) << "the damaged entry was replaced";
  fs::remove_all(dir);
}

TEST(Cache, AStaleOrDamagedPreambleIsRebuiltNotTrusted) {
  if (!haveToolkit()) GTEST_SKIP() << "no CUDA toolkit here: the preamble is only used with one";
  std::string dir = tempDir("cache-stale-pch");
  std::string cache = dir + "/cache";
  writeFile(dir + "/k.cu", "#include <cstdio>\n__global__ void k(float* a) { a[threadIdx.x * 32] = 1.f; }\n");
  std::string args = "--cuda-path /usr/local/cuda --verbose --cache-dir '" + cache + "' '" + dir + "/k.cu'";
  RunResult bare = runLint("--no-cache --cuda-path /usr/local/cuda '" + dir + "/k.cu'");
  ASSERT_EQ(bare.rc, 1) << bare.err;
  RunResult cold = runLint(args);
  EXPECT_EQ(cold.out, bare.out);
  ASSERT_NE(cold.err.find(": built in"), std::string::npos) << cold.err;
  fs::path pre = fs::path(cache) / "v1" / "preamble";
  // A header the preamble read "changed" (its recorded time no longer matches): rebuilt.
  for (auto& e : fs::directory_iterator(pre))
    if (e.path().extension() == ".json")
      writeFile(e.path().string(), std::regex_replace(readFile(e.path().string()), std::regex(R"(,(-?\d+)\])"), ",1]"));
  fs::remove_all(fs::path(cache) / "v1" / "results");
  RunResult stale = runLint(args);
  EXPECT_EQ(stale.out, bare.out);
  EXPECT_NE(stale.err.find(": built in"), std::string::npos) << "a stale preamble was used:\n" << stale.err;
  // A truncated PCH, or one with a flipped bit, with an intact manifest: its checksum differs, so it
  // is built again (issue 33: a flipped bit could change what the headers declare; a truncated
  // one was parsed without, and the next run tried it again).
  for (int damage = 0; damage < 2; ++damage) {
    for (auto& e : fs::directory_iterator(pre))
      if (e.path().extension() == ".pch") {
        if (damage == 0) {
          fs::resize_file(e.path(), 4096);
        } else {
          std::string bytes = readFile(e.path().string());
          bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x10);
          writeFile(e.path().string(), bytes);
        }
      }
    fs::remove_all(fs::path(cache) / "v1" / "results");
    RunResult damaged = runLint(args);
    EXPECT_EQ(damaged.out, bare.out);
    EXPECT_EQ(damaged.rc, bare.rc);
    EXPECT_NE(damaged.err.find("damaged (its checksum differs); built again"), std::string::npos) << damaged.err;
    EXPECT_NE(damaged.err.find(": built in"), std::string::npos) << damaged.err;
  }
  // A manifest with a flipped bit that leaves it valid JSON ("<cstdio>" becomes "<bstdio>" in its
  // list of includes): a miss, built again.
  // (Each manifest that lists it: a fallback preamble of the forced includes alone does not.)
  unsigned flippedManifests = 0;
  for (auto& e : fs::directory_iterator(pre))
    if (e.path().extension() == ".json") {
      std::string text = readFile(e.path().string());
      size_t at = text.find("\"<cstdio>\"");
      if (at == std::string::npos) continue;
      text[at + 2] = static_cast<char>(text[at + 2] ^ 0x01);
      writeFile(e.path().string(), text);
      ++flippedManifests;
    }
  ASSERT_GT(flippedManifests, 0u);
  fs::remove_all(fs::path(cache) / "v1" / "results");
  RunResult flipped = runLint(args);
  EXPECT_EQ(flipped.out, bare.out);
  EXPECT_NE(flipped.err.find(": built in"), std::string::npos) << "a damaged manifest was trusted:\n" << flipped.err;
  fs::remove_all(dir);
}

TEST(Cache, CacheFlagsAndAnUnwritableCacheFolder) {
  RunResult r = runLint("--cache-dir");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("'--cache-dir' needs a value"), std::string::npos) << r.err;
  std::string dir = tempDir("cache-unwritable");
  writeFile(dir + "/file", "x");
  writeFile(dir + "/k.cu", "__global__ void k(float* a) { a[threadIdx.x] = 1.f; }\n");
  // An unusable cache folder, given or the default: the files are analysed without the cache, and
  // that is said once (issue 33: a given one was exit 2 with no findings, the default was silent).
  for (const std::string& how : {"--cache-dir '" + dir + "/file/sub'", std::string()}) {
    r = runLint("--no-cuda " + how + " '" + dir + "/k.cu'", "", how.empty() ? "XDG_CACHE_HOME='" + dir + "/file'" : "");
    EXPECT_EQ(r.rc, 0) << how << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("0 findings in 1 file analysed (1 kernel)"), std::string::npos) << r.err;
    size_t at = r.err.find("cannot use the cache folder");
    ASSERT_NE(at, std::string::npos) << how << ": " << r.err;
    EXPECT_EQ(r.err.find("cannot use the cache folder", at + 1), std::string::npos) << "said once: " << r.err;
    EXPECT_NE(r.err.find(how.empty() ? "($XDG_CACHE_HOME)" : "(--cache-dir)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("analysing without the cache"), std::string::npos) << r.err;
  }
  r = runLint("--no-cuda --no-cache '" + dir + "/k.cu'");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("0 findings in 1 file analysed (1 kernel) in "), std::string::npos) << r.err;
  fs::remove_all(dir);
}

TEST(Cache, TheLauncherAnswersOnlyUnchangedFilesAndRunsTheAnalyzerForTheRest) {
  std::string dir = tempDir("cache-launcher");
  std::string cache = dir + "/cache";
  writeFile(dir + "/stride.cuh", "#define STRIDE 1\n");
  writeFile(dir + "/k.cu", "#include \"stride.cuh\"\n"
                           "__global__ void k(float* a) { a[(blockIdx.x * blockDim.x + threadIdx.x) * STRIDE] = 1.f; }\n");
  writeFile(dir + "/j.cu", "__global__ void j(float* a) { a[threadIdx.x * 32] = 1.f; }\n");
  std::string args = "--no-cuda --verbose --block-dim 32 --cache-dir '" + cache + "' '" + dir + "/k.cu' '" + dir + "/j.cu'";
  RunResult first = runLint(args);
  ASSERT_EQ(first.rc, 1) << first.err;
  EXPECT_EQ(first.err.find("without starting the analyzer"), std::string::npos) << first.err;
  RunResult again = runLint(args);
  EXPECT_EQ(again.rc, first.rc);
  EXPECT_EQ(again.out, first.out);
  EXPECT_NE(again.err.find("without starting the analyzer"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("2 unchanged (from the cache)"), std::string::npos) << again.err;

  // One changed file (through its header): the analyzer runs, and serves the other from the cache.
  writeFile(dir + "/stride.cuh", "#define STRIDE 4\n");
  RunResult changed = runLint(args);
  EXPECT_EQ(changed.err.find("without starting the analyzer"), std::string::npos) << changed.err;
  EXPECT_NE(changed.err.find("1 unchanged (from the cache)"), std::string::npos) << changed.err;
  EXPECT_NE(changed.out.find("k.cu:2"), std::string::npos) << changed.out;

  // The analyzer cannot be run: a clear error, exit status 2 (its identity is part of the key, so
  // another analyzer never reads this one's results).
  RunResult missing = runLint(args, "", "GPUOPT_LINT_ENGINE='" + dir + "/nowhere'");
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE(missing.err.find("cannot run the analyzer " + dir + "/nowhere"), std::string::npos) << missing.err;
  // What needs no analysis is answered without it.
  RunResult version = runLint("--version", "", "GPUOPT_LINT_ENGINE='" + dir + "/nowhere'");
  EXPECT_EQ(version.rc, 0);
  EXPECT_NE(version.out.find("gpuopt-lint "), std::string::npos);
  RunResult rules = runLint("--list-rules", "", "GPUOPT_LINT_ENGINE='" + dir + "/nowhere'");
  EXPECT_EQ(rules.rc, 0);
  EXPECT_NE(rules.out.find("bank-conflict"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Cache, AFileWithCompileErrorsIsStoredAndAnalysedAgainWhenTheMissingHeaderAppears) {
  // Three folders deep: the includer search looks at the file's folder and two above it, and
  // what it reads is part of the key; so none of them is /tmp, where other programs write sources.
  std::string dir = tempDir("cache-missing-header") + "/project/module";
  std::string cache = dir + "/cache";
  writeFile(dir + "/src/k.cu", "#include \"scale.h\"\n"
                               "__global__ void k(float* a) { a[threadIdx.x * 32] = 1.f; }\n"
                               "__global__ void u(float* a) { a[threadIdx.x] = SCALE; }\n");
  std::string args = "--no-cuda --verbose --cache-dir '" + cache + "' '" + dir + "/src/k.cu'";
  RunResult first = runLint(args);
  EXPECT_NE(first.out.find("compile-error"), std::string::npos) << first.out << first.err;
  RunResult again = runLint(args);
  EXPECT_EQ(again.out, first.out);
  EXPECT_NE(again.err.find("without starting the analyzer"), std::string::npos) << again.err;
  // The header appears in the file's folder: the stored result is stale.
  writeFile(dir + "/src/scale.h", "#define SCALE 2.f\n");
  RunResult found = runLint(args);
  EXPECT_EQ(found.err.find("from the result cache"), std::string::npos) << found.err;
  EXPECT_EQ(found.out.find("compile-error"), std::string::npos) << found.out;
  fs::remove_all(fs::path(dir).parent_path().parent_path());
}

TEST(Cache, AResultThroughAnIncluderIsStoredAndFollowsTheIncluder) {
  // kern.cu launches nothing; main.cu includes it and launches it with 32-thread blocks.
  std::string dir = tempDir("cache-includer");
  std::string cache = dir + "/cache";
  writeFile(dir + "/kern.cu", "__global__ void k(float* a) {\n"
                              "  if (threadIdx.x < 16) a[threadIdx.x] = 1.f;\n"
                              "}\n");
  auto mainWith = [&](int block) {
    writeFile(dir + "/main.cu", "#include \"kern.cu\"\n"
                                "int main() { float* a = nullptr; k<<<1, " + std::to_string(block) + ">>>(a); }\n");
  };
  mainWith(16);
  std::string args = "--no-cuda --verbose --cache-dir '" + cache + "' '" + dir + "/kern.cu'";
  RunResult first = runLint(args);
  EXPECT_NE(first.err.find("analysed as included by"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("kernel k: block 16x1x1"), std::string::npos) << first.err;
  RunResult again = runLint(args);
  EXPECT_EQ(again.out, first.out);
  EXPECT_NE(again.err.find("without starting the analyzer"), std::string::npos) << again.err;
  // The includer now launches 32-thread blocks: analysed again with them.
  mainWith(32);
  RunResult changed = runLint(args);
  EXPECT_EQ(changed.err.find("from the result cache"), std::string::npos) << changed.err;
  EXPECT_NE(changed.err.find("kernel k: block 32x1x1"), std::string::npos) << changed.err;
  // A new file that includes it: the folder changed, analysed again.
  RunResult stable = runLint(args);
  EXPECT_NE(stable.err.find("from the result cache"), std::string::npos) << stable.err;
  // The folder's files saved without a change (a new time, the same bytes): still from the cache.
  for (const char* f : {"/main.cu", "/kern.cu"})
    fs::last_write_time(dir + f, fs::last_write_time(dir + f) + std::chrono::seconds(5));
  RunResult touched = runLint(args);
  EXPECT_NE(touched.err.find("from the result cache"), std::string::npos) << touched.err;
  EXPECT_EQ(touched.out, changed.out);
  writeFile(dir + "/other.cu", "#include \"kern.cu\"\n");
  RunResult added = runLint(args);
  EXPECT_EQ(added.err.find("from the result cache"), std::string::npos) << added.err;
  fs::remove_all(dir);
}

TEST(Cache, AStoredResultWithAFlippedBitOrEmptiedFindingsIsAnalysedAgain) {
  // Issue 33: one flipped bit moved a finding to another line; emptied findings gave exit 0.
  std::string dir = tempDir("cache-checksum");
  std::string cache = dir + "/cache";
  writeFile(dir + "/k.cu", "__global__ void k(float* a) {\n  a[threadIdx.x * 32] = 1.f;\n}\n");
  std::string args = "--no-cuda --verbose --cache-dir '" + cache + "' '" + dir + "/k.cu'";
  RunResult first = runLint(args);
  ASSERT_EQ(first.rc, 1) << first.err;
  ASSERT_NE(first.out.find("k.cu:2:"), std::string::npos) << first.out;
  fs::path entry;
  for (auto& e : fs::directory_iterator(fs::path(cache) / "v1" / "results")) entry = e.path();
  ASSERT_FALSE(entry.empty());
  const std::string stored = readFile(entry.string());
  // The finding's line 2 becomes 3: 0x32 ^ 0x01 = 0x33.
  std::string flipped = stored;
  size_t at = flipped.find("\"span\":[");
  ASSERT_NE(at, std::string::npos) << stored;
  at = flipped.find(",2,", at);
  ASSERT_NE(at, std::string::npos) << stored;
  flipped[at + 1] = static_cast<char>(flipped[at + 1] ^ 1);
  writeFile(entry.string(), flipped);
  RunResult afterFlip = runLint(args);
  EXPECT_EQ(afterFlip.out, first.out);
  EXPECT_EQ(afterFlip.err.find("from the result cache"), std::string::npos) << afterFlip.err;
  // The findings emptied: still analysed again, still exit 1.
  std::string emptied = readFile(entry.string());
  size_t b = emptied.find("\"diags\":[");
  size_t e = emptied.find("],\"errors\"", b);
  ASSERT_TRUE(b != std::string::npos && e != std::string::npos) << emptied;
  emptied.replace(b, e + 1 - b, "\"diags\":[]");
  writeFile(entry.string(), emptied);
  RunResult afterEmpty = runLint(args);
  EXPECT_EQ(afterEmpty.rc, 1);
  EXPECT_EQ(afterEmpty.out, first.out);
  // The launcher reads entries through the same check.
  RunResult served = runLint(args);
  EXPECT_EQ(served.out, first.out);
  EXPECT_NE(served.err.find("without starting the analyzer"), std::string::npos) << served.err;
  fs::remove_all(dir);
}

TEST(Cache, ProjectHeadersAtTheTopOfAUnitAreInItsPreamble) {
  // Units that start with the project's own headers (issue 31): the guarded ones go into the
  // preamble, shared by the units with the same leading block and flags; an unguarded header stays
  // out (the unit reads it itself) but its own leading includes go in; a header defining a kernel
  // keeps the whole block out. Findings are those of a parse without any cache.
  if (!haveToolkit()) GTEST_SKIP() << "no CUDA toolkit here: the preamble is only used with one";
  std::string src = std::string(GPUOPT_SOURCE_DIR) + "/tests/projects/quoted_preamble/";
  std::string dir = tempDir("cache-project-headers-src") + "/";
  for (const auto& e : fs::directory_iterator(src)) fs::copy_file(e.path(), dir + e.path().filename().string());
  std::string common = "--no-config --cuda-path /usr/local/cuda --format json '" + dir + "column_sum.cu' '" + dir +
                       "tiles.cu' '" + dir + "scale.cu'";
  RunResult bare = runLint("--no-cache " + common);
  ASSERT_EQ(bare.rc, 1) << bare.err;
  // The helper in common.cuh is read from the PCH: its index makes the store uncoalesced.
  EXPECT_NE(bare.out.find("out[rowStart(cols, row)]"), std::string::npos) << bare.out;
  std::string cache = tempDir("cache-project-headers");
  RunResult cold = runLint("--verbose --cache-dir '" + cache + "' " + common);
  EXPECT_EQ(cold.out, bare.out) << "findings differ with the project-header preamble";
  // (scale.cu's refused block used its build of this run: its fallback is built on the next.)
  fs::remove_all(fs::path(cache) / "v1" / "results");
  RunResult second = runLint("--verbose --cache-dir '" + cache + "' " + common);
  EXPECT_EQ(second.out, bare.out);
  fs::remove_all(fs::path(cache) / "v1" / "results");
  RunResult warm = runLint("--verbose --cache-dir '" + cache + "' " + common);
  EXPECT_EQ(warm.out, bare.out) << "findings differ with a warm project-header preamble";
  EXPECT_EQ(warm.err.find(": built in"), std::string::npos) << warm.err;
  // column_sum.cu (ops.cuh is unguarded: its common.cuh is the preamble) and tiles.cu (common.cuh
  // and guarded.h) are parsed with one; scale.cu's kernels.cuh defines a kernel.
  std::smatch m;
  EXPECT_TRUE(std::regex_search(warm.err, m, std::regex(R"(column_sum\.cu: parsed with the preamble \S+ \(1 leading includes\))")))
      << warm.err;
  EXPECT_TRUE(std::regex_search(warm.err, m, std::regex(R"(tiles\.cu: parsed with the preamble \S+ \(2 leading includes\))")))
      << warm.err;
  EXPECT_NE(warm.err.find("the preamble would hold the kernel scaleRows"), std::string::npos) << warm.err;
  // Another unit of the folder beginning with the same header uses the same PCH (no build).
  writeFile(dir + "more.cu", "#include \"common.cuh\"\n__global__ void k(float* a, int n) { a[threadIdx.x * n] = 0; }\n");
  RunResult shared = runLint("--verbose --no-config --cuda-path /usr/local/cuda --cache-dir '" + cache + "' '" + dir + "more.cu'");
  EXPECT_NE(shared.err.find("more.cu: parsed with the preamble"), std::string::npos) << shared.err;
  EXPECT_EQ(shared.err.find(": built in"), std::string::npos) << shared.err;
  // Saving the guarded header without a change (a new modification time, the same bytes) keeps the
  // preamble: it is checked by content, by the manifest and by Clang on load.
  std::string local = "--verbose --no-config --cuda-path /usr/local/cuda --format json --cache-dir '" + cache + "' '" + dir + "tiles.cu'";
  {
    auto t = fs::last_write_time(dir + "guarded.h");
    fs::last_write_time(dir + "guarded.h", t + std::chrono::seconds(5));
    fs::remove_all(fs::path(cache) / "v1" / "results");
    RunResult touched = runLint(local);
    EXPECT_EQ(touched.err.find(": built in"), std::string::npos) << touched.err;
    EXPECT_TRUE(std::regex_search(touched.err, m, std::regex(R"(tiles\.cu: parsed with the preamble \S+ \(2 leading includes\))")))
        << touched.err;
    EXPECT_NE(touched.out.find("32-way bank conflict"), std::string::npos) << touched.out;
  }
  // Editing the guarded header makes the preamble stale: rebuilt, and the findings follow the edit.
  EXPECT_NE(warm.out.find("32-way bank conflict"), std::string::npos) << warm.out;
  std::string g = readFile(dir + "guarded.h");
  writeFile(dir + "guarded.h", std::regex_replace(g, std::regex("kTile = 32"), "kTile = 33"));
  RunResult after = runLint(local);
  EXPECT_NE(after.err.find(": built in"), std::string::npos) << after.err;
  EXPECT_EQ(after.out.find("32-way bank conflict"), std::string::npos) << after.out;
  fs::remove_all(cache);
  fs::remove_all(dir);
}

TEST(Cache, AOneFileRunBuildsItsPreambleBesideTheParse) {
  // Issue 31's cold run: with a core to spare (one file), a missing preamble is built on a thread
  // of its own while the file is parsed without it; the run returns once it is stored, and the
  // next run parses with it. Findings are those of a parse without any cache.
  if (!haveToolkit()) GTEST_SKIP() << "no CUDA toolkit here: the preamble is only used with one";
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: nothing to spare";
  std::string dir = tempDir("cache-beside-src");
  writeFile(dir + "/k.cu", readFile(std::string(GPUOPT_SOURCE_DIR) + "/samples/transpose_ladder.cu"));
  std::string cache = tempDir("cache-beside");
  std::string common = "--no-config --cuda-path /usr/local/cuda --format json -j 1 '" + dir + "/k.cu'";
  RunResult bare = runLint("--no-cache " + common);
  ASSERT_EQ(bare.rc, 1) << bare.err;
  RunResult cold = runLint("--verbose --cache-dir '" + cache + "' " + common);
  EXPECT_EQ(cold.out, bare.out) << "findings differ while the preamble is built beside the parse";
  EXPECT_NE(cold.err.find("being built beside this parse"), std::string::npos) << cold.err;
  EXPECT_NE(cold.err.find(": built in"), std::string::npos) << "the build finished before the run returned:\n" << cold.err;
  fs::remove_all(fs::path(cache) / "v1" / "results");
  RunResult warm = runLint("--verbose --cache-dir '" + cache + "' " + common);
  EXPECT_EQ(warm.out, bare.out);
  EXPECT_NE(warm.err.find("k.cu: parsed with the preamble"), std::string::npos) << warm.err;
  EXPECT_EQ(warm.err.find(": built in"), std::string::npos) << warm.err;
  // Two files on two workers have no core to spare: the preamble is built first, then used.
  if (std::thread::hardware_concurrency() == 2) {
    writeFile(dir + "/k2.cu", readFile(std::string(GPUOPT_SOURCE_DIR) + "/samples/transpose_ladder.cu") + "\n");
    std::string cache2 = tempDir("cache-beside-2");
    RunResult two = runLint("--verbose --no-config --cuda-path /usr/local/cuda -j 2 --cache-dir '" + cache2 + "' '" + dir +
                            "/k.cu' '" + dir + "/k2.cu'");
    EXPECT_EQ(two.err.find("being built beside this parse"), std::string::npos) << two.err;
    fs::remove_all(cache2);
  }
  fs::remove_all(cache);
  fs::remove_all(dir);
}
