// Real projects as they are: kernel files that only compile inside their includer, kernels in the
// project's own headers, the usual include layouts without compile_commands.json, compile errors
// that do not hide what parsed, and whole-project runs from a compilation database.
// The projects live in tests/projects/; their "expect:" comments give the findings, as in the
// fixtures, for every file of the project.
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
const std::string kProjects = std::string(GPUOPT_SOURCE_DIR) + "/tests/projects";

// (file relative to the project folder, line, rule)
using Findings = std::set<std::tuple<std::string, int, std::string>>;

Findings expectedIn(const std::string& dir, const std::vector<std::string>& files) {
  Findings f;
  for (const auto& rel : files)
    for (const auto& [line, rule] : expectAnnotations(readFile(dir + "/" + rel))) f.emplace(rel, line, rule);
  return f;
}

// Findings of every file of a JSON report, with paths relative to `dir` (the run's cwd).
Findings actualOf(const json& j) {
  Findings f;
  for (const auto& file : j["files"])
    for (const auto& x : file["findings"])
      f.emplace(x["location"]["file"].get<std::string>(), x["location"]["line"].get<int>(),
                x["ruleId"].get<std::string>());
  return f;
}

std::string describe(const Findings& f) {
  std::string s;
  for (const auto& [file, line, rule] : f) s += "  " + file + ":" + std::to_string(line) + " " + rule + "\n";
  return s.empty() ? "  (none)\n" : s;
}
}  // namespace

TEST(Projects, KernelFileThatOnlyCompilesInsideItsIncluderIsAnalysedThere) {
  std::string dir = kProjects + "/included_kernel";
  for (const char* mode : {"--cuda-path /usr/local/cuda", "--no-cuda"}) {
    if (std::string(mode).find("/usr/local") != std::string::npos && !fs::exists("/usr/local/cuda/include/cuda_runtime.h"))
      continue;
    auto r = runLint(std::string(mode) + " --format json kernel.cu", dir);
    ASSERT_EQ(r.rc, 1) << r.out << r.err;
    auto j = json::parse(r.out);
    EXPECT_TRUE(j["files"][0]["errors"].empty()) << j.dump(2);
    EXPECT_EQ(j["files"][0]["includer"], "main.cu") << mode;
    EXPECT_EQ(j["files"][0]["kernels"], 1);
    Findings want = expectedIn(dir, {"kernel.cu"}), got = actualOf(j);
    EXPECT_EQ(got, want) << mode << "\nwant:\n" << describe(want) << "got:\n" << describe(got);
    // The block shape comes from the includer's launch (64 threads): no "assuming" in messages.
    EXPECT_EQ(r.out.find("assuming"), std::string::npos) << r.out;
  }
  auto r = runLint("--verbose kernel.cu", dir);
  EXPECT_NE(r.err.find("kernel.cu: does not compile alone; analysed as included by main.cu"), std::string::npos) << r.err;
}

TEST(Projects, AnErrorInAHeaderTheFileIncludesIsItsEvenWhenTheIncluderReadItFirst) {
  // kernels.cuh compiles only inside main.cu, which includes util.cuh before it: kernels.cuh's own
  // #include of util.cuh is guarded away, yet nvcc compiling kernels.cuh (alone or in main.cu)
  // stops at util.cuh's error, so it is reported at that #include line (llm.c's headers).
  std::string dir = kProjects + "/shared_header_error";
  for (const char* mode : {"--cuda-path /usr/local/cuda", "--no-cuda"}) {
    if (std::string(mode).find("/usr/local") != std::string::npos && !fs::exists("/usr/local/cuda/include/cuda_runtime.h"))
      continue;
    auto r = runLint(std::string(mode) + " --no-cache --format json kernels.cuh", dir);
    ASSERT_EQ(r.rc, 1) << r.out << r.err;
    auto j = json::parse(r.out);
    EXPECT_EQ(j["files"][0]["includer"], "main.cu") << mode;
    Findings want = expectedIn(dir, {"kernels.cuh"}), got = actualOf(j);
    EXPECT_EQ(got, want) << mode << "\nwant:\n" << describe(want) << "got:\n" << describe(got);
    EXPECT_NE(r.out.find("in included file"), std::string::npos) << r.out;
  }
}

// `file` of the project `dir` linted alone, with the toolkit and with the bundled headers: analysed
// through `includer`, with exactly the findings its expect: comments give, no shape assumed.
static void expectAnalysedThroughIncluder(const std::string& dir, const std::string& file, const std::string& includer) {
  for (const char* mode : {"--cuda-path /usr/local/cuda", "--no-cuda"}) {
    if (std::string(mode).find("/usr/local") != std::string::npos && !fs::exists("/usr/local/cuda/include/cuda_runtime.h"))
      continue;
    auto r = runLint(std::string(mode) + " --no-cache --format json " + file, dir);
    ASSERT_EQ(r.rc, 1) << r.out << r.err;
    auto j = json::parse(r.out);
    EXPECT_EQ(j["files"][0]["includer"], includer) << mode;
    Findings want = expectedIn(dir, {file}), got = actualOf(j);
    EXPECT_EQ(got, want) << mode << "\nwant:\n" << describe(want) << "got:\n" << describe(got);
    EXPECT_EQ(r.out.find("assuming"), std::string::npos) << r.out;
  }
}

