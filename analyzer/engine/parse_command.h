// The command one file is parsed with: its compile_commands.json entry (nvcc's spellings and
// response files translated, analyzer/frontend/nvcc_args.h), else its Makefile's flags and the
// project-layout folders; the flags after `--` read as nvcc reads them (Clang's own options pass
// through); the host compiler's include folder searched last, as nvcc does (GCC's omp.h). Each
// include folder keeps where it came from, for the message of a header that is not found.
#pragma once
#include <string>
#include <vector>

#include "analyzer/frontend/frontend.h"

namespace gpuopt {

struct FileCommand {
  ParseCommand pc;
  std::vector<std::string> layout;         // project-layout folders (-idirafter), when no database entry
  std::vector<std::string> responseFiles;  // response files the entry named (the stored result depends on them)
};

// `log` gets the --verbose lines (the entry, what was kept and from where, what was dropped).
FileCommand commandForFile(const std::string& file, const FrontendOptions& fo, const std::string& resourceDir,
                           const std::string& cudaPath, std::vector<std::string>& log);

// Whether Clang's driver knows the option `arg` (a flag after `--` that nvcc does not know).
bool clangKnowsOption(const std::string& arg);

}  // namespace gpuopt
