// The Clang-free half of lint.h: what happens to findings after the analysis, and the launcher's
// lookup of unchanged files.
#include <set>

#include "analyzer/frontend/cache.h"
#include "analyzer/report/grouping.h"
#include "analyzer/app/lint.h"
#include "analyzer/report/suppression.h"

namespace gpuopt {

void finishLint(const std::string& file, const ResolvedOptions& opts, bool group, SourceCache& sources,
                FileAnalysis& fa) {
  // NOLINT comments of each file a finding is in (the file itself, or a header it includes).
  std::set<std::string> files;
  for (const auto& d : fa.result.diags) files.insert(d.span.begin.file);
  files.erase(file);
  applySuppressions(file, sources.lines(file), fa.result.diags);
  for (const auto& f : files) {
    Suppressions s(f, sources.lines(f));
    std::erase_if(fa.result.diags, [&](const Diagnostic& d) { return d.span.begin.file == f && s.suppresses(d); });
  }
  // per-file-ignores of the configuration, by the file each finding is in.
  std::erase_if(fa.result.diags, [&](const Diagnostic& d) { return ignoredInFile(opts, d.span.begin.file, d.ruleId); });
  applySeverities(opts, fa.result.diags);
  if (group) groupRepeats(fa.result.diags);
  assignFingerprints(fa.result.diags, sources);
}

std::optional<FileAnalysis> lintFromCache(const std::string& file, const ResolvedOptions& opts,
                                          const std::string& resourceDir, const std::string& cudaPath,
                                          const std::string& toolId, bool group, SourceCache& sources) {
  // A bad input is left to the analyzer to report.
  if (checkInputFile(file, opts.analysis.frontend.maxFileBytes)) return std::nullopt;
  auto fa = cachedAnalysis(file, opts.analysis, resourceDir, cudaPath, toolId);
  if (!fa) return std::nullopt;
  finishLint(file, opts, group, sources, *fa);
  return fa;
}

}  // namespace gpuopt
