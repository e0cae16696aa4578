// `gpuopt-lint profile` end to end through the binary: --import of the recorded H100 exports, and
// `-- COMMAND` with tests/data/ncu/fake-ncu.sh standing in for Nsight Compute (no GPU in CI).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "analyzer/profile/profile.h"
#include "test_util.h"

using namespace gpuopt::test;
namespace fs = std::filesystem;

namespace {
const std::string kSrc = GPUOPT_SOURCE_DIR;
const std::string kData = kSrc + "/tests/data/ncu/";
const std::string kFake = kData + "fake-ncu.sh";

// A folder laid out like the recording machine's checkout: samples/ and the fake program.
std::string workspace(const std::string& name) {
  std::string d = tempDir(name);
  fs::create_directories(d + "/samples/profile");
  for (const char* f : {"transpose_ladder.cu", "reduction_ladder.cu", "profile/hidden_costs.cu"})
    fs::copy_file(kSrc + "/samples/" + f, d + "/samples/" + f);
  writeFile(d + "/app.sh", "#!/bin/sh\necho app ran\n");
  fs::permissions(d + "/app.sh", fs::perms::owner_all);
  return d;
}
}  // namespace

TEST(Profile, ImportJoinsTheRecordedTransposeProfile) {
  auto r = runLint("profile --no-config --import tests/data/ncu/transpose", kSrc);
  EXPECT_EQ(r.rc, 1) << r.err;
  // The 32-way conflict and the strided load, confirmed, ranked by stall share.
  EXPECT_NE(r.out.find("measured: confirmed: this line: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("32-way measured, 32-way predicted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("32 sectors per request measured (4 ideal: 8x), 32 for 4 predicted (8x)"), std::string::npos) << r.out;
  // The profiled block shape (32x32) is used: no "assuming" in the messages.
  EXPECT_EQ(r.out.find("assuming"), std::string::npos) << r.out;
  auto j = runLint("profile --no-config --format json --import tests/data/ncu/transpose", kSrc);
  EXPECT_NE(j.out.find("\"verdict\": \"confirmed\""), std::string::npos);
  EXPECT_NE(j.out.find("\"measuredWays\": 32.0"), std::string::npos);
}

TEST(Profile, ImportFindsWhatTheStaticModelMissed) {
  auto r = runLint("profile --no-config --format json --import tests/data/ncu/hidden", kSrc);
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.out.find("\"ruleId\": \"measured-bank-conflict\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"ruleId\": \"measured-divergence\""), std::string::npos) << r.out;
  // The strided load the analysis did predict (its stride guessed from a representative value) is
  // confirmed, not repeated as measured-only.
  EXPECT_EQ(r.out.find("\"ruleId\": \"measured-uncoalesced\""), std::string::npos) << r.out;
  auto s = runLint("profile --no-config --format sarif --import tests/data/ncu/hidden", kSrc);
  EXPECT_NE(s.out.find("\"id\": \"measured-divergence\""), std::string::npos);
  EXPECT_NE(s.out.find("\"measuredActiveLanes\""), std::string::npos);
}

TEST(Profile, ErrorsHaveTheirOwnExitStatus) {
  auto r = runLint("profile --import tests/data/ncu/nolineinfo", kSrc);
  EXPECT_EQ(r.rc, gpuopt::profile::kNoLineInfo);
  EXPECT_NE(r.err.find("nvcc -lineinfo"), std::string::npos) << r.err;
  r = runLint("profile --import tests/data/ncu/missing", kSrc);
  EXPECT_EQ(r.rc, 2);
  r = runLint("profile", kSrc);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("-- COMMAND"), std::string::npos) << r.err;
  r = runLint("profile --try-fixes -- ./app", kSrc);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--build"), std::string::npos) << r.err;
  // (With a GPU taken as present: the ncu checks come after the GPU's.)
  std::string w = workspace("noncu");
  r = runLint("profile --ncu /no/such/ncu -- ./app.sh", w, "GPUOPT_LINT_SKIP_GPU_CHECK=1");
  EXPECT_EQ(r.rc, gpuopt::profile::kNoNcu) << r.err;
  r = runLint("profile -- ./app.sh", w, "GPUOPT_LINT_SKIP_GPU_CHECK=1");  // PATH and the usual places without ncu here
  if (!gpuopt::profile::findNcu("").empty()) GTEST_SKIP() << "ncu is installed here";
  EXPECT_EQ(r.rc, gpuopt::profile::kNoNcu) << r.err;
  EXPECT_NE(r.err.find("--ncu PATH"), std::string::npos) << r.err;
}

