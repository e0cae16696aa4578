// Builds the program's call-site index (analyzer/frontend/program_calls.h) from a compile database:
// every entry's file (C, C++ and CUDA alike) and the C, C++ and CUDA files in the folders of the
// entries and of their -I folders (not the system's or the toolkit's), lexed with Clang's raw lexer
// (no preprocessing, no parse: milliseconds per file).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "analyzer/frontend/program_calls.h"

namespace gpuopt {

// nullptr when the database cannot be read. `log` gets one line (files read, time).
std::shared_ptr<const ProgramCalls> scanProgram(const std::string& dbDir, const std::string& cudaPath,
                                                std::vector<std::string>* log = nullptr);

// One file's text into `calls` (the test's entry point): calls of free functions (`f(...)`,
// `ns::f(...)`; not `o.f(...)`, `p->f(...)`), declarations and definitions left out; every other
// use of a name that is called or declared somewhere in the text is an other use.
void scanProgramText(const std::string& file, const std::string& text, ProgramCalls& calls);

}  // namespace gpuopt
