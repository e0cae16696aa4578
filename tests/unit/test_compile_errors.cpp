// What compile-error findings say (analyzer/engine/compile_errors.*), alone: the CUDA 13 hints, the
// missing header's search folders, and the errors after a missing header folded into its finding.
#include <gtest/gtest.h>

#include "analyzer/engine/compile_errors.h"

using namespace gpuopt;

namespace {
Diagnostic err(const std::string& file, unsigned line, const std::string& msg) {
  Diagnostic d;
  d.ruleId = "compile-error";
  d.span.begin = {file, line, 1};
  d.message = msg;
  return d;
}
}  // namespace

TEST(CompileErrors, Cuda13ChangesNameTheirReplacement) {
  EXPECT_NE(compileErrorHint("no member named 'clockRate' in 'cudaDeviceProp'").find("cudaDevAttrClockRate"),
            std::string::npos);
  EXPECT_NE(compileErrorHint("no member named 'memoryClockRate' in 'cudaDeviceProp'").find("cudaDevAttrMemoryClockRate"),
            std::string::npos);
  EXPECT_NE(compileErrorHint("no member named 'fooBar' in 'cudaDeviceProp'").find("cudaDeviceGetAttribute"),
            std::string::npos);
  EXPECT_NE(compileErrorHint("no matching function for call to 'cudaMemAdvise'").find("cudaMemLocation"), std::string::npos);
  EXPECT_NE(compileErrorHint("no matching function for call to 'cudaMemPrefetchAsync'").find("cudaMemLocation"),
            std::string::npos);
  EXPECT_NE(compileErrorHint("no member named 'Max' in namespace 'cub'; did you mean 'max'?").find("cuda::maximum<>"),
            std::string::npos);
  EXPECT_NE(compileErrorHint("no type named 'Sum' in namespace 'cub'").find("cuda::std::plus<>"), std::string::npos);
  EXPECT_EQ(compileErrorHint("no member named 'BlockMagic' in namespace 'cub'"), "");
  EXPECT_NE(compileErrorHint("no template named 'identity' in namespace 'thrust'; did you mean 'thrust::detail::identity_'?")
                .find("cuda::std::identity"),
            std::string::npos);
  EXPECT_NE(compileErrorHint("use of undeclared identifier 'CUSPARSE_MV_ALG_DEFAULT'; did you mean 'CUSPARSE_SPMV_ALG_DEFAULT'?")
                .find("CUDA 12 removed CUSPARSE_MV_ALG_DEFAULT, and nvcc 13 rejects it too: use CUSPARSE_SPMV_ALG_DEFAULT"),
            std::string::npos);
  EXPECT_EQ(compileErrorHint("use of undeclared identifier 'CUSPARSE_MY_ALG'"), "");
  EXPECT_EQ(compileErrorHint("no matching function for call to 'myFunction'"), "");
  EXPECT_EQ(compileErrorHint("use of undeclared identifier 'x'"), "");
}

TEST(CompileErrors, AMissingHeaderSaysWhereItWasSearched) {
  IncludeSearchContext db{"the compile_commands.json entry for a.cu in /b/compile_commands.json", true,
                          {"-I/p/inc from `-I=inc` (from --options-file x.rsp)"}};
  std::string h = missingHeaderHint(db);
  EXPECT_NE(h.find("the compile_commands.json entry for a.cu"), std::string::npos) << h;
  EXPECT_NE(h.find("`-I=inc` (from --options-file x.rsp)"), std::string::npos) << h;
  EXPECT_EQ(h.find("-p"), std::string::npos) << "a database was used: never suggest one: " << h;
  std::string none = missingHeaderHint({});
  EXPECT_NE(none.find("-p with a compile_commands.json"), std::string::npos) << none;
  std::string mk = missingHeaderHint({"the Makefile /p/Makefile", false, {"-I/p/third"}});
  EXPECT_NE(mk.find("the Makefile /p/Makefile (-I/p/third)"), std::string::npos) << mk;
}

