// The translation of compilation-database entries (nvcc's, GCC's, Clang's) into the arguments of
// gpuopt-lint's parse (analyzer/frontend/nvcc_args.*), alone: response files, nvcc's spellings of
// include folders and macros, host-compiler options, and where each argument came from.
#include <gtest/gtest.h>

#include <map>

#include "analyzer/frontend/frontend.h"
#include "analyzer/frontend/nvcc_args.h"
#include "analyzer/frontend/nvcc_lexing.h"

using namespace gpuopt;

namespace {
// An in-memory file system for response files.
ReadTextFn files(std::map<std::string, std::string> m) {
  return [m](const std::string& p) -> std::optional<std::string> {
    auto it = m.find(p);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}
std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}
}  // namespace

TEST(NvccArgs, ResponseFileSplitsLikeNvccAndGcc) {
  EXPECT_EQ(splitResponseFile("-I\"/a b/c\" -isystem=/usr/local/cuda/include\n-DX='1 2'  -DY=\\\"s\\\"\n"),
            (std::vector<std::string>{"-I/a b/c", "-isystem=/usr/local/cuda/include", "-DX=1 2", "-DY=\"s\""}));
  EXPECT_EQ(splitResponseFile(""), std::vector<std::string>{});
  EXPECT_EQ(splitResponseFile("\"\""), std::vector<std::string>{""});
}

TEST(NvccArgs, CMakeOptionsFileIsReadRelativeToTheEntryDirectory) {
  // What CMake's Makefile generator writes for a CUDA unit (NVIDIA-CUDA.cmake): the include
  // folders in includes_CUDA.rsp, named relative to the entry's directory.
  auto read = files({{"/p/build/src/CMakeFiles/t.dir/includes_CUDA.rsp",
                      "-I\"/p/src/..\" -I/p/include -isystem=/usr/local/cuda/include -Irel"}});
  auto t = translateCompileCommand({"/usr/local/cuda/bin/nvcc", "-forward-unknown-to-host-compiler", "-DA=1",
                                    "--options-file", "CMakeFiles/t.dir/includes_CUDA.rsp", "-O3",
                                    "--generate-code=arch=compute_90,code=[compute_90,sm_90]", "-Xcompiler=-fPIC",
                                    "-std=c++17", "-x", "cu", "-c", "/p/src/a.cu", "-o", "CMakeFiles/t.dir/a.cu.o"},
                                   "/p/build/src", read);
  EXPECT_TRUE(t.isNvcc);
  EXPECT_TRUE(t.problems.empty()) << joined(t.problems);
  EXPECT_EQ(joined(t.args()),
            "-DA=1 -I/p -I/p/include -isystem /usr/local/cuda/include -I/p/build/src/rel -std=c++17");
  EXPECT_EQ(t.responseFiles, std::vector<std::string>{"/p/build/src/CMakeFiles/t.dir/includes_CUDA.rsp"});
  // Each argument knows where it came from.
  ASSERT_GE(t.kept.size(), 4u);
  EXPECT_EQ(t.kept[3].origin(), "`-isystem=/usr/local/cuda/include` (from --options-file CMakeFiles/t.dir/includes_CUDA.rsp)");
  EXPECT_EQ(t.kept[0].origin(), "`-DA=1`");
  auto inc = t.includeOrigins();
  ASSERT_EQ(inc.size(), 4u);
  EXPECT_EQ(inc[1], "-I/p/include from `-I/p/include` (from --options-file CMakeFiles/t.dir/includes_CUDA.rsp)");
  // The output, architectures and host flags are not the parse's.
  std::string dropped = joined(t.dropped);
  EXPECT_NE(dropped.find("-o CMakeFiles/t.dir/a.cu.o"), std::string::npos) << dropped;
  EXPECT_NE(dropped.find("-x cu"), std::string::npos) << dropped;
  EXPECT_NE(dropped.find("--generate-code="), std::string::npos) << dropped;
}

