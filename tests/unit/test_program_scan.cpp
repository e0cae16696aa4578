// The program's call sites read from text (analyzer/engine/program_scan.h): calls of free functions
// with their integer literals; declarations, definitions and member calls left out; other uses of a
// called name; the fingerprint a stored result is checked with.
#include <gtest/gtest.h>

#include "analyzer/engine/program_scan.h"

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