TEST(Profile, NoGpuIsSaidBeforeRunningAnythingAndBeforeNcu) {
  if (fs::exists("/dev/nvidia0")) GTEST_SKIP() << "this machine has a GPU";
  auto r = runLint("profile --ncu '" + kFake + "' -- ./app.sh", workspace("nogpu"));
  EXPECT_EQ(r.rc, gpuopt::profile::kNoGpu) << r.err;
  EXPECT_NE(r.err.find("--import"), std::string::npos) << r.err;
  // Without a GPU, a missing ncu does not matter yet: the GPU is what is said (exit 3, not 4).
  r = runLint("profile --ncu /no/such/ncu -- ./app.sh", workspace("nogpu2"));
  EXPECT_EQ(r.rc, gpuopt::profile::kNoGpu) << r.err;
}

TEST(Profile, AMissingCommandIsExit7WhateverElseIsMissing) {
  std::string w = workspace("nocmd");
  for (const char* env : {"", "GPUOPT_LINT_SKIP_GPU_CHECK=1"}) {
    auto r = runLint("profile --ncu /no/such/ncu -- ./no-such-app", w, env);
    EXPECT_EQ(r.rc, gpuopt::profile::kCommandNotFound) << env << r.err;
    EXPECT_NE(r.err.find("./no-such-app"), std::string::npos) << r.err;
    r = runLint("profile -- no-such-program-on-path-xyz", w, env);
    EXPECT_EQ(r.rc, gpuopt::profile::kCommandNotFound) << env << r.err;
  }
  writeFile(w + "/notexec.sh", "#!/bin/sh\n");
  fs::permissions(w + "/notexec.sh", fs::perms::owner_read | fs::perms::owner_write);
  auto r = runLint("profile -- ./notexec.sh", w);
  EXPECT_EQ(r.rc, gpuopt::profile::kCommandNotFound) << r.err;
}

TEST(Profile, CommandOutcomesThroughNcu) {
  std::string d = workspace("outcomes");
  auto run = [&](const std::string& env, const std::string& cmd) {
    std::string cd = "cd '" + d + "' && env GPUOPT_LINT_SKIP_GPU_CHECK=1 " + env + " '" + GPUOPT_LINT_BIN + "' profile --ncu '" +
                     kFake + "' -- " + cmd;
    RunResult r;
    std::string errFile = d + "/err.txt";
    r.rc = WEXITSTATUS(std::system((cd + " >'" + d + "/out.txt' 2>'" + errFile + "'").c_str()));
    r.out = readFile(d + "/out.txt");
    r.err = readFile(errFile);
    return r;
  };
  auto recorded = [&](const std::string& name, int rc) {
    return "FAKE_NCU_OUTPUT='" + kData + "ncu-output/" + name + ".txt' FAKE_NCU_RC=" + std::to_string(rc);
  };
  auto r = run(recorded("fails", 3), "./app.sh");
  EXPECT_EQ(r.rc, gpuopt::profile::kCommandFailed) << r.err;
  EXPECT_NE(r.err.find("giving up"), std::string::npos) << r.err;  // the program's own words are shown
  r = run(recorded("notfound", 1), "./nope");
  EXPECT_EQ(r.rc, gpuopt::profile::kCommandNotFound) << r.err;
  r = run(recorded("nokernel", 0), "./app.sh");
  EXPECT_EQ(r.rc, gpuopt::profile::kNoKernels) << r.err;
  r = run("", "./no-such-program");  // the fake runs COMMAND itself: the shell's 127
  EXPECT_EQ(r.rc, gpuopt::profile::kCommandNotFound) << r.err;
  r = run("FAKE_NCU_DATA='" + kData + "nolineinfo'", "./app.sh");
  EXPECT_EQ(r.rc, gpuopt::profile::kNoLineInfo) << r.err;
  // A run that works: the profiled files are found here and linted with the recorded shapes.
  r = run("FAKE_NCU_DATA='" + kData + "transpose'", "./app.sh");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.out.find("samples/transpose_ladder.cu:20:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("measured: confirmed"), std::string::npos) << r.out;
}

TEST(Profile, TryFixesWorksInACopyAndNeverTouchesTheTree) {
  std::string d = workspace("tryfixes");
  std::string before = readFile(d + "/samples/transpose_ladder.cu");
  std::string log = d + "/../tryfixes-ncu.log";
  fs::remove(log);
  fs::remove_all(d + "/../tf-keep");
  std::string cmd = "cd '" + d + "' && env GPUOPT_LINT_SKIP_GPU_CHECK=1 FAKE_NCU_DATA='" + kData + "transpose' FAKE_NCU_LOG='" +
                    log + "' '" + GPUOPT_LINT_BIN + "' profile --out '" + d + "/../tf-keep' --runs 3 --try-fixes --build 'grep -c \"TILE + 1\" samples/transpose_ladder.cu > padded.txt || true' --ncu '" +
                    kFake + "' -- ./app.sh >'" + d + "/../tf-out.txt' 2>'" + d + "/../tf-err.txt'";
  int rc = WEXITSTATUS(std::system(cmd.c_str()));
  std::string out = readFile(d + "/../tf-out.txt"), err = readFile(d + "/../tf-err.txt");
  EXPECT_EQ(rc, 1) << err;
  EXPECT_EQ(readFile(d + "/samples/transpose_ladder.cu"), before);  // untouched
  EXPECT_FALSE(fs::exists(d + "/padded.txt"));                       // the build ran in the copies only
  // The fix (padding transposeShared's tile) is in the fixed copy only.
  EXPECT_EQ(readFile(d + "/../tf-keep/try-fixes/before/padded.txt"), "1\n");
  EXPECT_EQ(readFile(d + "/../tf-keep/try-fixes/after/padded.txt"), "2\n");
  EXPECT_NE(out.find("--try-fixes: 'transposeShared' took"), std::string::npos) << out << err;
  EXPECT_NE(out.find("median of 3 runs"), std::string::npos) << out;
  // COMMAND ran once for the profile and 3 times in each copy.
  std::string runs = readFile(log);
  size_t inBefore = 0, inAfter = 0;
  for (size_t p = 0; (p = runs.find("/try-fixes/before ", p)) != std::string::npos; ++p) ++inBefore;
  for (size_t p = 0; (p = runs.find("/try-fixes/after ", p)) != std::string::npos; ++p) ++inAfter;
  EXPECT_EQ(inBefore, 3u) << runs;
  EXPECT_EQ(inAfter, 3u) << runs;
}

namespace {
// (rule, line) of a JSON report's findings, measured-only ones left out.
std::set<std::pair<std::string, int>> staticFindings(const std::string& json) {
  std::set<std::pair<std::string, int>> out;
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object()) return out;
  for (const auto& f : j["files"])
    for (const auto& d : f["findings"]) {
      std::string rule = d["ruleId"];
      if (rule.rfind("measured-", 0) != 0) out.insert({rule, d["location"]["line"].get<int>()});
    }
  return out;
}
}  // namespace