TEST(NvccArgs, EveryResponseFileSpellingNestedAndMissing) {
  auto read = files({{"/w/a.rsp", "-Ia @b.rsp"}, {"/w/b.rsp", "-DB --options-file=c.rsp"}, {"/w/c.rsp", "-DC"},
                     {"/w/d.rsp", "-DD"}, {"/w/loop.rsp", "@loop.rsp -DL"}});
  auto t = translateCompileCommand({"nvcc", "@a.rsp", "-optf", "d.rsp", "@loop.rsp", "-optf=missing.rsp", "k.cu"},
                                   "/w", read);
  EXPECT_EQ(joined(t.args()), "-I/w/a -DB -DC -DD -DL");
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_NE(t.problems[0].find("/w/missing.rsp"), std::string::npos) << t.problems[0];
  EXPECT_NE(t.problems[0].find("-optf=missing.rsp"), std::string::npos) << t.problems[0];
  // @file for GCC and Clang too.
  // (A Clang driver's unit is marked as such: what Clang accepts, its build does.)
  t = translateCompileCommand({"clang++", "@a.rsp", "-xcuda", "k.cu"}, "/w", read);
  EXPECT_EQ(joined(t.args()), "-I/w/a -DB -DC -D__GPUOPT_LINT_CLANG_DRIVER__=1");
}

TEST(NvccArgs, NvccSpellingsOfIncludeFoldersAndMacros) {
  auto t = translateCompileCommand(
      {"nvcc", "-I=inc", "-I", "x,y", "--include-path", "z", "--include-path=/abs", "-isystem=/sys", "-isystem", "s2",
       "--system-include=s3", "-DA=1,B", "--define-macro", "C", "--define-macro=D=2", "-UE", "--undefine-macro=F",
       "--pre-include", "/pre.h", "-include=/pre2.h", "--std", "c++20", "k.cu"},
      "/d");
  EXPECT_EQ(joined(t.args()),
            "-I/d/inc -I/d/x -I/d/y -I/d/z -I/abs -isystem /sys -isystem /d/s2 -isystem /d/s3 -DA=1 -DB -DC -DD=2 -UE "
            "-UF -include /pre.h -include /pre2.h -std=c++20");
  // GCC does not split macro values at commas, nor knows nvcc's long names.
  t = translateCompileCommand({"g++", "-DF(a,b)=a", "-isystem=/s", "--include-path", "q", "-c", "k.cpp"}, "/d");
  EXPECT_EQ(joined(t.args()), "-DF(a,b)=a -isystem /s");
}

TEST(NvccArgs, HostCompilerOptionsAndNvccModesThatDefineMacros) {
  auto t = translateCompileCommand({"/usr/local/cuda/bin/nvcc", "-Xcompiler", "-fopenmp,-Wall", "-Xcompiler",
                                    "\"-DH=1 -I hinc\"", "--compiler-options=-isystem,/hs", "-ccbin", "/opt/gcc/bin/g++",
                                    "--extended-lambda", "--expt-relaxed-constexpr", "-rdc=true", "-G",
                                    "--default-stream", "per-thread", "k.cu"},
                                   "/d");
  EXPECT_EQ(joined(t.args()),
            "-D_OPENMP=201511 -DH=1 -I/d/hinc -isystem /hs -D__CUDACC_EXTENDED_LAMBDA__ -D__CUDACC_RELAXED_CONSTEXPR__ "
            "-D__CUDACC_RDC__ -D__CUDACC_DEBUG__ -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1");
  EXPECT_TRUE(t.hostOpenMP);
  EXPECT_EQ(t.hostCompiler, "/opt/gcc/bin/g++");
  EXPECT_EQ(t.kept[0].origin(), "`-Xcompiler -fopenmp,-Wall`");
  std::string dropped = joined(t.dropped);
  EXPECT_NE(dropped.find("-Wall"), std::string::npos) << dropped;
  t = translateCompileCommand({"nvcc", "-ccbin=gcc-12", "-rdc=false", "k.cu"}, "/d");
  EXPECT_EQ(t.hostCompiler, "gcc-12");
  EXPECT_TRUE(t.args().empty());
}

