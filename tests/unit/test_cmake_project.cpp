// Real build databases (issue 27): a CUDA project as CMake's default Makefile generator writes its
// compile_commands.json (the include folders in a response file read with --options-file, the
// toolkit's as -isystem=DIR), Makefiles that include other Makefiles, and this repository's own
// `-p build`. The project is tests/projects/cmake_rsp; db/ holds what CMake 3.25 wrote for it
// with nvcc 13 (paths made placeholders), so the test runs without nvcc; with nvcc and cmake, the
// database is also generated at test time.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <regex>
#include <set>

#include "test_util.h"

using namespace gpuopt::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
const std::string kProject = std::string(GPUOPT_SOURCE_DIR) + "/tests/projects/cmake_rsp";

// (file name, line, rule) of every finding.
std::set<std::tuple<std::string, int, std::string>> findingsOf(const json& j) {
  std::set<std::tuple<std::string, int, std::string>> f;
  for (const auto& file : j["files"])
    for (const auto& x : file["findings"])
      f.emplace(fs::path(x["location"]["file"].get<std::string>()).filename().string(), x["location"]["line"].get<int>(),
                x["ruleId"].get<std::string>());
  return f;
}

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
  return s;
}

// The project copied to a fresh folder, with the committed database instantiated in build/.
std::string instantiate(const std::string& name) {
  std::string d = tempDir(name);
  fs::copy(kProject, d + "/project", fs::copy_options::recursive);
  std::string project = d + "/project", build = d + "/build";
  for (const char* rel : {"compile_commands.json", "CMakeFiles/kern.dir/includes_CUDA.rsp"}) {
    std::string text = readFile(project + "/db/" + rel + ".in");
    writeFile(build + "/" + rel, replaceAll(replaceAll(text, "@PROJECT@", project), "@BUILD@", build));
  }
  return d;
}

void expectTheProjectIsRead(const std::string& root, const std::string& build) {
  auto r = runLint("--no-cache --format json -p '" + build + "'", root);
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  auto j = json::parse(r.out);
  ASSERT_EQ(j["files"].size(), 2u) << j.dump(2);
  std::map<std::string, json> byName;
  for (const auto& f : j["files"]) byName[fs::path(f["file"].get<std::string>()).filename().string()] = f;
  // scale.cu compiles with nvcc through the database only (STRIDE from -D, the vendored header
  // through the response file's -isystem=DIR, __CUDACC_EXTENDED_LAMBDA__ and _OPENMP from nvcc's
  // options): no compile error, both kernels analysed.
  EXPECT_TRUE(byName["scale.cu"]["errors"].empty()) << byName["scale.cu"].dump(2);
  EXPECT_EQ(byName["scale.cu"]["kernels"], 2) << byName["scale.cu"].dump(2);
  auto got = findingsOf(j);
  std::set<std::tuple<std::string, int, std::string>> want = {{"scale.cu", 14, "uncoalesced-access"},
                                                              {"third_party.cu", 4, "compile-error"},
                                                              {"third_party.cu", 11, "uncoalesced-access"}};
  EXPECT_EQ(got, want) << r.out;
  // The missing third-party header: one finding naming it, which says which entry and flags gave
  // the folders searched, never "pass -p" (it was); the errors it causes are its notes.
  for (const auto& x : byName["third_party.cu"]["findings"]) {
    if (x["ruleId"] != "compile-error") continue;
    std::string m = x["message"];
    EXPECT_NE(m.find("'gpuopt_fixture_not_installed.h' file not found"), std::string::npos) << m;
    EXPECT_NE(m.find("the compile_commands.json entry for"), std::string::npos) << m;
    EXPECT_NE(m.find("-isystem " + fs::path(root).string() + "/project/vendor/include from `-isystem=" +
                     fs::path(root).string() + "/project/vendor/include` (from --options-file "
                     "CMakeFiles/kern.dir/includes_CUDA.rsp)"),
              std::string::npos)
        << m;
    EXPECT_EQ(m.find("-p with"), std::string::npos) << m;
    EXPECT_NE(m.find("later error"), std::string::npos) << m;
    EXPECT_GE(x["notes"].size(), 2u) << x.dump(2);
  }
  // Where each argument came from, with --verbose.
  r = runLint("--no-cache --verbose -p '" + build + "' project/src/scale.cu", root);
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("kept -D__CUDACC_EXTENDED_LAMBDA__ from `--extended-lambda`"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("from `-isystem=" + root + "/project/vendor/include` (from --options-file "
                       "CMakeFiles/kern.dir/includes_CUDA.rsp)"),
            std::string::npos)
      << r.err;
}
}  // namespace

