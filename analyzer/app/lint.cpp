#include "analyzer/app/lint.h"


namespace gpuopt {

FileAnalysis lintFile(const std::string& file, const ResolvedOptions& opts, const LintEnvironment& env, bool group,
                      SourceCache& sources) {
  FileAnalysis fa = analyzeFile(file, opts.analysis, env.rules, env.resourceDir, env.cudaPath);
  finishLint(file, opts, group, sources, fa);
  return fa;
}

}  // namespace gpuopt