TEST(NvccArgs, FilterCompileCommandKeepsWhatTheParseNeeds) {
  std::vector<std::string> dropped;
  auto kept = filterCompileCommand({"/usr/local/cuda/bin/nvcc", "-I", "inc", "-Iinc2", "-DTILE=32", "-arch=sm_80",
                                    "-gencode", "arch=compute_80,code=sm_80", "--expt-relaxed-constexpr", "-Xcompiler",
                                    "-fopenmp", "-std=c++17", "-isystem", "/opt/x", "-isystemthird/y", "-include",
                                    "cfg.h", "-D", "N=4", "-O3", "-c", "k.cu", "-o", "k.o"},
                                   "/proj/build", dropped);
  // Relative paths are resolved against the entry's directory, in every spelling; nvcc's
  // --expt-relaxed-constexpr and the host's -fopenmp define what nvcc defines for them.
  EXPECT_EQ(kept, (std::vector<std::string>{"-I/proj/build/inc", "-I/proj/build/inc2", "-DTILE=32",
                                            "-D__CUDACC_RELAXED_CONSTEXPR__",
                                            "-D_OPENMP=201511", "-std=c++17", "-isystem", "/opt/x", "-isystem",
                                            "/proj/build/third/y", "-include", "cfg.h", "-DN=4"}));
  std::string all = joined(dropped);
  EXPECT_NE(all.find("-arch=sm_80"), std::string::npos);
  EXPECT_NE(all.find("-gencode arch=compute_80,code=sm_80"), std::string::npos);
  EXPECT_NE(all.find("-O3"), std::string::npos);
}

TEST(NvccLexing, AnObjectLikeMacroHoldingAPragmaBecomesAPragmaOperator) {
  std::string t = "#ifdef __CUDA_ARCH__\n  #define UNROLL #pragma unroll\n#endif\nint x;\n";
  ASSERT_TRUE(pragmaMacrosAsOperators(t));
  EXPECT_EQ(t, "#ifdef __CUDA_ARCH__\n  #define UNROLL _Pragma(\"unroll\")\n#endif\nint x;\n") << "lines stay";
  t = "# define U4 # pragma unroll 4 // four\n";
  ASSERT_TRUE(pragmaMacrosAsOperators(t));
  EXPECT_EQ(t, "# define U4 _Pragma(\"unroll 4\") // four\n");
  // Function-like macros (nvcc rejects `#` before a non-parameter), continued lines, strings, an
  // empty pragma and ordinary definitions stay.
  for (std::string keep : {std::string("#define U(n) #pragma unroll n\n"), std::string("#define U #pragma unroll \\\n  4\n"),
                           std::string("#define M #pragma message(\"x\")\n"), std::string("#define E #pragma\n"),
                           std::string("#define P pragma\n"), std::string("#pragma unroll\n")}) {
    std::string before = keep;
    EXPECT_FALSE(pragmaMacrosAsOperators(keep)) << before;
    EXPECT_EQ(keep, before);
  }
}

TEST(NvccLexing, AsmOperandsWithoutACommaGetOne) {
  std::string t = "asm volatile(\"st.u8 [%1], %0;\" ::\"r\"(v) \"l\"(p) : \"memory\");";
  ASSERT_TRUE(commaSeparateAsmOperands(t));
  EXPECT_EQ(t, "asm volatile(\"st.u8 [%1], %0;\" ::\"r\"(v),\"l\"(p) : \"memory\");") << "same length";
  t = "__asm__(\"add.s32 %0, %1, %2;\" : \"=r\"(c) : \"r\"(f(a))\"r\"(b));";
  ASSERT_TRUE(commaSeparateAsmOperands(t));
  EXPECT_EQ(t, "__asm__(\"add.s32 %0, %1, %2;\" : \"=r\"(c) : \"r\"(f(a)),\"r\"(b));");
  // Operands with commas, the template's own adjacent strings, strings and comments that only
  // look like asm, and a call named asm_x stay.
  for (std::string keep : {std::string("asm(\"mov.u32 %0, %1;\" : \"=r\"(a) : \"r\"(b), \"r\"(c));"),
                           std::string("asm(\"a\" \"b\" : \"=r\"(a));"), std::string("// asm(\"x\" : \"=r\"(a) \"r\"(b))\n"),
                           std::string("auto s = \"asm(: (a) \\\"r\\\"\";"), std::string("asm_x(\"a\" : (b) \"c\");")}) {
    std::string before = keep;
    EXPECT_FALSE(commaSeparateAsmOperands(keep)) << before;
    EXPECT_EQ(keep, before);
  }
}

