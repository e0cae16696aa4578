#include "analyzer/app/summary.h"

#include <fmt/format.h>

namespace gpuopt {

namespace {
std::string plural(size_t n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

// "a.cu, b.cu, c.cu, d.cu, e.cu and 3 more".
std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (size_t k = 0; k < names.size() && k < 5; ++k) out += (k ? ", " : "") + names[k];
  if (names.size() > 5) out += fmt::format(" and {} more", names.size() - 5);
  return out;
}
}  // namespace

void writeSummary(std::ostream& err, const std::vector<FileResult>& results, const std::vector<ResolvedOptions>& perFile,
                  const RunSummary& s) {
  size_t n = 0, files = 0, kernels = 0, excluded = 0, partly = 0;
  std::vector<std::string> noKernel, failed;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    n += r.diags.size();
    if (!r.errors.empty()) {
      failed.push_back(r.file.empty() ? r.errors.front().file : r.file);
      continue;
    }
    if (i < perFile.size() && perFile[i].excluded) {
      ++excluded;
      continue;
    }
    ++files;
    if (r.kernels > 0) kernels += static_cast<size_t>(r.kernels);
    for (const auto& k : r.coverage) partly += k.partly();
    if (r.kernels == 0) noKernel.push_back(r.file);
  }
  std::string notes;
  if (excluded > 0) notes += fmt::format("; {} excluded by the configuration", excluded);
  if (s.fromCache > 0) notes += fmt::format("; {} unchanged (from the cache)", s.fromCache);
  if (s.preamblesBuilt > 0)
    notes += fmt::format("; CUDA header preamble built for {} (later runs are faster)", plural(s.preamblesBuilt, "file", "files"));
  err << fmt::format("gpuopt-lint: {} in {} analysed ({}{}) in {:.2f} s{}\n", plural(n, "finding", "findings"),
                     plural(files, "file", "files"), plural(kernels, "kernel", "kernels"),
                     partly ? fmt::format(", {} partly analysed", partly) : std::string(), s.seconds, notes);
  // The inputs that make the exit status 2, by name: their errors may be far up in the output.
  if (!failed.empty())
    err << fmt::format("gpuopt-lint: {} could not be analysed: {} (the errors are above)\n",
                       plural(failed.size(), "input", "inputs"), listed(failed));
  // Files with no kernel to analyse (host code only, or kernels the compiler rejected).
  if (!noKernel.empty())
    err << fmt::format("gpuopt-lint: no kernel analysed in {}: {}\n", plural(noKernel.size(), "file", "files"), listed(noKernel));
  if (s.hiddenByBaseline > 0)
    err << fmt::format("gpuopt-lint: {} known {} in the baseline not shown ({})\n", s.hiddenByBaseline,
                       s.hiddenByBaseline == 1 ? "finding" : "findings", s.baseline);
  if (s.hiddenByDiff > 0)
    err << fmt::format("gpuopt-lint: {} on lines not changed {} not shown\n", plural(s.hiddenByDiff, "finding", "findings"),
                       s.diff == "-" ? "by the diff" : "since " + s.diff);
}

std::string fixSummary(size_t fixedFindings, size_t fixedFiles, size_t remaining) {
  return fmt::format("gpuopt-lint: fixed {} in {}; {}", plural(fixedFindings, "finding", "findings"),
                     plural(fixedFiles, "file", "files"),
                     remaining == 0 ? "none remains" : remaining == 1 ? "1 remains" : fmt::format("{} remain", remaining));
}

}  // namespace gpuopt