TEST(Projects, KernelsWithNoLaunchInTheirFileTakeTheBlockOfTheIncluderThatLaunchesThem) {
  // kernels.cu compiles alone, but main.cu includes it and launches its kernels with 96x2 blocks:
  // alone they would be judged with an assumed 256-thread block (a false race in `rows`).
  std::string dir = kProjects + "/launched_by_includer";
  expectAnalysedThroughIncluder(dir, "kernels.cu", "main.cu");
  auto r = runLint("--no-cache --verbose kernels.cu", dir);
  EXPECT_NE(r.err.find("kernels.cu: 2 of its kernels have no launch here; analysed as included by main.cu"), std::string::npos)
      << r.err;
  // The launch is in another file: named with it, not as a bare line of the kernel's file.
  EXPECT_NE(r.err.find("kernel rows: block 96x2x1 (launch at main.cu:3)"), std::string::npos) << r.err;
}

TEST(Projects, KernelTemplatesNothingInTheirHeaderInstantiatesAreAnalysedThroughTheIncluder) {
  // scatter.cuh compiles alone, but nothing in it instantiates its kernel template: codec.cu
  // includes it and launches scatterBlocks<float> with 128-thread blocks.
  std::string dir = kProjects + "/templates_instantiated_by_includer";
  expectAnalysedThroughIncluder(dir, "scatter.cuh", "codec.cu");
  auto r = runLint("--no-cache --verbose scatter.cuh", dir);
  EXPECT_NE(r.err.find("scatter.cuh: 1 of its kernel templates are instantiated nowhere here; analysed as included by codec.cu"),
            std::string::npos)
      << r.err;
}

TEST(Projects, LaunchInAnotherFileTheIncluderBringsInGivesTheShape) {
  // kernels.cu compiles only inside main.cu; the launches are in moves.cpp, which main.cu includes
  // too (HeCBench sss): the shape is read from there, not assumed.
  std::string dir = kProjects + "/launched_in_included_file";
  auto r = runLint("--no-cache --format json kernels.cu", dir);
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["files"][0]["includer"], "main.cu");
  Findings want = expectedIn(dir, {"kernels.cu"}), got = actualOf(j);
  EXPECT_EQ(got, want) << "want:\n" << describe(want) << "got:\n" << describe(got);
  EXPECT_EQ(r.out.find("assuming"), std::string::npos) << r.out;
  r = runLint("--no-cache --verbose kernels.cu", dir);
  EXPECT_NE(r.err.find("kernel slots: block 32x1x1 (launch at moves.cpp:3)"), std::string::npos) << r.err;
}

TEST(Projects, IncluderAnalysesTheKernelsOfTheProjectFilesItIncludes) {
  std::string dir = kProjects + "/included_kernel";
  auto r = runLint("--format json main.cu", dir);
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["files"][0]["kernels"], 1) << "relax, defined in kernel.cu";
  Findings want = expectedIn(dir, {"main.cu", "kernel.cu"}), got = actualOf(j);
  EXPECT_EQ(got, want) << "want:\n" << describe(want) << "got:\n" << describe(got);
  // Both files given: each finding once.
  r = runLint("--format json main.cu kernel.cu", dir);
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  j = json::parse(r.out);
  size_t n = 0;
  for (const auto& f : j["files"]) n += f["findings"].size();
  EXPECT_EQ(n, want.size()) << j.dump(2);
}

TEST(Projects, CommonFolderIsSearchedWithoutACompilationDatabase) {
  std::string dir = kProjects + "/layout";
  auto r = runLint("--format json --verbose src/app.cu", dir);
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  auto j = json::parse(r.out);
  EXPECT_TRUE(j["files"][0]["errors"].empty()) << j.dump(2);
  EXPECT_EQ(j["files"][0]["kernels"], 2) << "scale (app.cu) and transposeTile (common/util.cuh)";
  Findings want = expectedIn(dir, {"src/app.cu", "common/util.cuh"}), got = actualOf(j);
  EXPECT_EQ(got, want) << "want:\n" << describe(want) << "got:\n" << describe(got);
  EXPECT_NE(r.err.find("#include \"util.cuh\" found in the project-layout folder"), std::string::npos) << r.err;
  // NOLINT in the header applies to findings reported there.
  std::string d = tempDir("layout-nolint");
  fs::copy(dir, d, fs::copy_options::recursive);
  std::string h = readFile(d + "/common/util.cuh");
  h = std::regex_replace(h, std::regex("// expect: uncoalesced-access, bank-conflict"), "// NOLINT(bank-conflict)");
  writeFile(d + "/common/util.cuh", h);
  r = runLint("--format json src/app.cu", d);
  got = actualOf(json::parse(r.out));
  EXPECT_EQ(got, (Findings{{"common/util.cuh", 12, "uncoalesced-access"}})) << describe(got);
}