TEST(CompileErrors, ErrorsAfterAMissingHeaderAreItsNotes) {
  std::vector<Diagnostic> e = {err("a.cu", 3, "use of undeclared identifier 'early'"),
                               err("a.cu", 5, "'mpi.h' file not found"),
                               err("a.cu", 9, "use of undeclared identifier 'MPI_Init'"),
                               err("a.cu", 10, "unknown type name 'MPI_Comm'"),
                               err("b.cuh", 4, "'other.h' file not found"),
                               err("b.cuh", 7, "use of undeclared identifier 'OTHER'"),
                               err("a.cu", 2, "'texture' was removed")};  // a removed API's use
  e[3].notes.push_back({e[3].span, "kernel 'k' was not analysed: ..."});
  foldErrorsAfterMissingHeaders(e, 6);  // the last one is not Clang's: never folded
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].message, "use of undeclared identifier 'early'");
  EXPECT_EQ(e[1].span.begin.line, 5u);
  EXPECT_NE(e[1].message.find("2 later errors may follow from it (nvcc stops here): notes"), std::string::npos)
      << e[1].message;
  ASSERT_EQ(e[1].notes.size(), 3u);
  EXPECT_EQ(e[1].notes[0].message, "error: use of undeclared identifier 'MPI_Init'");
  EXPECT_EQ(e[1].notes[2].message, "kernel 'k' was not analysed: ...") << "a folded error's notes follow it";
  EXPECT_EQ(e[2].span.begin.file, "b.cuh");
  EXPECT_EQ(e[2].notes.size(), 1u);
  EXPECT_EQ(e[3].span.begin.line, 2u) << "a removed API's use: a finding of its own";
  // An error Clang reports later but at an earlier line of the header's file (a template
  // instantiation, made at the end of the file) is nvcc's too: a finding of its own.
  std::vector<Diagnostic> late = {err("a.cu", 67, "'project_only_header.h' file not found"),
                                  err("a.cu", 68, "use of undeclared identifier 'PROJECT_CONSTANT'"),
                                  err("a.cu", 42, "missing 'template' keyword prior to dependent template name 'cast'")};
  foldErrorsAfterMissingHeaders(late);
  ASSERT_EQ(late.size(), 2u);
  EXPECT_EQ(late[0].notes.size(), 1u);
  EXPECT_EQ(late[1].span.begin.line, 42u);
  // More headers of the same library's folder after the first missing one: one finding (one -I
  // fixes them all; nvcc stops at the first). Another library's header is a finding of its own.
  std::vector<Diagnostic> lib = {err("x.cuh", 23, "'rapidjson/document.h' file not found (hint)"),
                                 err("x.cuh", 24, "'rapidjson/writer.h' file not found (hint)"),
                                 err("x.cuh", 25, "'rapidjsonx/other.h' file not found (hint)"),
                                 err("x.cuh", 26, "'cub/cub.cuh' file not found (hint)"),
                                 err("x.cuh", 30, "use of undeclared identifier 'Document'")};
  foldErrorsAfterMissingHeaders(lib);
  ASSERT_EQ(lib.size(), 3u);
  EXPECT_EQ(lib[0].notes.size(), 1u);
  EXPECT_EQ(lib[0].notes[0].message, "error: 'rapidjson/writer.h' file not found");
  EXPECT_NE(lib[0].message.find("1 later error may follow"), std::string::npos) << lib[0].message;
  EXPECT_EQ(lib[1].span.begin.line, 25u);
  EXPECT_EQ(lib[2].span.begin.line, 26u);
  EXPECT_EQ(lib[2].notes.size(), 1u) << "the identifier's error follows the last header";
  // At most 50 findings, the rest counted.
  std::vector<Diagnostic> many;
  for (unsigned i = 0; i < 60; ++i) many.push_back(err("c.cu", i + 1, "x"));
  foldErrorsAfterMissingHeaders(many);
  ASSERT_EQ(many.size(), 50u);
  EXPECT_NE(many.back().message.find("(and 10 more compile errors not shown)"), std::string::npos);
}
