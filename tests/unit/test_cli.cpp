// The binary end to end: exit codes, bad inputs, formats, compile_commands.json, CUDA modes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>

#include "test_util.h"

using namespace gpuopt::test;
namespace fs = std::filesystem;

namespace {
const std::string kClean =
    "__global__ void k(float* a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) a[i] = a[i] * 2.0f;\n"
    "}\n";
const std::string kStrided =
    "__global__ void k(float* o, const float* a) {\n"
    "  int i = threadIdx.x;\n"
    "  o[i] = a[32 * i];\n"
    "}\n";
std::string fixture(const std::string& n) { return std::string(GPUOPT_SOURCE_DIR) + "/tests/fixtures/" + n; }
// The severity of the compile-error finding at each line of a one-file JSON report.
std::map<int, std::string> compileErrorSeverities(const std::string& jsonOut) {
  std::map<int, std::string> at;
  auto j = nlohmann::json::parse(jsonOut);
  for (auto& f : j["files"][0]["findings"])
    if (f["ruleId"] == "compile-error") at[f["location"]["line"].get<int>()] = f["severity"].get<std::string>();
  return at;
}
}  // namespace

TEST(Cli, ExitCodesCleanFindingsAndErrors) {
  std::string d = tempDir("exit");
  writeFile(d + "/clean.cu", kClean);
  writeFile(d + "/bad.cu", kStrided);
  auto r = runLint("clean.cu", d);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  r = runLint("bad.cu", d);
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.out.find("bad.cu:3:10: warning: uncoalesced global load 'a[32 * i]'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[uncoalesced-access]"), std::string::npos);
  r = runLint("--bogus-flag clean.cu", d);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("unknown option '--bogus-flag'"), std::string::npos) << r.err;
  r = runLint("", d);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no input files"), std::string::npos);
}

TEST(Cli, BadInputsAreClearErrorsAndOtherFilesStillAnalysed) {
  std::string d = tempDir("badin");
  writeFile(d + "/bad.cu", kStrided);
  writeFile(d + "/syntax.cu", "__global__ void k(float* a) {\n  a[0] = ;\n}\n");
  writeFile(d + "/notcuda.py", "print('hi')\n");
  writeFile(d + "/huge.cu", std::string(4096, ' ') + kClean);
  {
    std::ofstream b(d + "/blob.cu", std::ios::binary);
    b << "\x7f" << "ELF" << '\0' << '\0' << "junk";
  }
  fs::create_directories(d + "/dir.cu");
  auto r = runLint("missing.cu syntax.cu notcuda.py blob.cu dir.cu bad.cu --max-file-size 100000", d);
  EXPECT_EQ(r.rc, 2) << "an input that could not be analysed wins over findings";
  EXPECT_NE(r.out.find("missing.cu: error: no such file"), std::string::npos) << r.out;
  // Code that parses with errors gives compile-error findings (exit 1 on its own), not an input
  // error, whatever else the file holds: here nothing else, which a note says.
  EXPECT_NE(r.out.find("syntax.cu:2:10: error: expected expression"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing in this file could be analysed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("syntax.cu: error: could not be parsed as CUDA"), std::string::npos) << r.out;
  EXPECT_EQ(runLint("syntax.cu", d).rc, 1);
  EXPECT_NE(r.out.find("notcuda.py: error: not a CUDA source file"), std::string::npos);
  EXPECT_NE(r.out.find("blob.cu: error: binary file"), std::string::npos);
  EXPECT_NE(r.out.find("dir.cu: error: is a directory"), std::string::npos);
  EXPECT_NE(r.out.find("bad.cu:3:10: warning"), std::string::npos) << "the good file is still reported";
  // Output in input order.
  EXPECT_LT(r.out.find("missing.cu"), r.out.find("syntax.cu"));
  EXPECT_LT(r.out.find("dir.cu"), r.out.find("bad.cu:3"));
  r = runLint("huge.cu --max-file-size 1000", d);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("huge.cu: error: file too large"), std::string::npos) << r.out;
}

TEST(Cli, ListExplainAndRuleSelection) {
  auto r = runLint("--list-rules");
  EXPECT_EQ(r.rc, 0);
  for (const char* id : {"divergent-branch", "uncoalesced-access", "missing-syncthreads", "bank-conflict",
                         "pageable-memcpy", "unsafe-warp-reduce", "barrier-divergence"})
    EXPECT_NE(r.out.find(id), std::string::npos) << id;
  r = runLint("--explain bank-conflict");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("## Why is this bad?"), std::string::npos);
  r = runLint("--explain nope");
  EXPECT_EQ(r.rc, 2);
  std::string f = fixture("bank_conflict.cu");
  r = runLint("--disable=bank-conflict,divergent-branch '" + f + "'");
  EXPECT_EQ(r.rc, 0) << r.out;
  r = runLint("--rules=bank-* '" + f + "'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out.find("[missing-syncthreads]"), std::string::npos);
}

TEST(Cli, ManyFilesInInputOrderAlsoInParallel) {
  std::vector<std::string> files = {"uncoalesced_access.cu", "bank_conflict.cu", "divergent_branch.cu",
                                    "missing_syncthreads.cu"};
  std::string args;
  for (auto& f : files) args += " '" + fixture(f) + "'";
  auto serial = runLint("-j 1 --format json" + args);
  auto parallel = runLint("-j 4 --format json" + args);
  EXPECT_EQ(serial.rc, 1);
  EXPECT_EQ(serial.out, parallel.out);
  auto j = nlohmann::json::parse(parallel.out);
  ASSERT_EQ(j["files"].size(), files.size());
  for (size_t i = 0; i < files.size(); ++i)
    EXPECT_NE(j["files"][i]["file"].get<std::string>().find(files[i]), std::string::npos);
}