TEST(CMakeProject, TheMakefileGeneratorsResponseFilesAreRead) {
  std::string d = instantiate("cmake-rsp");
  expectTheProjectIsRead(d, d + "/build");
  // An edited response file is a changed command: the stored result is not reused.
  std::string cache = d + "/cache";
  auto r = runLint("--cache-dir '" + cache + "' --format json -p build project/src/scale.cu", d);
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  std::string rsp = d + "/build/CMakeFiles/kern.dir/includes_CUDA.rsp";
  writeFile(rsp, replaceAll(readFile(rsp), "vendor/include", "vendor/missing"));
  r = runLint("--cache-dir '" + cache + "' --format json -p build project/src/scale.cu", d);
  EXPECT_NE(r.out.find("'vendor_math.cuh' file not found"), std::string::npos) << r.out;
  fs::remove_all(d);
}

TEST(CMakeProject, GeneratedWithCMakeAndNvccAtTestTime) {
  if (!fs::exists("/usr/local/cuda/bin/nvcc") || std::system("cmake --version >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "needs cmake and nvcc";
  std::string d = tempDir("cmake-gen");
  fs::copy(kProject, d + "/project", fs::copy_options::recursive);
  // nvcc's temporary files (tmpxft_*.cpp, run by CMake's compiler check) go to a folder of this
  // test's own: in TMPDIR they would be sources that other tests' includer searches read.
  fs::create_directories(d + "/tmp");
  std::string cmd = "TMPDIR='" + d + "/tmp' cmake -S '" + d + "/project' -B '" + d + "/build' -G 'Unix Makefiles' "
                    "-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc >'" + d + "/cmake.log' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << readFile(d + "/cmake.log");
  // What this test is about: the generator put the include folders in a response file.
  std::string db = readFile(d + "/build/compile_commands.json");
  ASSERT_NE(db.find("--options-file CMakeFiles/kern.dir/includes_CUDA.rsp"), std::string::npos) << db;
  expectTheProjectIsRead(d, d + "/build");
  fs::remove_all(d);
}

TEST(CMakeProject, ThisRepositorysOwnBuildDatabase) {
  // The build folder of this very checkout (CMake's Makefile generator, nvcc for kernels/).
  std::string build = GPUOPT_BINARY_DIR;
  std::string db = readFile(build + "/compile_commands.json");
  if (db.find("kernels/bank_conflict.cu") == std::string::npos) GTEST_SKIP() << "the demos are not built here (no nvcc)";
  std::string src = GPUOPT_SOURCE_DIR;
  auto r = runLint("--no-cache --format json -p '" + build + "' kernels/bank_conflict.cu kernels/harness.cu", src);
  ASSERT_NE(r.rc, 2) << r.out << r.err;
  auto j = json::parse(r.out);
  for (const auto& f : j["files"]) {
    EXPECT_TRUE(f["errors"].empty()) << f.dump(2);
    for (const auto& x : f["findings"]) EXPECT_NE(x["ruleId"], "compile-error") << x.dump(2);
  }
  // Without the database, from the repository root: `#include "kernels/harness.cuh"` is found in
  // the repository root, the last fallback folder.
  r = runLint("--no-cache --format json kernels/bank_conflict.cu", src);
  ASSERT_NE(r.rc, 2) << r.out << r.err;
  j = json::parse(r.out);
  for (const auto& x : j["files"][0]["findings"]) EXPECT_NE(x["ruleId"], "compile-error") << x.dump(2);
  EXPECT_GT(j["files"][0]["kernels"].get<int>(), 0);
}

TEST(CMakeProject, AMakefileThatIncludesAnotherIsFollowed) {
  std::string d = tempDir("mk-include");
  writeFile(d + "/config/common.mk", "CFLAGS += -I../third -DTILE=32\n");
  writeFile(d + "/app/Makefile", "include ../config/common.mk\n-include missing.mk\nall:\n\tnvcc $(CFLAGS) k.cu\n");
  writeFile(d + "/third/tile.h", "#define TILE_STRIDE TILE\n");
  writeFile(d + "/app/k.cu",
            "#include \"tile.h\"\n"
            "__global__ void k(float* a) { a[threadIdx.x * TILE_STRIDE] = 0; }  // strided\n"
            "int main() { k<<<1, 256>>>(0); }\n");
  auto r = runLint("--no-cache --format json --verbose app/k.cu", d);
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  auto j = json::parse(r.out);
  auto got = findingsOf(j);
  EXPECT_EQ(got, (std::set<std::tuple<std::string, int, std::string>>{{"k.cu", 2, "uncoalesced-access"}})) << r.out;
  EXPECT_NE(r.err.find("-DTILE=32"), std::string::npos) << r.err;
  fs::remove_all(d);
}