TEST(Projects, CompileErrorsAreFindingsAndNeverHideTheKernelsThatParsed) {
  std::string d = tempDir("cerr");
  // A broken host function beside a clean kernel: the kernel is analysed, the error reported.
  writeFile(d + "/host_broken.cu",
            "#include <cuda_runtime.h>\n"
            "__global__ void k(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = 1; }\n"
            "int main() { cudaDeviceProp p; cudaGetDeviceProperties(&p, 0); return p.clockRate; }\n");
  // Nothing but broken code: an input error.
  writeFile(d + "/all_broken.cu", "__global__ void k(float* a) { a[threadIdx.x] = undefined_thing; }\n");
  auto r = runLint("--format json host_broken.cu", d);
  EXPECT_EQ(r.rc, 1) << "compile errors fail the run by default (severity error)";
  auto j = json::parse(r.out);
  ASSERT_EQ(j["files"][0]["findings"].size(), 1u) << j.dump(2);
  auto f = j["files"][0]["findings"][0];
  EXPECT_EQ(f["ruleId"], "compile-error");
  EXPECT_EQ(f["severity"], "error");
  EXPECT_EQ(f["location"]["line"], 3);
  EXPECT_NE(f["message"].get<std::string>().find("no member named 'clockRate' in 'cudaDeviceProp'"), std::string::npos);
  EXPECT_NE(f["message"].get<std::string>().find("cudaDeviceGetAttribute"), std::string::npos) << "hint for removed fields";
  EXPECT_EQ(j["files"][0]["kernels"], 1);
  EXPECT_TRUE(j["files"][0]["errors"].empty());
  // Disabled, or made a note below --fail-on: the run passes.
  r = runLint("--disable compile-error host_broken.cu", d);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  writeFile(d + "/.gpuopt-lint.yaml", "severity: {compile-error: note}\nfail-on: warning\n");
  r = runLint("host_broken.cu", d);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("host_broken.cu:3:"), std::string::npos) << "still shown, as a note: " << r.out;
  fs::remove(d + "/.gpuopt-lint.yaml");
  // Every output format carries it.
  r = runLint("--format sarif host_broken.cu", d);
  EXPECT_NE(r.out.find("\"ruleId\": \"compile-error\""), std::string::npos) << r.out;
  r = runLint("--format github host_broken.cu", d);
  EXPECT_NE(r.out.find("::error file=host_broken.cu,line=3,col="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("title=gpuopt-lint compile-error"), std::string::npos) << r.out;
  // Nothing analysable: the same rule (compile errors are findings, exit 1), whether or not some
  // other function of the file compiles; a note says nothing could be analysed. The old rule made
  // this exit 2 and host_broken.cu exit 1, for the same kind of error.
  r = runLint("--format json all_broken.cu host_broken.cu", d);
  EXPECT_EQ(r.rc, 1) << r.out;
  j = json::parse(r.out);
  EXPECT_TRUE(j["files"][0]["errors"].empty()) << j.dump(2);
  ASSERT_EQ(j["files"][0]["findings"].size(), 1u) << j.dump(2);
  auto broken = j["files"][0]["findings"][0];
  EXPECT_EQ(broken["ruleId"], "compile-error");
  EXPECT_EQ(broken["location"]["line"], 1);
  EXPECT_EQ(broken["location"]["column"], 48);
  EXPECT_NE(broken["message"].get<std::string>().find("use of undeclared identifier 'undefined_thing'"), std::string::npos);
  std::string notes = broken["notes"].dump();
  EXPECT_NE(notes.find("nothing in this file could be analysed"), std::string::npos) << notes;
  EXPECT_NE(notes.find("kernel 'k' was not analysed"), std::string::npos) << notes;
  EXPECT_EQ(j["files"][1]["findings"].size(), 1u) << "host_broken.cu still reported";
}

TEST(Projects, KernelsNotAnalysedAreNamedWithTheReason) {
  std::string path = std::string(GPUOPT_SOURCE_DIR) + "/tests/fixtures/compile_errors.cu";
  auto r = runLint("--format json '" + path + "'");
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  auto j = json::parse(r.out);
  std::map<std::string, std::pair<int, int>> notes;  // message -> (finding line, note line)
  for (const auto& f : j["files"][0]["findings"])
    for (const auto& n : f["notes"]) notes[n["message"].get<std::string>()] = {f["location"]["line"], n["location"]["line"]};
  auto a = notes.find("kernel 'usesHeader' was not analysed: its body has code Clang could not compile (line 22)");
  ASSERT_NE(a, notes.end()) << j.dump(2);
  EXPECT_EQ(a->second, std::make_pair(22, 21)) << "at the error, pointing at the kernel";
  auto b = notes.find("kernel 'callsBroken' was not analysed: it calls 'helper', which has code Clang could not compile (line 26)");
  ASSERT_NE(b, notes.end()) << j.dump(2);
  EXPECT_EQ(b->second, std::make_pair(26, 30));
  // An instantiation Clang could not make (a missing 'template' keyword): read again with the
  // keyword where nvcc assumes it, the kernel that calls it is analysed (both instantiations), and
  // the place is a note that says so.
  EXPECT_EQ(notes.count("kernel 'castKernel' (2 instantiations) was not analysed: it calls 'castImpl', which has code "
                        "Clang could not compile (line 42)"),
            0u)
      << j.dump(2);
  bool keyword = false;
  for (const auto& f : j["files"][0]["findings"])
    if (f["ruleId"] == "compile-error" && f["location"]["line"] == 42) {
      keyword = f["severity"] == "note" && f["message"].get<std::string>().find("read it here as nvcc does") != std::string::npos;
    }
  EXPECT_TRUE(keyword) << j.dump(2);
  EXPECT_EQ(j["files"][0]["kernels"], 4) << "intact, clean and castKernel's two instantiations";
}