TEST(Cli, CompileCommandsJsonFlagsAreUsed) {
  std::string d = tempDir("ccdb");
  writeFile(d + "/src/k.cu",
            "#ifndef STRIDE\n#define STRIDE 1\n#endif\n__global__ void k(float* a) { a[threadIdx.x] = a[STRIDE * threadIdx.x]; }\n");
  auto r = runLint("src/k.cu", d);
  EXPECT_EQ(r.rc, 0) << r.out;
  writeFile(d + "/compile_commands.json",
            "[{\"directory\": \"" + d + "\", \"file\": \"src/k.cu\", \"command\": \"/usr/local/cuda/bin/nvcc -arch=sm_80 "
            "--expt-relaxed-constexpr -Xptxas -v -DSTRIDE=32 -Iinclude -c src/k.cu -o k.o\"}]");
  r = runLint("--verbose src/k.cu", d);
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  // nvcc's own flags: what they mean to the front end is kept (the macro nvcc defines), the rest dropped.
  EXPECT_NE(r.err.find("kept -D__CUDACC_RELAXED_CONSTEXPR__ from `--expt-relaxed-constexpr`"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dropped (not for Clang): -Xptxas"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-DSTRIDE=32"), std::string::npos) << r.err;
  // A relative -I in the separate spelling is resolved against the entry's directory, not the cwd.
  writeFile(d + "/build/include/cfg.h", "#define STRIDE 32\n");
  writeFile(d + "/src/k2.cu", "#include \"cfg.h\"\n__global__ void k(float* a) { a[threadIdx.x] = a[STRIDE * threadIdx.x]; }\n");
  writeFile(d + "/build/compile_commands.json",
            "[{\"directory\": \"" + d + "/build\", \"file\": \"" + d + "/src/k2.cu\", \"arguments\": "
            "[\"nvcc\", \"-I\", \"include\", \"-c\", \"" + d + "/src/k2.cu\"]}]");
  r = runLint("-p " + d + "/build " + d + "/src/k2.cu", "/");
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("32 sectors for 4 useful"), std::string::npos) << r.out;
  // -p DIR points at it explicitly; -- adds arguments.
  std::string e = tempDir("ccdb2");
  writeFile(e + "/k.cu", readFile(d + "/src/k.cu"));
  r = runLint("k.cu -- -DSTRIDE=16", e);
  EXPECT_EQ(r.rc, 1) << r.out;
}

TEST(Cli, BundledHeaderAndToolkitFindTheSame) {
  std::string f = fixture("missing_syncthreads.cu");
  auto bundled = runLint("--no-cuda --format json '" + f + "'");
  EXPECT_EQ(bundled.rc, 1) << bundled.out;
  // (--no-cache: --verbose is not part of the result cache's key, so a stored result would answer.)
  auto v = runLint("--no-cuda --no-cache --verbose '" + f + "'");
  EXPECT_NE(v.err.find("-nocudainc"), std::string::npos);
  if (!fs::exists("/usr/local/cuda/include/cuda_runtime.h")) GTEST_SKIP() << "no CUDA toolkit on this machine";
  auto toolkit = runLint("--cuda-path /usr/local/cuda --format json '" + f + "'");
  EXPECT_EQ(toolkit.rc, 1);
  auto strip = [](const std::string& s) {
    auto j = nlohmann::json::parse(s);
    std::vector<std::pair<int, std::string>> v;
    for (auto& x : j["files"][0]["findings"]) v.emplace_back(x["location"]["line"].get<int>(), x["ruleId"].get<std::string>());
    return v;
  };
  EXPECT_EQ(strip(bundled.out), strip(toolkit.out));
}

TEST(Cli, UnsafeWarpReduceSaysWhichCaseItIs) {
  auto r = runLint("--rules=unsafe-warp-reduce '" + fixture("unsafe_warp_reduce.cu") + "'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("with no __syncwarp() and no volatile, so the compiler may keep values in registers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'volatile' alone relies on the warp running in lockstep"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("__syncwarp() is there but a step still reads and writes the same words"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lane 0 reads smem[16] while lane 16 writes it"), std::string::npos) << r.out;
}

TEST(Cli, RaceMessagesNameTwoThreads) {
  auto r = runLint("--rules=missing-syncthreads '" + fixture("missing_syncthreads.cu") + "'");
  EXPECT_EQ(r.rc, 1);
  // The pair named is one from two warps (threads 31 and 32): a pair inside one warp would need
  // only __syncwarp(); this one needs the __syncthreads() the rule asks for.
  EXPECT_NE(r.out.find("read-after-write race on shared memory: thread 32 reads array[31], written by thread 31 in the same barrier interval"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("write-after-read race on shared memory: thread 31 writes array[31], read by thread 32"), std::string::npos);
  EXPECT_NE(r.out.find("note: thread 31 writes array[31] here"), std::string::npos) << r.out;
}

TEST(Cli, GlobalRaceMessagesNameTwoWarpsWhenThereAreTwo) {
  auto r = runLint("--rules=global-memory-race '" + fixture("global_memory_race.cu") + "'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("thread 0 of a block reads 'key[i]' and thread 32 of the same block writes 'key[i]', the same "
                       "element (key[32])"),
            std::string::npos) << r.out;
}

TEST(Cli, ResourceDirOverrideIsChecked) {
  auto r = runLint("--resource-dir /nonexistent '" + fixture("nolint.cu") + "'");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("__clang_cuda_runtime_wrapper.h"), std::string::npos) << r.err;
}

TEST(Cli, SarifAndGithubFormatsFromTheBinary) {
  std::string d = tempDir("fmt");
  writeFile(d + "/sub/bad.cu", kStrided);
  auto r = runLint("--format sarif sub/bad.cu", d);
  EXPECT_EQ(r.rc, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "sub/bad.cu");
  r = runLint("--format github sub/bad.cu", d);
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out.rfind("::warning file=sub/bad.cu,line=3,col=10", 0), 0u) << r.out;
}

TEST(Cli, ConfigFileAndDumpConfig) {
  std::string d = tempDir("cfg");
  writeFile(d + "/bad.cu", kStrided);
  writeFile(d + "/.gpuopt-lint.yaml", "severity: {uncoalesced-access: error}\n");
  auto r = runLint("bad.cu", d);
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("error: uncoalesced global load"), std::string::npos) << r.out;
  writeFile(d + "/.gpuopt-lint.yaml", "fail-on: error\n");
  r = runLint("bad.cu", d);
  EXPECT_EQ(r.rc, 0) << "warnings below the fail threshold do not fail";
  EXPECT_NE(r.out.find("warning:"), std::string::npos);
  r = runLint("--fail-on warning bad.cu", d);
  EXPECT_EQ(r.rc, 1) << "command line wins";
  r = runLint("--dump-config bad.cu", d);
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("fail-on: error"), std::string::npos) << r.out;
  writeFile(d + "/.gpuopt-lint.yaml", "block-dim: [64, 64]\n");
  r = runLint("bad.cu", d);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find(".gpuopt-lint.yaml:1:"), std::string::npos) << r.out;
}

