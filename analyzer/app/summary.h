// The lines a text run ends with on stderr (not with --quiet): findings, files analysed and
// excluded, the inputs that could not be analysed (named: they are why the exit status is 2),
// files without a kernel, what the cache saved, what --diff and --baseline left out, and what
// --fix changed.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "analyzer/app/config.h"
#include "analyzer/report/output.h"

namespace gpuopt {

struct RunSummary {
  double seconds = 0;
  size_t fromCache = 0, preamblesBuilt = 0;
  size_t hiddenByDiff = 0, hiddenByBaseline = 0;
  std::string diff, baseline;  // --diff REV, --baseline FILE
};

void writeSummary(std::ostream& err, const std::vector<FileResult>& results, const std::vector<ResolvedOptions>& perFile,
                  const RunSummary& s);

// "fixed 2 findings in 1 file; 1 remains" (--fix).
std::string fixSummary(size_t fixedFindings, size_t fixedFiles, size_t remaining);

}  // namespace gpuopt