TEST(Projects, WholeProjectRunFromTheCompilationDatabase) {
  std::string d = tempDir("wholedb");
  writeFile(d + "/src/a.cu", "__global__ void a(float* x) { x[threadIdx.x * 32] = 0; }\n");
  writeFile(d + "/src/b.cu", "__global__ void b(float* x) { x[threadIdx.x] = 0; }\n");
  writeFile(d + "/src/host.cpp", "int main() { return 0; }\n");
  writeFile(d + "/src/c.cpp", "__global__ void c(float* x) { x[threadIdx.x * 16] = 0; }\n");  // -x cuda
  writeFile(d + "/build/compile_commands.json",
            "[{\"directory\": \"" + d + "/build\", \"file\": \"../src/a.cu\", \"command\": \"nvcc -c ../src/a.cu\"},\n"
            " {\"directory\": \"" + d + "/build\", \"file\": \"../src/b.cu\", \"command\": \"nvcc -c ../src/b.cu\"},\n"
            " {\"directory\": \"" + d + "/build\", \"file\": \"../src/c.cpp\", \"command\": \"clang++ -x cuda -c ../src/c.cpp\"},\n"
            " {\"directory\": \"" + d + "/build\", \"file\": \"../src/host.cpp\", \"command\": \"g++ -c ../src/host.cpp\"}]");
  auto r = runLint("-p build --format json", d);
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  auto j = json::parse(r.out);
  std::set<std::string> files;
  for (const auto& f : j["files"]) files.insert(f["file"].get<std::string>());
  EXPECT_EQ(files, (std::set<std::string>{"src/a.cu", "src/b.cu", "src/c.cpp"})) << j.dump(2);
  Findings got = actualOf(j);
  EXPECT_EQ(got, (Findings{{"src/a.cu", 1, "uncoalesced-access"}, {"src/c.cpp", 1, "uncoalesced-access"}})) << describe(got);
  EXPECT_EQ(r.err.find("\r"), std::string::npos) << "no progress line on a pipe";
  // A file given explicitly that is not in the database still works beside it.
  writeFile(d + "/extra.cu", "__global__ void e(float* x) { x[threadIdx.x * 8] = 0; }\n");
  r = runLint("-p build extra.cu", d);
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("extra.cu:1:"), std::string::npos) << r.out;
  // A database without CUDA files is a clear error.
  writeFile(d + "/hostonly/compile_commands.json",
            "[{\"directory\": \"" + d + "\", \"file\": \"src/host.cpp\", \"command\": \"g++ -c src/host.cpp\"}]");
  r = runLint("-p hostonly", d);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("has no CUDA translation unit"), std::string::npos) << r.err;
}

TEST(Projects, MakefileFlagsAreUsedWithoutACompilationDatabase) {
  std::string dir = kProjects + "/makefile";
  auto r = runLint("--format json --verbose kernels/main.cu", dir);
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  auto j = json::parse(r.out);
  EXPECT_TRUE(j["files"][0]["errors"].empty()) << j.dump(2);
  Findings want = expectedIn(dir, {"kernels/main.cu"}), got = actualOf(j);
  EXPECT_EQ(got, want) << "want:\n" << describe(want) << "got:\n" << describe(got);
  EXPECT_NE(r.err.find("flags from " + dir + "/Makefile: -DSTRIDE=32 -Ddfloat=float -I" + dir + "/third"),
            std::string::npos) << "conditional blocks and recipes are not read: " << r.err;
  EXPECT_NE(r.out.find("32 elements apart"), std::string::npos) << "STRIDE=32, not the DEBUG block's 1";
}

TEST(Projects, ACubBlockCollectiveOrdersTheBlockAsABarrierDoes) {
  // HeCBench adamw: every thread reads scale[blockIdx.x], cub::BlockReduce (a __syncthreads()
  // inside, in the toolkit's headers) runs, then thread 0 overwrites it: no race. Without the
  // collective, the same store races.
  if (!fs::exists("/usr/local/cuda/include/cccl/cub/cub.cuh") && !fs::exists("/usr/local/cuda/include/cub/cub.cuh"))
    GTEST_SKIP() << "no CUDA toolkit (CUB) here";
  std::string dir = tempDir("cub-collective");
  writeFile(dir + "/k.cu",
            "#include <cub/cub.cuh>\n"
            "__global__ void rescale(float* x, float* scale) {\n"
            "  using BR = cub::BlockReduce<float, 128>;\n"
            "  __shared__ typename BR::TempStorage tmp;\n"
            "  float v = x[blockIdx.x * 128 + threadIdx.x] * scale[blockIdx.x];\n"
            "  float m = BR(tmp).Sum(v);\n"
            "  if (threadIdx.x == 0) scale[blockIdx.x] = m;\n"
            "}\n"
            "__global__ void rescaleNoBarrier(float* x, float* scale) {\n"
            "  float v = x[blockIdx.x * 128 + threadIdx.x] * scale[blockIdx.x];\n"
            "  if (threadIdx.x == 0) scale[blockIdx.x] = v;\n"
            "}\n"
            "int main() { rescale<<<64, 128>>>(nullptr, nullptr); rescaleNoBarrier<<<64, 128>>>(nullptr, nullptr); }\n");
  RunResult r = runLint("--no-cache --cuda-path /usr/local/cuda --rules global-memory-race --format json '" + dir + "/k.cu'");
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  auto j = json::parse(r.out);
  std::set<int> lines;
  for (auto& f : j["files"][0]["findings"]) lines.insert(f["location"]["line"].get<int>());
  EXPECT_EQ(lines, std::set<int>{11}) << r.out;
  fs::remove_all(dir);
}

TEST(Projects, KernelsInTheProjectsHeadersAreTheFilesKernelsThroughItsIncluder) {
  // train.cu compiles only inside test_train.cu (its precision macro); its kernels are mostly in
  // llmc/layer.cuh. Analysed through the includer, the headers train.cu includes are its files
  // too (llm.c: 25 kernels in llmc/*.cuh, 0 analysed before).
  std::string dir = kProjects + "/header_kernels";
  auto r = runLint("--no-cache --format json train.cu", dir);
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["files"][0]["includer"], "test_train.cu");
  EXPECT_EQ(j["files"][0]["kernels"], 3) << "residual, and layerForward and layerScale of llmc/layer.cuh";
  Findings want = expectedIn(dir, {"train.cu", "llmc/layer.cuh"}), got = actualOf(j);
  EXPECT_EQ(got, want) << "want:\n" << describe(want) << "got:\n" << describe(got);
  // --header-filter selects them as in a parse of the file alone; '' lints train.cu only.
  r = runLint("--no-cache --format json --header-filter 'nothing-matches' train.cu", dir);
  j = json::parse(r.out);
  EXPECT_EQ(j["files"][0]["kernels"], 1) << r.out;
  got = actualOf(j);
  EXPECT_EQ(got, expectedIn(dir, {"train.cu"})) << describe(got);
  r = runLint("--no-cache --format json --header-filter 'layer\\.cuh$' train.cu", dir);
  j = json::parse(r.out);
  EXPECT_EQ(j["files"][0]["kernels"], 3) << r.out;
  // The includer's own kernels are not train.cu's (test_train.cu has none; its main is not linted).
}