// --block-dim NAME=X,Y,Z gives one kernel its shape where no launch in the code does; a launch
// written in the code wins over it (and over --block-dim for every kernel).
TEST(Cli, BlockDimPerKernelAndLaunchesWin) {
  std::string d = tempDir("blockdim");
  writeFile(d + "/k.cu",
            "// each row reads the next row's element with no barrier: a race between warps\n"
            "__global__ void rows(float* out) {\n"
            "  __shared__ float s[16][32];\n"
            "  s[threadIdx.y][threadIdx.x] = threadIdx.x;\n"
            "  out[threadIdx.y * 32 + threadIdx.x] = s[(threadIdx.y + 1) % blockDim.y][threadIdx.x];\n"
            "}\n"
            "__global__ void launched(float* out) {\n"
            "  __shared__ float s[256];\n"
            "  s[threadIdx.x] = 1.0f;\n"
            "  out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];\n"
            "}\n"
            "void run(float* o) { launched<<<1, 256>>>(o); }\n");
  auto findings = [](const std::string& out) {
    std::vector<std::string> v;
    auto j = nlohmann::json::parse(out);  // (a range-for over a member of the temporary would dangle)
    for (auto& f : j["files"][0]["findings"])
      v.push_back(f["ruleId"].get<std::string>() + ":" + std::to_string(f["location"]["line"].get<int>()) + ":" +
                  f["severity"].get<std::string>());
    std::sort(v.begin(), v.end());
    return v;
  };
  // Per kernel: rows as 32x4 (its real shape) races between warps: definite, an error.
  auto given = runLint("--no-cuda --format json --rules missing-syncthreads --block-dim rows=32,4 k.cu", d);
  EXPECT_EQ(findings(given.out), (std::vector<std::string>{"missing-syncthreads:10:error", "missing-syncthreads:5:error"}))
      << given.out;
  // A --block-dim for every kernel does not override the launch of 'launched' (line 10 is judged as
  // launched: 256 threads, a race between warps; with 8 threads it would be one warp's); rows gets
  // an 8x1 block, whose one row reads its own elements.
  auto all = runLint("--no-cuda --format json --rules missing-syncthreads --block-dim 8 k.cu", d);
  EXPECT_EQ(findings(all.out), (std::vector<std::string>{"missing-syncthreads:10:error"})) << all.out;
  // Without either: rows is judged under plausible 2-D shapes; its race is found with each.
  auto guessed = runLint("--no-cuda --format json --rules missing-syncthreads k.cu", d);
  auto j = nlohmann::json::parse(guessed.out);
  bool said = false;
  for (auto& f : j["files"][0]["findings"])
    if (f["location"]["line"] == 5) said = f["message"].get<std::string>().find("block shape is not known") != std::string::npos;
  EXPECT_TRUE(said) << guessed.out;
}

// Instantiations of one template past the call-depth limit (a sorting network's unrolled
// compare-and-swap in warp-ctc's bundled moderngpu): their lines are named once, not once per
// instantiation (third stop check: the same clause 18 times).
TEST(Cli, UnreachedLinesAreNamedOncePerReason) {
  std::string d = tempDir("coverage-once");
  std::string chain = "template <int N> __device__ void f18(float* p) { p[threadIdx.x * 32 + N] = 1.0f; }\n"
                      "__device__ void f17(float* p) { f18<0>(p); f18<1>(p); f18<2>(p); }\n";
  for (int i = 16; i >= 1; --i)
    chain += "__device__ void f" + std::to_string(i) + "(float* p) { f" + std::to_string(i + 1) + "(p); }\n";
  writeFile(d + "/k.cu", chain + "__global__ void deep(float* p) { f1(p); }\n");
  auto text = runLint("--no-cuda --no-cache k.cu", d);
  const std::string clause = "line 1 was not analysed: 'f18' was not walked";
  size_t at = text.out.find(clause);
  ASSERT_NE(at, std::string::npos) << text.out;
  EXPECT_EQ(text.out.find(clause, at + 1), std::string::npos) << "named more than once: " << text.out;
  EXPECT_NE(text.out.find("(0 of 3 memory accesses analysed)"), std::string::npos) << text.out;
}

