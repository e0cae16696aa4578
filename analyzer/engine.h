// Runs the analysis of one input file: parse with Clang, build the kernel model, run the rules.
#pragma once
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "analyzer/frontend.h"
#include "analyzer/model_options.h"
#include "analyzer/output.h"

namespace gpuopt {

class Rule;

struct AnalysisOptions {
  FrontendOptions frontend;
  ModelOptions model;
  std::set<std::string> enabledRules;  // ids; empty = all
};

struct FileAnalysis {
  FileResult result;
  double parseMs = 0;     // Clang: preprocess, parse, semantic analysis
  double analysisMs = 0;  // kernel model and rules
  unsigned kernels = 0;
  std::vector<std::string> log;  // --verbose
};

// The rules (rules/all_rules.h), one instance each.
std::vector<std::unique_ptr<Rule>> registerAllRules();

FileAnalysis analyzeFile(const std::string& file, const AnalysisOptions& opts,
                         const std::vector<std::unique_ptr<Rule>>& rules,
                         const std::string& resourceDir, const std::string& cudaPath);

}  // namespace gpuopt