TEST(Projects, WhatNvccsDeviceCompilationRejectsIsACompileError) {
  // Two errors nvcc 13 gives (checked with nvcc -c -arch=sm_90) that a parse of the file could
  // hide: a host variable read in a kernel (the device-side parse sees it; the host-side parse,
  // kept when it has fewer errors, does not), and a call of a __device__ function defined nowhere
  // in the file without -rdc=true (ptxas: Unresolved extern function). The kernels are analysed.
  if (!fs::exists("/usr/local/cuda/include/cuda_runtime.h")) GTEST_SKIP() << "no CUDA toolkit here";
  std::string d = tempDir("device-errors");
  writeFile(d + "/k.cu",
            "#include <cstdio>\n"
            "struct S { int a; };\n"
            "S hostVar;\n"
            "__device__ void external(int x);\n"
            "__global__ void readsHostVariable(int* out) {\n"
            "  out[threadIdx.x] = hostVar.a;\n"
            "}\n"
            "__global__ void callsUndefined(int* out) {\n"
            "  external(out[threadIdx.x]);\n"
            "  out[threadIdx.x * 32] = 0;\n"
            "}\n"
            "int main() { printf(\"%d\\n\", hostVar.a); return 0; }\n");
  auto r = runLint("--no-cache --cuda-path /usr/local/cuda --format json k.cu", d);
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  auto j = json::parse(r.out);
  Findings got = actualOf(j);
  // Line 10 is also a true race: thread 1 writes out[32], which thread 32 reads at line 9.
  EXPECT_EQ(got, (Findings{{"k.cu", 6, "compile-error"},
                           {"k.cu", 9, "compile-error"},
                           {"k.cu", 10, "global-memory-race"},
                           {"k.cu", 10, "uncoalesced-access"}}))
      << describe(got);
  EXPECT_NE(r.out.find("reference to __host__ variable 'hostVar'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Unresolved extern function"), std::string::npos) << r.out;
  // With relocatable device code the call is the linker's business: no error.
  r = runLint("--no-cache --cuda-path /usr/local/cuda --format json k.cu -- -rdc=true", d);
  got = actualOf(json::parse(r.out));
  EXPECT_EQ(got, (Findings{{"k.cu", 6, "compile-error"}, {"k.cu", 10, "global-memory-race"}, {"k.cu", 10, "uncoalesced-access"}}))
      << describe(got);
  fs::remove_all(d);
}