// Inline PTX that touches memory is an access (fourth stop check: cuda_hgemm's ldmatrix tiles had
// been called fully analysed, then named as not analysed): ldmatrix at each lane's row address (16
// bytes per lane, lanes 0-31 for .x4), cp.async as a global load and a shared store, both through
// __cvta_generic_to_shared. What the model does not read (a predicated load) is counted and
// named. Group bookkeeping is not memory.
TEST(Cli, InlinePtxMemoryIsModelledOrNamed) {
  std::string d = tempDir("coverage-asm");
  writeFile(d + "/k.cu",
            "__global__ void tile(const int4* g, unsigned* out) {\n"
            "  __shared__ __align__(16) unsigned short s[64][32];\n"
            "  unsigned lane = threadIdx.x % 32;\n"
            "  unsigned dst = (unsigned)__cvta_generic_to_shared(&s[lane][0]);\n"
            "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\\n\" ::\"r\"(dst), \"l\"(g + threadIdx.x));\n"
            "  asm volatile(\"cp.async.commit_group;\\n\" ::);\n"
            "  asm volatile(\"cp.async.wait_all;\\n\" ::);\n"
            "  __syncthreads();\n"
            "  unsigned a = (unsigned)__cvta_generic_to_shared(&s[lane % 16][(lane / 16) * 8]);\n"
            "  unsigned r0, r1, r2, r3, x = 0;\n"
            "  asm volatile(\"ldmatrix.sync.aligned.x4.m8n8.shared.b16 {%0, %1, %2, %3}, [%4];\\n\"\n"
            "               : \"=r\"(r0), \"=r\"(r1), \"=r\"(r2), \"=r\"(r3) : \"r\"(a));\n"
            "  asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %1, 0; @p ld.global.u32 %0, [%2]; }\" : \"=r\"(x) : \"r\"(lane), \"l\"(out));\n"
            "  out[blockIdx.x * 32 + threadIdx.x] = r0 + r1 + r2 + r3 + x;\n"
            "}\n"
            "void go(const int4* g, unsigned* o) { tile<<<4, 32>>>(g, o); }\n");
  auto text = runLint("--no-cuda --no-cache k.cu", d);
  // 64-byte rows: rows two apart share banks, 4-way for both (ncu on the H200, bench/data/ptx-probe).
  EXPECT_NE(text.out.find("k.cu:5:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("4-way bank conflict on shared store (inline PTX 'cp.async.cg.shared.global')"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("4-way bank conflict on shared load (inline PTX 'ldmatrix.sync.aligned.x4.m8n8.shared.b16')"), std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("line 5 was not analysed"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("line 13 was not analysed: inline PTX 'ld.global.u32' reads or writes memory the model does not evaluate"),
            std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(3 of 4 memory accesses analysed)"), std::string::npos) << text.out;
  EXPECT_NE(text.err.find("(1 kernel, 1 partly analysed)"), std::string::npos) << text.err;
}

// "0 findings" means "checked": code the model does not reach is named on the kernel (text note,
// summary count, JSON per kernel, SARIF notification), and code it does reach is counted.
TEST(Cli, KernelsAnalysedInPartAreNamed) {
  std::string d = tempDir("coverage");
  std::string chain;
  // f1 calls f2 ... f17 calls f18, whose store is deeper than the model follows calls.
  for (int i = 18; i >= 1; --i)
    chain += i == 18 ? "__device__ void f18(float* p) { p[threadIdx.x * 32] = 1.0f; }\n"
                     : "__device__ void f" + std::to_string(i) + "(float* p) { f" + std::to_string(i + 1) + "(p); }\n";
  writeFile(d + "/k.cu", chain +
            "__global__ void deep(float* p) {\n"
            "  p[threadIdx.x] = 0.0f;\n"
            "  f1(p);\n"
            "}\n"
            "__global__ void whole(const float* in, float* out, int lo, int hi) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i < lo || i > hi) return;\n"
            "  out[i] = in[i];\n"
            "}\n");
  auto text = runLint("--no-cuda --no-cache k.cu", d);
  EXPECT_NE(text.out.find("note: kernel 'deep': line 1 was not analysed: 'f18' was not walked: calls nested more than 16 deep"),
            std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(1 of 2 memory accesses analysed)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("kernel 'whole'"), std::string::npos) << "code after a guard on parameters is analysed: " << text.out;
  EXPECT_NE(text.err.find("(2 kernels, 1 partly analysed)"), std::string::npos) << text.err;
  auto json = nlohmann::json::parse(runLint("--no-cuda --no-cache --format json k.cu", d).out);
  auto& f = json["files"][0];
  EXPECT_EQ(f["partlyAnalysed"], 1);
  EXPECT_EQ(f["accessesTotal"], 4);
  EXPECT_EQ(f["accessesReached"], 3);
  ASSERT_EQ(f["kernelCoverage"].size(), 2u);
  EXPECT_EQ(f["kernelCoverage"][0]["kernel"], "deep");
  EXPECT_EQ(f["kernelCoverage"][0]["unanalysed"][0]["firstLine"], 1);
  auto sarif = nlohmann::json::parse(runLint("--no-cuda --no-cache --format sarif k.cu", d).out);
  auto& notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"];
  ASSERT_EQ(notes.size(), 1u) << sarif.dump();
  EXPECT_EQ(notes[0]["level"], "note");
  EXPECT_EQ(notes[0]["properties"]["accessesTotal"], 2);
}

// A kernel template that nothing instantiates (a header-only kernel library linted alone: held-out
// wave 4, ginkgo's headers) is named, not counted as checked; templates of the headers a unit
// includes are left to the units that launch them, and an instantiated one is analysed.
TEST(Cli, KernelTemplatesNeverInstantiatedAreNamed) {
  std::string d = tempDir("uninstantiated");
  writeFile(d + "/lib.cuh",
            "#pragma once\n"
            "template <int B, typename T>\n"
            "__global__ void scan(T* a, int n) {\n"
            "  __shared__ T s[B];\n"
            "  s[threadIdx.x] = a[threadIdx.x * 32];\n"
            "  __syncthreads();\n"
            "  a[threadIdx.x] = s[B - 1 - threadIdx.x];\n"
            "}\n"
            "template <typename T>\n"
            "__global__ void fill(T* a, T v) { a[blockIdx.x * blockDim.x + threadIdx.x] = v; }\n");
  writeFile(d + "/use.cu",
            "#include \"lib.cuh\"\n"
            "template <typename T>\n"
            "__global__ void local(T* a) { a[threadIdx.x] = T(); }\n"
            "void run(float* a) { fill<<<1, 64>>>(a, 1.0f); }\n");
  auto header = runLint("--no-cuda --no-cache lib.cuh", d);
  EXPECT_NE(header.out.find("lib.cuh:3:17: note: kernel 'scan': a kernel template that nothing in this file instantiates"),
            std::string::npos) << header.out;
  EXPECT_NE(header.out.find("(0 of 4 memory accesses analysed)"), std::string::npos) << header.out;
  // use.cu includes the header and instantiates fill<float>: the header is analysed through it
  // (fill analysed with its launch), and scan, which nothing instantiates there either, is named.
  EXPECT_EQ(header.out.find("kernel 'fill': a kernel template that nothing"), std::string::npos) << header.out;
  EXPECT_NE(header.err.find("(1 kernel, 1 partly analysed)"), std::string::npos) << header.err;
  auto json = nlohmann::json::parse(runLint("--no-cuda --no-cache --format json lib.cuh", d).out);
  EXPECT_EQ(json["files"][0]["partlyAnalysed"], 1) << json.dump();
  EXPECT_EQ(json["files"][0]["includer"], "use.cu") << json.dump();
  EXPECT_EQ(json["files"][0]["kernels"], 1) << json.dump();
  // The unit: its own never-instantiated template is named; the header's are not (fill is
  // launched and analysed, scan belongs to whichever unit launches it).
  auto unit = runLint("--no-cuda --no-cache use.cu", d);
  EXPECT_NE(unit.out.find("kernel 'local': a kernel template that nothing"), std::string::npos) << unit.out;
  EXPECT_EQ(unit.out.find("kernel 'scan'"), std::string::npos) << unit.out;
  EXPECT_EQ(unit.out.find("kernel 'fill'"), std::string::npos) << unit.out;
  EXPECT_NE(unit.err.find("(1 kernel, 1 partly analysed)"), std::string::npos) << unit.err;
}

// `C<T>::f<N>(x)` without `template`, which nvcc reads as the member template's call: the file is
// read with the keyword inserted there, and what comes after it on the line is reported at its
// column on disk (the inserted text is not counted), in text and JSON alike.
TEST(Cli, MemberTemplateWithoutKeywordIsReadAsNvccDoesAtColumnsOnDisk) {
  std::string d = tempDir("template-keyword");
  const std::string line = "  Step<B>::apply<N>(a); a[threadIdx.x * 64] = 1.0f;";
  writeFile(d + "/k.cu",
            "template <int B> struct Step {\n"
            "  template <int N> __device__ static void apply(float* a) { a[threadIdx.x] += N; }\n"
            "};\n"
            "template <int N, int B> __global__ void twice(float* a) {\n" +
                line + "\n"
                "}\n"
                "void run(float* a) { twice<2, 4><<<1, 256>>>(a); }\n");
  auto r = runLint("--no-cuda --no-cache --format json k.cu", d);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["files"][0]["kernels"], 1) << r.out << r.err;
  bool store = false, note = false;
  for (const auto& x : j["files"][0]["findings"]) {
    if (x["location"]["line"] != 5) continue;
    int col = x["location"]["column"].get<int>();
    if (x["ruleId"] == "uncoalesced-access") {
      store = true;
      EXPECT_EQ(col, static_cast<int>(line.find("a[threadIdx.x * 64]")) + 1) << x.dump();
    }
    if (x["ruleId"] == "compile-error") {
      note = true;
      EXPECT_EQ(x["severity"], "note") << x.dump();
      EXPECT_EQ(col, 3) << x.dump();
    }
  }
  EXPECT_TRUE(store) << r.out;
  EXPECT_TRUE(note) << r.out;
  auto v = runLint("--no-cuda --no-cache --verbose k.cu", d);
  EXPECT_NE(v.err.find("member templates called without `template`"), std::string::npos) << v.err;
}

// ... also when the call is in a header of the file's leading includes, which the preamble holds as
// on disk: the keyword parse takes no such preamble (cold, then warm), and the kernel is analysed.
TEST(Cli, MemberTemplateWithoutKeywordInAPreambleHeader) {
  if (!fs::exists("/usr/local/cuda/include/cuda_runtime.h")) GTEST_SKIP() << "no CUDA toolkit here: no preamble";
  std::string d = tempDir("template-keyword-preamble");
  writeFile(d + "/lib.cuh",
            "#pragma once\n"
            "template <int B> struct Step {\n"
            "  template <int N> __device__ static void apply(float* a) { a[threadIdx.x * N] += 1.0f; }\n"
            "};\n"
            "template <int N, int B> __device__ void call(float* a) { Step<B>::apply<N>(a); }\n");
  writeFile(d + "/main.cu",
            "#include \"lib.cuh\"\n"
            "#include <cstdio>\n"
            "template <int N, int B> __global__ void twice(float* a) { call<N, B>(a); }\n"
            "void run(float* a) { twice<32, 4><<<1, 256>>>(a); }\n");
  for (int run = 0; run < 2; ++run) {
    fs::remove_all(fs::path(d) / "cache" / "v1" / "results");
    auto r = runLint("--cuda-path /usr/local/cuda --cache-dir '" + d + "/cache' --format json main.cu", d);
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["files"][0]["kernels"], 1) << "run " << run << "\n" << r.out << r.err;
  }
}