TEST(NvccLexing, PtxRegisterNamesInAnAsmTemplateGetTheirPercentDoubled) {
  std::string t = "asm volatile(\"mov.u32 %0, %laneid;\" : \"=r\"(ret));";
  ASSERT_TRUE(commaSeparateAsmOperands(t));
  EXPECT_EQ(t, "asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(ret));");
  t = "asm(\"mov.u32 %0, %tid.x;\\n\\tmov.u64 %1, %clock64;\" : \"=r\"(a), \"=l\"(b));";
  ASSERT_TRUE(commaSeparateAsmOperands(t));
  EXPECT_EQ(t, "asm(\"mov.u32 %0, %%tid.x;\\n\\tmov.u64 %1, %%clock64;\" : \"=r\"(a), \"=l\"(b));");
  // Already doubled, operands, a modifier on an operand, basic asm (no operands: no escapes read)
  // and a string outside the template stay.
  for (std::string keep : {std::string("asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(a));"),
                           std::string("asm(\"cvt.u16.u32 %h0, %1;\" : \"=h\"(a) : \"r\"(b));"),
                           std::string("asm volatile(\"membar.gl; // %laneid\");"),
                           std::string("asm(\"mov.u32 %0, 1;\" : \"=r\"(a) : \"r\"(b), \"m\"(\"%laneid\"));")}) {
    std::string before = keep;
    EXPECT_FALSE(commaSeparateAsmOperands(keep)) << before;
    EXPECT_EQ(keep, before);
  }
}

TEST(NvccLexing, AReservedSuffixAfterAStringLiteralIsSplitAsGccDoes) {
  std::string t = "extern \"C\"__global__ void k(float* a) {}\n";
  ASSERT_TRUE(splitReservedLiteralSuffixes(t));
  EXPECT_EQ(t, "extern\"C\" __global__ void k(float* a) {}\n") << "same length: columns after the literal stay";
  // No blank before the literal: one is inserted.
  t = "extern\"C\"__device__ float f();";
  ASSERT_TRUE(splitReservedLiteralSuffixes(t));
  EXPECT_EQ(t, "extern\"C\" __device__ float f();");
  // A user-defined literal (one underscore), comments, characters, raw strings and numbers stay.
  for (std::string keep : {std::string("auto s = \"x\"_sv;"), std::string("// \"C\"__global__\n"),
                           std::string("/* \"C\"__global__ */"), std::string("char q = '\"'; int n = 1'000;"),
                           std::string("auto r = R\"d(\"C\"__x)d\";"), std::string("auto p = u8\"a\";")}) {
    std::string before = keep;
    EXPECT_FALSE(splitReservedLiteralSuffixes(keep)) << before;
    EXPECT_EQ(keep, before);
  }
  // A blank after an encoding prefix would join it to the literal: inserted instead.
  t = "auto w = L \"x\"__y;";
  ASSERT_TRUE(splitReservedLiteralSuffixes(t));
  EXPECT_EQ(t, "auto w = L \"x\" __y;");
  // After a character literal holding a quote, the scan is still in step.
  t = "char q = '\"'; extern \"C\"__global__ void k();";
  ASSERT_TRUE(splitReservedLiteralSuffixes(t));
  EXPECT_EQ(t, "char q = '\"'; extern\"C\" __global__ void k();");
}