TEST(Projects, CurandMtgp32WithoutItsHeaderIsNvccsCompileError) {
  // Clang's CUDA wrapper includes curand_mtgp32_kernel.h in every parse; nvcc 13 does not, and
  // rejects a use of the MTGP32 generator without <curand_kernel.h> ("identifier
  // "curandStateMtgp32_t" is undefined", checked with nvcc -c -arch=sm_90). With the header
  // included, directly or at the top (inside the preamble), it compiles and nothing is said.
  if (!fs::exists("/usr/local/cuda/include/curand_kernel.h")) GTEST_SKIP() << "no CUDA toolkit (cuRAND) here";
  std::string d = tempDir("mtgp32");
  const std::string kernel =
      "__global__ void draw(curandStateMtgp32_t* s, unsigned* out) {\n"
      "  out[blockIdx.x * blockDim.x + threadIdx.x] = curand(s + blockIdx.x);\n"
      "}\n";
  writeFile(d + "/bare.cu", "#include <cuda_runtime.h>\n" + kernel);
  writeFile(d + "/included.cu", "#include <curand_kernel.h>\n" + kernel);
  writeFile(d + "/later.cu", "#include <cuda_runtime.h>\nstatic int x;\n#include <curand_kernel.h>\n" + kernel);
  auto r = runLint("--cuda-path /usr/local/cuda --cache-dir cache --format json bare.cu included.cu later.cu", d);
  ASSERT_EQ(r.rc, 1) << r.out << r.err;
  auto j = json::parse(r.out);
  Findings got = actualOf(j);
  EXPECT_EQ(got, (Findings{{"bare.cu", 2, "compile-error"}, {"bare.cu", 3, "compile-error"}})) << describe(got);
  EXPECT_NE(r.out.find("'curandStateMtgp32_t' is declared by curand_mtgp32.h, which Clang's CUDA headers include in "
                       "every file but nvcc does not"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("#include <curand_kernel.h>"), std::string::npos) << r.out;
  // The kernel is still analysed (the finding is not a Clang error).
  EXPECT_EQ(j["files"][0]["kernels"], 1) << r.out;
  fs::remove_all(d);
}

TEST(Projects, GivenFlagsSearchOnlyTheBuildsFolders) {
  // `#include <lib/h.h>` of a header in the file's own folder: nvcc finds it only with -I. With
  // flags given (after `--` here; a database or a Makefile alike), the search path is the build's:
  // one compile error at the include, none from inside the header Clang enters anyway (nvcc stops
  // there). With no flags at all, the project-layout folders stand in and the header is found.
  std::string d = tempDir("given-flags");
  fs::create_directories(d + "/lib");
  writeFile(d + "/lib/h.h", "#include <lib/deeper.h>\nusing real = float;\n");
  writeFile(d + "/lib/deeper.h", "#pragma once\n");
  writeFile(d + "/k.cu", "#include <lib/h.h>\n__global__ void k(real* a) { a[threadIdx.x * 32] = 1; }\n"
                         "void run(real* a) { k<<<1, 32>>>(a); }\n");
  auto given = runLint("--no-cache --no-cuda --format json k.cu -- -O2", d);
  auto jg = json::parse(given.out);
  // The kernel is still analysed (Clang read the header).
  EXPECT_EQ(actualOf(jg), (Findings{{"k.cu", 1, "compile-error"}, {"k.cu", 2, "uncoalesced-access"}}))
      << describe(actualOf(jg)) << given.err;
  EXPECT_EQ(jg["files"][0]["findings"][0]["message"].get<std::string>().find("deeper"), std::string::npos) << given.out;
  EXPECT_EQ(given.rc, 1);
  auto none = runLint("--no-cache --no-cuda --format json k.cu", d);
  auto jn = json::parse(none.out);
  EXPECT_EQ(actualOf(jn), (Findings{{"k.cu", 2, "uncoalesced-access"}})) << describe(actualOf(jn)) << none.err;
  fs::remove_all(d);
}

TEST(Projects, AutoParametersBeforeCxx20AreNvccs) {
  // `auto` parameters under -std=c++17 (and c++14): nvcc and GCC accept them as an extension
  // (GCC warns), Clang only in C++20. No compile error, and the kernel that calls one is analysed.
  std::string d = tempDir("auto-params");
  writeFile(d + "/k.cu",
            "__device__ float twice(auto x) { return 2 * x; }\n"
            "__global__ void k(float* a) { a[threadIdx.x * 32] = twice(a[threadIdx.x]); }\n"
            "void run(float* a) { k<<<1, 32>>>(a); }\n");
  for (const char* std : {"-std=c++17", "-std=c++14"}) {
    auto r = runLint(std::string("--no-cache --no-cuda --format json k.cu -- ") + std, d);
    auto j = json::parse(r.out);
    EXPECT_EQ(actualOf(j), (Findings{{"k.cu", 2, "uncoalesced-access"}})) << std << describe(actualOf(j)) << r.err;
    EXPECT_EQ(j["files"][0]["kernels"], 1) << r.out;
  }
  fs::remove_all(d);
}

TEST(Projects, ConstructionErrorsInTemplatesAreNvccsWhereInstantiated) {
  // `Grid(n, N)` of a struct no constructor fits, in a function template: nvcc 13 (and GCC) report
  // it only when the template is instantiated; a declaration `Grid g(n, N);` at once. The
  // uninstantiated case is in tests/fixtures/nvcc_constructs.cu.
  std::string d = tempDir("ctor-templates");
  const std::string head = "struct Grid { int blocks; };\n";
  writeFile(d + "/used.cu", head + "template <int N> int setup(int n) { Grid g = Grid(n, N); return g.blocks; }\n"
                                   "int run() { return setup<1>(2); }\n");
  writeFile(d + "/declared.cu", head + "template <int N> int setup(int n) { Grid g(n, N); return g.blocks; }\n");
  for (const char* name : {"used.cu", "declared.cu"}) {
    auto r = runLint(std::string("--no-cache --no-cuda --format json ") + name, d);
    auto j = json::parse(r.out);
    EXPECT_EQ(actualOf(j), (Findings{{name, 2, "compile-error"}})) << name << describe(actualOf(j)) << r.err;
  }
  fs::remove_all(d);
}

TEST(Projects, AnErrorDirectiveOfNvccsHostPassIsACompileError) {
  // nvcc compiles the file twice; in the host pass __CUDA_ARCH__ is not defined, so
  // `#if __CUDA_ARCH__ < 700` is true there and the #error stops it (nvcc 13 -c fails). Guarded by
  // `defined(__CUDA_ARCH__) &&`, it compiles. The device-side parse sees neither.
  if (!fs::exists("/usr/local/cuda/include/cuda_runtime.h")) GTEST_SKIP() << "no CUDA toolkit here";
  std::string d = tempDir("host-pass-error");
  const std::string kernel = "#error needs sm_70\n#endif\n__global__ void k(float* a) { a[threadIdx.x] = 1; }\n";
  writeFile(d + "/bad.cu", "#if __CUDA_ARCH__ < 700\n" + kernel);
  writeFile(d + "/good.cu", "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700\n" + kernel);
  auto bad = runLint("--cuda-path /usr/local/cuda --no-cache --format json bad.cu", d);
  auto jb = json::parse(bad.out);
  EXPECT_EQ(actualOf(jb), (Findings{{"bad.cu", 2, "compile-error"}})) << describe(actualOf(jb)) << bad.err;
  EXPECT_NE(bad.out.find("host pass"), std::string::npos) << bad.out;
  EXPECT_EQ(bad.rc, 1);
  auto good = runLint("--cuda-path /usr/local/cuda --no-cache --format json good.cu", d);
  EXPECT_EQ(actualOf(json::parse(good.out)), Findings{}) << good.out << good.err;
  EXPECT_EQ(good.rc, 0);
  fs::remove_all(d);
}

TEST(Projects, AProjectCudaHDoesNotReplaceTheToolkitsInClangsWrapper) {
  // A project header named cuda.h in an -I folder (darknet's src/cuda.h): nvcc compiles the file
  // (its own headers never include "cuda.h"); Clang's CUDA wrapper includes "cuda.h" by a quoted
  // name, which the -I folder answered ("cuda.h did not define CUDA_VERSION", then every launch an
  // error). The project's own `#include "cuda.h"` still gets the project's header.
  if (!fs::exists("/usr/local/cuda/include/cuda_runtime.h")) GTEST_SKIP() << "no CUDA toolkit here";
  std::string d = tempDir("project-cuda-h");
  fs::create_directories(d + "/src");
  writeFile(d + "/src/cuda.h", "#ifndef MY_CUDA_H\n#define MY_CUDA_H\nvoid check_error(int status);\n#endif\n");
  writeFile(d + "/k.cu", "#include \"cuda_runtime.h\"\n#include \"cuda.h\"\n"
                         "__global__ void k(float* a) { a[threadIdx.x * 32] = 1; }\n"
                         "void run(float* a) { k<<<1, 32>>>(a); check_error(0); }\n");
  auto r = runLint("--cuda-path /usr/local/cuda --no-cache --format json k.cu -- -Isrc/", d);
  auto j = json::parse(r.out);
  EXPECT_EQ(actualOf(j), (Findings{{"k.cu", 3, "uncoalesced-access"}})) << describe(actualOf(j)) << r.err;
  EXPECT_EQ(j["files"][0]["kernels"], 1) << r.out;
  fs::remove_all(d);
}

TEST(Projects, AsmStringErrorsAreNvccsOnlyWhereTheCodeIsGenerated) {
  // An asm template naming an operand it does not have (%2 of 2): nvcc reads the string only in
  // code it generates (its code generator rejects it: "asm operand index requested is larger than
  // the number of asm operands provided"). Clang checks a template's pattern at its definition.
  // A branch `if constexpr` discards: no error (nvcc 13 compiles it; tests/fixtures/nvcc_constructs.cu
  // has the twin). The branch an instantiation keeps: the error, from Clang's instantiation.
  // Device-side only, so with the toolkit (the bundled declarations parse the host side).
  if (!fs::exists("/usr/local/cuda/include/cuda_runtime.h")) GTEST_SKIP() << "no CUDA toolkit here";
  std::string d = tempDir("asm-instantiated");
  const std::string tmpl =
      "template <bool Hinted> __device__ unsigned ld(const unsigned* p) {\n"
      "  unsigned r;\n"
      "  if constexpr (Hinted) {\n"
      "    asm volatile(\"ld.global.L2::64B.u32 %0, [%1], %2;\" : \"=r\"(r) : \"l\"(p));\n"
      "  } else {\n"
      "    asm volatile(\"ld.global.u32 %0, [%1];\" : \"=r\"(r) : \"l\"(p));\n"
      "  }\n"
      "  return r;\n"
      "}\n";
  writeFile(d + "/kept.cu", tmpl + "__global__ void k(const unsigned* in, unsigned* a) { a[threadIdx.x] = ld<true>(in); }\n");
  writeFile(d + "/discarded.cu", tmpl + "__global__ void k(const unsigned* in, unsigned* a) { a[threadIdx.x] = ld<false>(in); }\n");
  auto kept = runLint("--cuda-path /usr/local/cuda --no-cache --format json kept.cu", d);
  auto jk = json::parse(kept.out);
  EXPECT_EQ(actualOf(jk), (Findings{{"kept.cu", 4, "compile-error"}})) << describe(actualOf(jk)) << kept.err;
  EXPECT_EQ(kept.rc, 1) << kept.out;
  auto disc = runLint("--cuda-path /usr/local/cuda --no-cache --format json discarded.cu", d);
  auto jd = json::parse(disc.out);
  EXPECT_EQ(actualOf(jd), Findings{}) << describe(actualOf(jd)) << disc.err;
  EXPECT_EQ(jd["files"][0]["kernels"], 1) << disc.out;
  EXPECT_EQ(disc.rc, 0) << disc.out << disc.err;
  fs::remove_all(d);
}

TEST(Projects, CcclAssertUnderNdebugIsNoCompileError) {
  // With NDEBUG, CCCL's assert.h declares `__host__ __device__ __assert_fail` when the CUDA
  // compiler is nvcc, over the `__device__` one Clang's CUDA wrapper provides: Clang rejects the
  // overload, nvcc (which reads no such wrapper) compiles the file (ggml sum.cu, argsort.cu).
  if (!fs::exists("/usr/local/cuda/include/cccl/cuda/std/cassert")) GTEST_SKIP() << "no CUDA toolkit (CCCL) here";
  std::string d = tempDir("cccl-ndebug");
  writeFile(d + "/k.cu",
            "#define NDEBUG\n#include <cuda/std/cassert>\n"
            "__global__ void k(float* a) { a[threadIdx.x * 32] = 1.0f; }\nvoid run(float* a) { k<<<1, 32>>>(a); }\n");
  auto r = runLint("--cuda-path /usr/local/cuda --no-cache --format json k.cu", d);
  auto j = json::parse(r.out);
  Findings got = actualOf(j);
  EXPECT_EQ(got, (Findings{{"k.cu", 3, "uncoalesced-access"}})) << describe(got) << r.err;
  EXPECT_EQ(j["files"][0]["kernels"], 1) << r.out;
  fs::remove_all(d);
}

// A launch wrapper defined in one unit and called from the others (a BLAS-style `axpy(n, a, x,
// incx, y, incy)` called from C files): the stride is what every caller in the database passes.
TEST(Projects, AWrappersParametersAreWhatTheOtherUnitsPass) {
  std::string d = tempDir("programcalls");
  writeFile(d + "/src/blas.cu",
            "__global__ void axpy_kernel(int n, float a, const float* x, int incx, float* y) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i < n) y[i] += a * x[i * incx];\n"
            "}\n"
            "void axpy_at(int n, float a, const float* x, int incx, float* y) {\n"
            "  axpy_kernel<<<(n + 255) / 256, 256>>>(n, a, x, incx, y);\n"
            "}\n"
            "void axpy(int n, float a, const float* x, int incx, float* y) { axpy_at(n, a, x, incx, y); }\n");
  auto caller = [&](const std::string& incx1, const std::string& incx2) {
    writeFile(d + "/src/net.c",
              "void axpy(int n, float a, const float* x, int incx, float* y);\n"
              "void step(int n, float* w, float* dw) {\n  axpy(n, -0.1f, dw, " + incx1 + ", w);\n}\n"
              "void step2(int n, float* w, float* dw) { axpy(n, 0.5f, dw, " + incx2 + ", w); }\n");
  };
  writeFile(d + "/build/compile_commands.json",
            "[{\"directory\": \"" + d + "/build\", \"file\": \"../src/blas.cu\", \"command\": \"nvcc -c ../src/blas.cu\"},\n"
            " {\"directory\": \"" + d + "/build\", \"file\": \"../src/net.c\", \"command\": \"gcc -c ../src/net.c\"}]");
  const std::string cache = "--cache-dir " + d + "/cache -p build --format json";
  auto findingAt3 = [&](const RunResult& r) -> std::string {
    const json j = json::parse(r.out);
    for (const auto& f : j["files"])
      for (const auto& x : f["findings"])
        if (x["location"]["line"] == 3 && x["ruleId"] == "uncoalesced-access") return x["severity"].get<std::string>();
    return "";
  };
  // Every caller passes 1: coalesced, nothing to say.
  caller("1", "1");
  auto r = runLint(cache, d);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(findingAt3(r), "");
  // Every caller passes 16: a 16-element stride, said for certain (the result cache sees the change).
  caller("16", "16");
  r = runLint(cache, d);
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_EQ(findingAt3(r), "warning") << r.out;
  EXPECT_NE(r.out.find("16 elements apart"), std::string::npos) << r.out;
  // Callers that disagree, or pass a run-time value: possible, with its assumption.
  caller("1", "n");
  r = runLint(cache, d);
  EXPECT_EQ(findingAt3(r), "note") << r.out;
  // Unchanged: from the result cache, still right.
  auto again = runLint(cache + " --verbose", d);
  EXPECT_EQ(findingAt3(again), "note") << again.out;
  EXPECT_NE(again.err.find("from the result cache"), std::string::npos) << again.err;
  // ... by the launcher, for a file named on the command line (it checks the stored result against
  // the cache's copy of the index; a whole database needs the analyzer to list its units).
  runLint(cache + " src/blas.cu", d);
  again = runLint(cache + " --verbose src/blas.cu", d);
  EXPECT_EQ(findingAt3(again), "note") << again.out;
  EXPECT_NE(again.err.find("without starting the analyzer"), std::string::npos) << again.err;
  // The wrapper's address taken in another file: its calls through the pointer are not known.
  caller("1", "1");
  writeFile(d + "/src/table.c", "void axpy(int n, float a, const float* x, int incx, float* y);\n"
                                "void (*ops[])(int, float, const float*, int, float*) = {axpy};\n");
  writeFile(d + "/build/compile_commands.json",
            "[{\"directory\": \"" + d + "/build\", \"file\": \"../src/blas.cu\", \"command\": \"nvcc -c ../src/blas.cu\"},\n"
            " {\"directory\": \"" + d + "/build\", \"file\": \"../src/table.c\", \"command\": \"gcc -c ../src/table.c\"},\n"
            " {\"directory\": \"" + d + "/build\", \"file\": \"../src/net.c\", \"command\": \"gcc -c ../src/net.c\"}]");
  r = runLint(cache, d);
  EXPECT_EQ(findingAt3(r), "note") << r.out;
}

// A constexpr host function called from a kernel: nvcc's error without --expt-relaxed-constexpr
// (fixture nvcc_rejects.cu), none with it, and none for a unit a Clang driver compiles (Clang
// accepts it, so its build does).
TEST(Projects, ConstexprCallsFromDeviceCodeFollowTheCommandsCompiler) {
  std::string d = tempDir("constexpr-calls");
  writeFile(d + "/k.cu",
            "constexpr int twice(int x) { return 2 * x; }\n"
            "__global__ void k(int* a) { a[threadIdx.x] = twice(threadIdx.x); }\n");
  auto rules = [&](const RunResult& r) {
    std::set<std::string> s;
    for (const auto& [file, line, rule] : actualOf(json::parse(r.out))) s.insert(rule);
    return s;
  };
  auto r = runLint("--no-cache --format json k.cu", d);
  EXPECT_EQ(rules(r), (std::set<std::string>{"compile-error"})) << r.out;
  EXPECT_NE(r.out.find("--expt-relaxed-constexpr"), std::string::npos) << r.out;
  r = runLint("--no-cache --format json k.cu -- --expt-relaxed-constexpr", d);
  EXPECT_TRUE(rules(r).empty()) << r.out;
  for (const std::string compiler : {"nvcc", "clang++"}) {
    writeFile(d + "/compile_commands.json", "[{\"directory\": \"" + d + "\", \"file\": \"k.cu\", \"command\": \"" +
                                                compiler + " -std=c++17 -c k.cu\"}]");
    r = runLint("--no-cache --format json -p . k.cu", d);
    EXPECT_EQ(rules(r).count("compile-error"), compiler == "nvcc" ? 1u : 0u) << compiler << "\n" << r.out;
  }
  fs::remove_all(d);
}