// Issue 31: at most --max-instantiations instantiations of one kernel template are analysed, chosen
// to cover every value of each template argument (so the one instantiation whose arguments make
// the stride 32, last in source order, is among them), and the others are named on the template.
TEST(Cli, InstantiationsBeyondTheCapCoverEveryArgumentValueAndAreNamed) {
  std::string d = tempDir("inst-cap");
  writeFile(d + "/k.cu",
            "template <int A, int B>\n"
            "__global__ void k(float* a) {\n"
            "  a[threadIdx.x * (A * B == 9 ? 32 : 1)] = 0.0f;\n"
            "}\n"
            "void run(float* a) {\n"
            "  k<1, 1><<<64, 32>>>(a);\n"
            "  k<1, 2><<<64, 32>>>(a);\n"
            "  k<2, 1><<<64, 32>>>(a);\n"
            "  k<2, 2><<<64, 32>>>(a);\n"
            "  k<3, 3><<<64, 32>>>(a);\n"
            "}\n");
  auto capped = runLint("--no-cuda --no-cache --max-instantiations 3 --format json k.cu", d);
  auto j = nlohmann::json::parse(capped.out);
  auto& f = j["files"][0];
  EXPECT_EQ(f["kernels"], 3) << capped.out;
  EXPECT_EQ(f["partlyAnalysed"], 1);
  bool stride = false;
  for (auto& x : f["findings"])
    if (x["ruleId"] == "uncoalesced-access" && x["location"]["line"] == 3) stride = true;
  EXPECT_TRUE(stride) << "k<3, 3> covers the values 3 and is analysed: " << capped.out;
  bool named = false;
  for (auto& c : f["kernelCoverage"])
    if (c.contains("notAnalysed")) {
      named = true;
      EXPECT_EQ(c["kernel"], "k");
      EXPECT_EQ(c["accessesReached"], 0);
      EXPECT_EQ(c["accessesTotal"], 2) << "one store in each of the 2 left out";
      EXPECT_NE(c["notAnalysed"].get<std::string>().find("2 of its 5 instantiations in this file were not analysed"),
                std::string::npos) << c.dump();
    }
  EXPECT_TRUE(named) << capped.out;
  auto text = runLint("--no-cuda --no-cache --max-instantiations 3 k.cu", d);
  EXPECT_NE(text.out.find("note: kernel 'k': 2 of its 5 instantiations in this file were not analysed"), std::string::npos)
      << text.out;
  // Not "(0 of 2 memory accesses analysed)", which read as if nothing of 'k' were (DualSPHysics'
  // force kernel, 4 of 2160 instantiations analysed, eleventh stop check).
  EXPECT_NE(text.out.find("(the 2 memory accesses of those instantiations)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("(0 of 2 memory accesses analysed)"), std::string::npos) << text.out;
  // The configuration file says the same; 0 analyses every instantiation.
  writeFile(d + "/.gpuopt-lint.yaml", "max-instantiations: 0\n");
  auto all = nlohmann::json::parse(runLint("--no-cuda --no-cache --format json k.cu", d).out);
  EXPECT_EQ(all["files"][0]["kernels"], 5);
  EXPECT_EQ(all["files"][0]["partlyAnalysed"], 0);
  writeFile(d + "/.gpuopt-lint.yaml", "max-instantiations: -2\n");
  auto bad = runLint("--no-cuda --no-cache k.cu", d);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE((bad.out + bad.err).find("'max-instantiations' must be a whole number"), std::string::npos) << bad.out << bad.err;
  auto badFlag = runLint("--no-cuda --max-instantiations many k.cu", d);
  EXPECT_EQ(badFlag.rc, 2);
  EXPECT_NE(badFlag.err.find("--max-instantiations expects a whole number"), std::string::npos) << badFlag.err;
}

TEST(Cli, PerRuleOptionsChangeWhatIsReported) {
  std::string d = tempDir("opts");
  writeFile(d + "/k.cu", readFile(fixture("bank_conflict.cu")));
  auto all = runLint("--rules=bank-conflict --format json k.cu", d);
  writeFile(d + "/.gpuopt-lint.yaml", "options: {bank-conflict: {min-ways: 4}}\n");
  auto some = runLint("--rules=bank-conflict --format json k.cu", d);
  auto ways = [](const std::string& out) {
    std::vector<std::string> v;
    auto j = nlohmann::json::parse(out);
    for (auto& f : j["files"][0]["findings"])
      v.push_back(f["message"].get<std::string>().substr(0, f["message"].get<std::string>().find('-')));
    return v;
  };
  auto a = ways(all.out), b = ways(some.out);
  EXPECT_NE(std::find(a.begin(), a.end(), "2"), a.end()) << "the fixture has 2-way conflicts";
  EXPECT_EQ(std::find(b.begin(), b.end(), "2"), b.end()) << "min-ways: 4 hides them";
  EXPECT_NE(std::find(b.begin(), b.end(), "32"), b.end()) << "and keeps the 32-way one";
  writeFile(d + "/.gpuopt-lint.yaml", "options: {uncoalesced-access: {max-efficiency: 0.2}}\n");
  writeFile(d + "/s.cu", "__global__ void k(float* a) { a[threadIdx.x] = a[2 * threadIdx.x] + a[32 * threadIdx.x]; }\n");
  auto u = runLint("--rules=uncoalesced-access s.cu", d);
  EXPECT_EQ(u.out.find("'a[2 * threadIdx.x]'"), std::string::npos) << "50% is above the 20% threshold";
  EXPECT_NE(u.out.find("'a[32 * threadIdx.x]'"), std::string::npos) << u.out;
}

TEST(Cli, FixPadsSharedArrayAndTheFindingIsGone) {
  std::string d = tempDir("fix");
  std::string src = readFile(fixture("bank_conflict.cu"));
  writeFile(d + "/t.cu", src);
  auto dry = runLint("--fix --dry-run --rules=bank-conflict t.cu", d);
  EXPECT_NE(dry.out.find("+  __shared__ float mat[BLOCK_SIZE][BLOCK_SIZE + 1];"), std::string::npos) << dry.out;
  EXPECT_EQ(readFile(d + "/t.cu"), src) << "--dry-run changes nothing";
  auto r = runLint("--fix --rules=bank-conflict t.cu", d);
  EXPECT_EQ(r.rc, 1);
  std::string fixed = readFile(d + "/t.cu");
  EXPECT_NE(fixed.find("__shared__ float mat[BLOCK_SIZE][BLOCK_SIZE + 1];"), std::string::npos);
  auto after = runLint("--rules=bank-conflict --format json t.cu", d);
  auto j = nlohmann::json::parse(after.out);
  for (auto& f : j["files"][0]["findings"]) EXPECT_NE(f["location"]["line"], 12) << "the transpose conflict is fixed";
  EXPECT_EQ(j["files"][0]["errors"].size(), 0u) << "the fixed file still parses";
  if (fs::exists("/usr/local/cuda/bin/nvcc")) {  // and nvcc compiles it
    int rc = std::system(("/usr/local/cuda/bin/nvcc -arch=sm_90 -c '" + d + "/t.cu' -o '" + d + "/t.o' > '" + d +
                          "/nvcc.log' 2>&1").c_str());
    EXPECT_EQ(rc, 0) << readFile(d + "/nvcc.log");
  }
}

TEST(Cli, DemoWithoutGpuIsAClearErrorWithItsOwnExitCode) {
  auto r = runLint("--demo list");
  if (!GPUOPT_HAVE_CUDA_DEMOS) {
    EXPECT_EQ(r.rc, 3);
    EXPECT_NE(r.err.find("built without the CUDA toolkit"), std::string::npos);
    return;
  }
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("bank-conflict"), std::string::npos);
  r = runLint("--demo no-such-demo");
  EXPECT_EQ(r.rc, 2);
  r = runLint("--demo bank-conflict");
  if (fs::exists("/dev/nvidiactl")) GTEST_SKIP() << "a GPU is present; the no-GPU path is not testable here";
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("no CUDA GPU available"), std::string::npos) << r.err;
  // No driver at all is not an "insufficient" one.
  if (std::system("ldconfig -p | grep -q 'libcuda\\.so\\.1 '") != 0) {
    EXPECT_NE(r.err.find("no NVIDIA driver is installed"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("insufficient"), std::string::npos) << r.err;
  }
}

TEST(Cli, RepeatsAreGroupedAndSarifHasStableFingerprints) {
  std::string d = tempDir("group");
  std::string body =
      "__global__ void k(float* a) {\n"
      "  int i = threadIdx.x;\n"
      "  a[32 * i] = 1;\n"
      "  a[32 * i + 1] = 2;\n"
      "  a[32 * i + 2] = 3;\n"
      "}\n";
  writeFile(d + "/k.cu", body);
  auto r = runLint("k.cu", d);
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("; and 2 more like it in 'k' (lines 4, 5)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("k.cu:4:"), std::string::npos) << "folded into the first: " << r.out;
  r = runLint("--no-group k.cu", d);
  EXPECT_NE(r.out.find("k.cu:4:3: warning"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("k.cu:5:3: warning"), std::string::npos) << r.out;
  r = runLint("--format sarif k.cu", d);
  auto j = nlohmann::json::parse(r.out);
  auto& res = j["runs"][0]["results"];
  ASSERT_EQ(res.size(), 1u);
  std::string fp = res[0]["partialFingerprints"]["gpuoptLint/v1"];
  EXPECT_EQ(res[0]["relatedLocations"].size(), 2u);
  EXPECT_EQ(res[0]["relatedLocations"][1]["physicalLocation"]["region"]["startLine"], 5);
  // Lines moved down: the same fingerprint.
  writeFile(d + "/k.cu", "// a comment\n#include <cstdio>\n\n" + body);
  r = runLint("--format sarif k.cu", d);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"], 6);
  EXPECT_EQ(j["runs"][0]["results"][0]["partialFingerprints"]["gpuoptLint/v1"], fp);
}

TEST(Cli, RacesUnderDataDependentGuardsArePossibleRacesAtWarningSeverity) {
  auto r = runLint("--no-group --format json '" + fixture("missing_syncthreads.cu") + "'");
  auto j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& f : j["files"][0]["findings"]) {
    std::string m = f["message"];
    if (m.rfind("possible ", 0) != 0) {
      EXPECT_EQ(f["severity"], "error") << m;
      continue;
    }
    EXPECT_EQ(f["severity"], "warning") << m;
    // Names what it depends on: a condition on data, or the block shape it had to guess (issue 26:
    // a race under a guessed shape is possible at most).
    EXPECT_TRUE(m.find("(under the condition") != std::string::npos || m.find("the block shape is not known") != std::string::npos ||
                m.find("; assuming a ") != std::string::npos)
        << m;
    if (m.find("possible write-after-read race on shared memory: thread 224 writes buf[0][0], read by thread 0") !=
        std::string::npos) {
      found = true;
      EXPECT_NE(m.find("(under the condition at line 188, which depends on data"), std::string::npos) << m;
    }
  }
  EXPECT_TRUE(found) << r.out;
}

// The "last block" ticket kept in a __shared__ flag: the flag's value is not decided, so the final
// sum's store is a possible race (shown only with `possible`), never a certain one.
TEST(Cli, ATicketFlagInSharedMemoryMakesOnlyAPossibleRace) {
  std::string d = tempDir("ticketflag");
  writeFile(d + "/k.cu", readFile(fixture("global_memory_race.cu")));
  auto r = runLint("--rules=global-memory-race k.cu", d);
  EXPECT_EQ(r.out.find("k.cu:258:"), std::string::npos) << r.out;
  writeFile(d + "/.gpuopt-lint.yaml", "options: {global-memory-race: {possible: 1}}\n");
  r = runLint("--rules=global-memory-race k.cu", d);
  EXPECT_NE(r.out.find("k.cu:258:5: warning: possible race between blocks on global memory 'result'"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(under the condition at line 255"), std::string::npos) << r.out;
}

TEST(Cli, FindingsThatDependOnTheInstantiationSayWhichOne) {
  auto r = runLint("--format json '" + fixture("bank_conflict.cu") + "'");
  auto j = nlohmann::json::parse(r.out);
  // One finding per place (issue 28): the first instantiation's figures, the other's named with
  // what differs (before: a 32-way and a 16-way finding at the same place).
  std::vector<std::string> at;
  for (const auto& f : j["files"][0]["findings"]) {
    std::string m = f["message"];
    if (m.find("tile[threadIdx.x][threadIdx.y]") == std::string::npos || f["kernel"] != "transposeT") continue;
    at.push_back(m);
  }
  ASSERT_EQ(at.size(), 1u) << r.out;
  EXPECT_EQ(at[0].rfind("32-way", 0), 0u) << at[0];
  EXPECT_NE(at[0].find("; in instantiation 'transposeT<float>'"), std::string::npos) << at[0];
  EXPECT_NE(at[0].find("; other figures in 'transposeT<double>' (16-way bank conflict"), std::string::npos) << at[0];
  // A finding every instantiation makes says nothing about instantiations.
  r = runLint("'" + fixture("divergent_branch.cu") + "'");
  EXPECT_EQ(r.out.find("in instantiation"), std::string::npos) << r.out;
}

TEST(Cli, AKernelLaunchedWithSeveralShapesIsJudgedWithEach) {
  auto r = runLint("--rules=divergent-branch --format json '" + fixture("divergent_branch.cu") + "'");
  auto j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& f : j["files"][0]["findings"])
    if (f["kernel"] == "twoShapes") {
      found = true;
      std::string m = f["message"];
      EXPECT_NE(m.find("8 of 32 lanes take the branch in warp 0"), std::string::npos) << m;
      EXPECT_NE(m.find("; for the 256x1x1 block of the launch at line"), std::string::npos) << m;
    }
  EXPECT_TRUE(found) << r.out;
}

TEST(Cli, DoublePromotionFixNamesTheMacroAndItsLiteral) {
  auto r = runLint("--rules=double-promotion '" + fixture("double_promotion.cu") + "'");
  EXPECT_NE(r.out.find("fix: define 'GAIN' as a float literal ('1.1f')"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(runLint("--rules=double-promotion --format json '" + fixture("double_promotion.cu") + "'").out);
  for (const auto& f : j["files"][0]["findings"]) EXPECT_TRUE(f["kernel"].is_string()) << f.dump();
}

TEST(Cli, AtomicContentionSaysWhichAtomicsNvccAggregates) {
  std::string d = tempDir("atomics");
  writeFile(d + "/a.cu",
            "__global__ void k(int* m, unsigned* u, const int* in) {\n"
            "  int v = in[blockIdx.x * blockDim.x + threadIdx.x];\n"
            "  atomicXor(m, v);\n"
            "  atomicInc(u, 17u);\n"
            "}\n"
            "void f(int* m, unsigned* u, const int* in) { k<<<64, 256>>>(m, u, in); }\n");
  auto r = runLint("--rules=atomic-contention a.cu", d);
  EXPECT_EQ(r.rc, 1);
  // 32-bit atomicXor is warp-aggregated (REDUX in SASS); atomicInc is not.
  EXPECT_NE(r.out.find("a.cu:3:3: warning: atomicXor on 'atomicXor(m, v)': every thread of the block"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nvcc does not aggregate atomicInc per warp"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("nvcc does not aggregate atomicXor"), std::string::npos) << r.out;
}

TEST(Cli, InstantiationsLaunchedWithRunTimeBlocksAtSeveralLinesGiveOneFinding) {
  std::string d = tempDir("runtime_launches");
  writeFile(d + "/a.cu",
            "template <int S>\n"
            "__global__ void k(float* out) {\n"
            "  __shared__ float s[1024];\n"
            "  s[threadIdx.x * 2] = out[threadIdx.x] * S;\n"
            "  __syncthreads();\n"
            "  out[threadIdx.x] = s[threadIdx.x];\n"
            "}\n"
            "void f(float* out, int n) {\n"
            "  k<1><<<1, n>>>(out);\n"
            "  k<2><<<1, n>>>(out);\n"
            "}\n");
  auto r = runLint("--no-cache --rules=bank-conflict a.cu", d);
  EXPECT_EQ(r.rc, 1) << r.out;
  // One finding for both instantiations, naming both launches (not one per launch line).
  EXPECT_NE(r.out.find("the launches at lines 9, 10 have block sizes known only at run time"), std::string::npos) << r.out;
  size_t first = r.out.find("a.cu:4:"), second = first == std::string::npos ? first : r.out.find("a.cu:4:", first + 1);
  EXPECT_NE(first, std::string::npos) << r.out;
  EXPECT_EQ(second, std::string::npos) << r.out;
}

TEST(Cli, AGatherIntoASmallHostAllocatedTableIsBoundedAndSaidToStayInL1) {
  auto r = runLint("--no-cache --rules=uncoalesced-access '" + fixture("uncoalesced_access.cu") + "'");
  size_t at = r.out.find("global load 'field[(int)pos[p]]'");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_NE(line.find("up to 27 sectors for 8 useful"), std::string::npos) << line;  // 808 bytes: 26 sectors + 1
  EXPECT_NE(line.find("the table is 808 bytes and stays in L1"), std::string::npos) << line;
}

// Issue 27: what nvcc 13 accepts in a template and Clang cannot read is a compile-error note (saying
// what is not analysed; with --fail-on warning the run passes); the same outside a template, or on a non-static member, is
// rejected by nvcc too and stays an error (each form checked with nvcc 13 -c on its own).
TEST(Cli, WhatNvccAcceptsOnlyInATemplateIsANoteAndTheRestStaysAnError) {
  std::string d = tempDir("nvcc_accepts_in_context");
  const std::string common =
      "struct NonLit {\n"                                                         // 1
      "  __host__ __device__ NonLit(bool v) : v(v) {}\n"                          // 2
      "  __host__ __device__ ~NonLit() {}\n"                                      // 3
      "  bool v;\n"                                                               // 4
      "};\n";                                                                     // 5
  writeFile(d + "/accepted.cu", common +
                                    "template <class T> struct Table {\n"        // 6
                                    "  static constexpr bool wide = sizeof(T) > 4;\n"  // 7
                                    "  __device__ constexpr T get(const T* p) const {\n"  // 8
                                    "    if constexpr (this->wide) return p[threadIdx.x * 32];\n"  // 9
                                    "    else return p[threadIdx.x];\n"          // 10
                                    "  }\n"                                       // 11
                                    "  template <class It> __host__ constexpr int count(It a, It b) const {\n"  // 12
                                    "    auto const always = NonLit{true};\n"    // 13
                                    "    return always.v ? int(b - a) : 0;\n"    // 14
                                    "  }\n"                                       // 15
                                    "};\n"                                        // 16
                                    "template <class T> __global__ void probe(const T* in, T* out, Table<T> t) {\n"
                                    "  out[threadIdx.x] = t.get(in);\n"
                                    "}\n"
                                    "int main() {\n"
                                    "  Table<double> t{};\n"
                                    "  double* p = nullptr;\n"
                                    "  probe<<<1, 32>>>(p, p, t);\n"
                                    "  return t.count(p, p + 4);\n"
                                    "}\n");
  writeFile(d + "/rejected.cu", common +
                                    "constexpr int plain(int n) { NonLit x{true}; return n + x.v; }\n"  // 6
                                    "template <class T> struct Row {\n"          // 7
                                    "  bool flag = true;\n"                       // 8
                                    "  constexpr int pick() const {\n"           // 9
                                    "    if constexpr (this->flag) return 1; else return 0;\n"  // 10
                                    "  }\n"
                                    "};\n"
                                    "int use() { Row<int> r; return plain(1) + r.pick(); }\n");
  auto accepted = runLint("--no-cache --fail-on warning --format json accepted.cu -- -std=c++17", d);
  EXPECT_EQ(accepted.rc, 0) << accepted.out << accepted.err;
  auto severityAt = compileErrorSeverities(accepted.out);
  EXPECT_EQ(severityAt[9], "note") << accepted.out;
  EXPECT_EQ(severityAt[13], "note") << accepted.out;
  auto rejected = runLint("--no-cache --fail-on warning --format json rejected.cu -- -std=c++17", d);
  EXPECT_EQ(rejected.rc, 1) << rejected.out << rejected.err;
  severityAt = compileErrorSeverities(rejected.out);
  EXPECT_EQ(severityAt[6], "error") << rejected.out;
  EXPECT_EQ(severityAt[10], "error") << rejected.out;
}

// A file with CRLF line endings: an expression written over two lines is quoted on one line, with
// no carriage return in the message (AMGX's common_selector.h).
TEST(Cli, QuotedSourceFromACrlfFileHasNoCarriageReturns) {
  std::string d = tempDir("crlf");
  writeFile(d + "/crlf.cu",
            "__global__ void k(float* o, const float* a) {\r\n"
            "  int i = threadIdx.x;\r\n"
            "  o[i] = a[32 *\r\n"
            "           i];\r\n"
            "}\r\n"
            "void run(float* o, const float* a) { k<<<1, 32>>>(o, a); }\r\n");
  auto r = runLint("--format json crlf.cu", d);
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("a[32 * i]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\\r"), std::string::npos) << r.out;
}

// A dependent member template called without `template`: nvcc 13 accepts `Caster<A>::cast<4>(x)`
// (it looks into Caster's definition) and rejects `R::sget<4>()` (R a template parameter) and
// `r.get<4>()` (member access, even with `Ref<N> const& r`), each checked with nvcc -c. The first is
// a note saying nvcc accepts it; the others stay errors.
TEST(Cli, MissingTemplateKeywordIsANoteOnlyWhereNvccAcceptsIt) {
  std::string d = tempDir("template_kw");
  writeFile(d + "/kw.cu",
            "template <typename A> struct Caster {\n"                                              // 1
            "  template <int N> __device__ static A cast(float x) { return static_cast<A>(x * N); }\n"  // 2
            "};\n"                                                                                 // 3
            "template <int N> struct Ref {\n"                                                      // 4
            "  template <int M> __device__ int get() const { return M + N; }\n"                   // 5
            "  template <int M> __device__ static int sget() { return M + N; }\n"                 // 6
            "};\n"                                                                                 // 7
            "template <typename A> __device__ A viaKnown(float x) {\n"                             // 8
            "  return Caster<A>::cast<4>(x);\n"                                                    // 9
            "}\n"                                                                                  // 10
            "template <typename R> __device__ int viaParameter() {\n"                              // 11
            "  return R::sget<4>();\n"                                                             // 12
            "}\n"                                                                                  // 13
            "template <int N> __device__ int viaMember(Ref<N> const& r) {\n"                       // 14
            "  return r.get<4>();\n"                                                               // 15
            "}\n"                                                                                  // 16
            "__global__ void k(int* out) {\n"
            "  Ref<2> r;\n"
            "  out[threadIdx.x] = viaKnown<int>(1.0f) + viaParameter<Ref<2>>() + viaMember(r);\n"
            "}\n");
  auto r = runLint("--no-cache --format json kw.cu -- -std=c++17", d);
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  auto severityAt = compileErrorSeverities(r.out);
  EXPECT_EQ(severityAt[9], "note") << r.out;
  EXPECT_EQ(severityAt[12], "error") << r.out;
  EXPECT_EQ(severityAt[15], "error") << r.out;
}

// A gather through an index loaded from memory (`in[idx[i]]`) says nothing by default: its cost is
// the data's (held-out code gave neighbouring lanes the same or nearby entries more often than
// not); `options: {uncoalesced-access: {data-dependent: 1}}` asks for it, as a note.
TEST(Cli, DataDependentGathersAreSaidOnlyWhenAsked) {
  std::string d = tempDir("data-dependent");
  writeFile(d + "/k.cu",
            "__global__ void gather(const float* in, const int* idx, float* out) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  out[i] = in[idx[i]];\n"
            "}\n"
            "void run(const float* in, const int* idx, float* out) { gather<<<64, 256>>>(in, idx, out); }\n");
  writeFile(d + "/ask.yaml", "options: {uncoalesced-access: {data-dependent: 1}}\n");
  auto quiet = runLint("--no-cuda --no-cache --no-config --format json k.cu", d);
  auto asked = runLint("--no-cuda --no-cache --config ask.yaml --format json k.cu", d);
  auto count = [](const std::string& out) {
    int n = 0;
    const auto j = nlohmann::json::parse(out);
    for (auto& f : j["files"][0]["findings"])
      if (f["ruleId"] == "uncoalesced-access" && f["location"]["line"] == 3) {
        EXPECT_EQ(f["severity"], "note");
        ++n;
      }
    return n;
  };
  EXPECT_EQ(count(quiet.out), 0) << quiet.out;
  EXPECT_EQ(count(asked.out), 1) << asked.out;
}
