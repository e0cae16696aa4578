#include "analyzer/lint.h"

#include <set>

#include "analyzer/grouping.h"
#include "analyzer/rule.h"
#include "analyzer/suppression.h"

namespace gpuopt {

FileAnalysis lintFile(const std::string& file, const ResolvedOptions& opts, const LintEnvironment& env, bool group,
                      SourceCache& sources) {
  FileAnalysis fa = analyzeFile(file, opts.analysis, env.rules, env.resourceDir, env.cudaPath);
  // NOLINT comments of each file a finding is in (the file itself, or a header it includes).
  std::set<std::string> files;
  for (const auto& d : fa.result.diags) files.insert(d.span.begin.file);
  files.erase(file);
  applySuppressions(file, sources.lines(file), fa.result.diags);
  for (const auto& f : files) {
    Suppressions s(f, sources.lines(f));
    std::erase_if(fa.result.diags, [&](const Diagnostic& d) { return d.span.begin.file == f && s.suppresses(d); });
  }
  applySeverities(opts, fa.result.diags);
  if (group) groupRepeats(fa.result.diags);
  assignFingerprints(fa.result.diags, sources);
  return fa;
}

}  // namespace gpuopt