TEST(Profile, TheLaunchAsProfiledAddsNoFinding) {
  // launches.cu launches smoothOnce as <<<1, 64>>>: one block, no race between blocks. The profile
  // recorded that grid; a plain lint of the same launch gives every finding the profile gives.
  std::string file = "tests/data/ncu/programs/launches.cu";
  auto plain = runLint("--no-config --format json " + file, kSrc);
  auto prof = runLint("profile --no-config --format json --import tests/data/ncu/launches " + file, kSrc);
  ASSERT_LE(prof.rc, 1) << prof.err;
  auto withProfile = staticFindings(prof.out), without = staticFindings(plain.out);
  for (const auto& f : withProfile) EXPECT_TRUE(without.count(f)) << f.first << " at line " << f.second << " only under profile";
  EXPECT_EQ(prof.out.find("\"ruleId\": \"global-memory-race\""), std::string::npos) << prof.out;
}

TEST(Profile, ImportTakesCompilerArguments) {
  // Nothing runs with --import, so `--` passes compiler arguments, as in a plain lint.
  std::string d = tempDir("import-args");
  writeFile(d + "/k.cu",
            "#ifndef STRIDE\n#define STRIDE 1\n#endif\n__global__ void k(const float* in, float* out) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  out[i] = in[i * STRIDE];\n}\n"
            "void run(const float* a, float* b) { k<<<64, 256>>>(a, b); }\n");
  std::string imp = " --import '" + kData + "launches' '" + d + "/k.cu'";
  auto without = runLint("profile --no-config" + imp, d);
  EXPECT_EQ(without.rc, 0) << without.out << without.err;
  auto with = runLint("profile --no-config" + imp + " -- -DSTRIDE=32", d);
  EXPECT_EQ(with.rc, 1) << with.out << with.err;
  EXPECT_NE(with.out.find("uncoalesced-access"), std::string::npos) << with.out;
}

TEST(Profile, VerboseAndJsonShowTheInstructions) {
  std::string args = "profile --no-config --import tests/data/ncu/global_lines tests/data/ncu/programs/global_lines.cu";
  auto v = runLint(args + " --verbose", kSrc);
  ASSERT_LE(v.rc, 1) << v.err;
  EXPECT_NE(v.out.find("      * 0x"), std::string::npos) << v.out;  // the finding's own instructions, marked
  EXPECT_NE(v.out.find("LDG.E"), std::string::npos);
  auto plain = runLint(args, kSrc);
  EXPECT_EQ(plain.out.find("      * 0x"), std::string::npos);
  auto j = runLint(args + " --format json", kSrc);
  EXPECT_NE(j.out.find("\"instructions\": ["), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"own\": true"), std::string::npos);
}
