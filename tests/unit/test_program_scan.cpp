// The program's call sites read from text (analyzer/engine/program_scan.h): calls of free functions
// with their integer literals; declarations, definitions and member calls left out; other uses of a
// called name; the fingerprint a stored result is checked with.
#include <gtest/gtest.h>

#include "analyzer/engine/program_scan.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace gpuopt;

namespace {
std::vector<std::optional<int64_t>> argsOf(const ProgramCallSite& s) { return s.args; }
}  // namespace

TEST(ProgramScan, CallsWithTheirLiteralsDeclarationsAndMembersLeftOut) {
  ProgramCalls pc;
  scanProgramText("/p/net.c",
                  "void axpy(int n, float a, const float* x, int incx, float* y, int incy);\n"
                  "float *scale(int n) { return 0; }\n"
                  "static inline int ns::axpy(int n) { return n; }\n"
                  "void step(int n, float* w, float* dw) {\n"
                  "  axpy(n, -0.1f, dw, 1, w, (1));\n"
                  "  ns::axpy(n, 2.f, dw, 0x10u, w, -1);\n"
                  "  net.axpy(n, 2.f, dw, 3, w, 3);\n"
                  "  p->axpy(n, 2.f, dw, 3, w, 3);\n"
                  "  return axpy(n, 1.f, dw, 1'0, w, n * 2);\n"
                  "  /* axpy(9, 9, 9, 9, 9, 9) */ const char* s = \"axpy(8)\";\n"
                  "}\n",
                  pc);
  const auto& calls = pc.callsOf("axpy");
  ASSERT_EQ(calls.size(), 3u);
  using V = std::vector<std::optional<int64_t>>;
  EXPECT_EQ(argsOf(calls[0]), (V{std::nullopt, std::nullopt, std::nullopt, 1, std::nullopt, 1}));
  EXPECT_EQ(calls[0].line, 5u);
  EXPECT_EQ(calls[0].file, "/p/net.c");
  EXPECT_EQ(argsOf(calls[1]), (V{std::nullopt, std::nullopt, std::nullopt, 16, std::nullopt, -1}));
  EXPECT_EQ(argsOf(calls[2]), (V{std::nullopt, std::nullopt, std::nullopt, 10, std::nullopt, std::nullopt}));
  EXPECT_TRUE(pc.callsOf("scale").empty()) << "a definition returning a pointer is not a call";
  EXPECT_TRUE(pc.otherUsesOf("axpy").empty());
}

TEST(ProgramScan, TheAddressOfACalledFunctionIsAnOtherUse) {
  ProgramCalls pc;
  scanProgramText("/p/a.c", "void launch(int n);\nvoid (*table[])(int) = {launch};\nint launches = 3;\n", pc);
  EXPECT_TRUE(pc.callsOf("launch").empty());
  ASSERT_EQ(pc.otherUsesOf("launch").size(), 1u);
  EXPECT_EQ(pc.otherUsesOf("launch")[0], "/p/a.c");
  EXPECT_TRUE(pc.otherUsesOf("launches").empty()) << "only names that are called or declared count";
}

TEST(ProgramScan, TheFingerprintChangesWithTheArgumentsNotWithTheLines) {
  ProgramCalls a, b, c;
  scanProgramText("/p/a.c", "void f() { g(1, x); }\n", a);
  scanProgramText("/p/a.c", "\n\nvoid f() {\n  g(1, y);\n}\n", b);
  scanProgramText("/p/a.c", "void f() { g(2, x); }\n", c);
  EXPECT_EQ(a.fingerprint("g"), b.fingerprint("g"));
  EXPECT_NE(a.fingerprint("g"), c.fingerprint("g"));
  EXPECT_NE(a.fingerprint("g"), ProgramCalls().fingerprint("g")) << "no call at all is an answer too";
}

TEST(ProgramScan, TheStoredIndexServesWhileWhatItReadIsUnchanged) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gpuopt-program-" + std::to_string(::getpid()));
  fs::create_directories(dir / "db");
  const std::string caller = (dir / "net.c").string();
  auto write = [](const std::string& path, const std::string& text) { std::ofstream(path) << text; };
  write(caller, "void step(float* w) { axpy(8, 0.1f, w, 1, w, 1); }\n");
  ProgramCalls pc;
  scanProgramText(caller, "void step(float* w) { axpy(8, 0.1f, w, 1, w, 1); }\n", pc);
  pc.sources.push_back(*stampFile(caller, false));
  const std::string cache = (dir / "cache").string();
  storeProgram(cache, (dir / "db").string(), pc);
  auto full = loadStoredProgram(cache, (dir / "db").string(), false);
  auto fp = loadStoredProgram(cache, (dir / "db").string(), true);
  ASSERT_TRUE(full && fp);
  ASSERT_EQ(full->callsOf("axpy").size(), 1u);
  EXPECT_EQ(full->callsOf("axpy")[0].args[3], std::optional<int64_t>(1));
  EXPECT_EQ(full->fingerprint("axpy"), pc.fingerprint("axpy"));
  EXPECT_EQ(fp->fingerprint("axpy"), pc.fingerprint("axpy"));
  EXPECT_EQ(fp->fingerprint("nothing_calls_it"), pc.fingerprint("nothing_calls_it"));
  // A file it read changes: no stored index (the next run reads the files again).
  write(caller, "void step(float* w) { axpy(8, 0.1f, w, 16, w, 1); }\n// longer\n");
  EXPECT_FALSE(loadStoredProgram(cache, (dir / "db").string(), true));
  EXPECT_FALSE(loadStoredProgram(cache, (dir / "db").string(), false));
  fs::remove_all(dir);
}
