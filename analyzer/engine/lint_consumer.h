// The model-and-rules stage: the AST consumer that, once Clang has parsed a translation unit,
// collects its compile errors, finds the kernels of the linted files, builds the kernel model of
// each (with each launch shape) and runs the rules on it, into a ParseResult. It runs inside the
// parse (analyzer/engine/parse.cpp) because the AST lives only as long as the parse.
#pragma once
#include <clang/AST/ASTConsumer.h>

#include <memory>
#include <vector>

#include "analyzer/engine/engine.h"
#include "analyzer/engine/parse_result.h"
#include "analyzer/rule/rule_context.h"

namespace gpuopt::engine {

std::unique_ptr<clang::ASTConsumer> makeLintConsumer(ParseResult& out, const AnalysisOptions& opts,
                                                     const std::vector<std::unique_ptr<Rule>>& rules,
                                                     const LintedFiles::Settings& files, Clock::time_point start,
                                                     ErrorCollector& errs);

}  // namespace gpuopt::engine
