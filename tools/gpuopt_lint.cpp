// gpuopt-lint: the command-line driver.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <tuple>
#include <set>
#include <sstream>
#include <thread>

#include "analyzer/cli.h"
#include "analyzer/embedded_docs.h"
#include "analyzer/rule_info.h"
#include "analyzer/suppression.h"
#if GPUOPT_HAVE_CLANG
#include <fmt/format.h>

#include "analyzer/config.h"
#include "analyzer/fix.h"
#include "analyzer/grouping.h"
#include "analyzer/output.h"
#include "analyzer/engine.h"
#include "analyzer/profile_command.h"
#include "analyzer/rule.h"
#endif
#if GPUOPT_HAVE_CUDA
#include "kernels/demos.h"
#endif

using namespace gpuopt;

namespace {

int listRules() {
  for (const auto& r : allRuleInfos()) {
    std::string id(r.id), sev(severityName(r.severity));
    std::cout << id << std::string(id.size() < 22 ? 22 - id.size() : 1, ' ') << sev
              << std::string(sev.size() < 9 ? 9 - sev.size() : 1, ' ') << r.summary << "\n";
  }
  return 0;
}

int explain(const std::string& id) {
  const EmbeddedDoc* d = findRuleDoc(id);
  if (!d || !findRuleInfo(id)) {
    std::cerr << "gpuopt-lint: error: unknown rule '" << id << "' (see --list-rules)\n";
    return 2;
  }
  std::cout << d->markdown;
  return 0;
}

int demo(const CliOptions& o) {
#if GPUOPT_HAVE_CUDA
  if (o.demo == "list") {
    for (const auto& d : demos::list())
      std::cout << d.name << std::string(d.name.size() < 21 ? 21 - d.name.size() : 1, ' ') << d.summary << "\n";
    return 0;
  }
  return demos::run(o.demo, o.demoJson, std::cout, std::cerr);
#else
  std::cerr << "gpuopt-lint: error: this build has no demo kernels (it was built without the CUDA toolkit / nvcc); "
               "rebuild on a machine with CUDA to run --demo "
            << o.demo << "\n";
  return 3;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  CliOptions o;
  std::string err;
#if GPUOPT_HAVE_CLANG
  // `gpuopt-lint profile ... -- COMMAND`: measure with Nsight Compute, lint, join (analyzer/profile*).
  bool profiling = argc > 1 && std::string_view(argv[1]) == "profile";
  profile::Command pc;
  bool parsed = profiling ? profile::parseProfileCommandLine(argc, argv, o, pc, err) : parseCommandLine(argc, argv, o, err);
#else
  bool profiling = false;
  bool parsed = parseCommandLine(argc, argv, o, err);
#endif
  if (!parsed) {
    std::cerr << "gpuopt-lint: error: " << err << "\nRun 'gpuopt-lint " << (profiling ? "profile " : "")
              << "--help' for usage.\n";
    return 2;
  }
  if (o.help) {
#if GPUOPT_HAVE_CLANG
    if (profiling) {
      std::cout << profile::profileUsage();
      return 0;
    }
#endif
    std::cout << usageText();
    return 0;
  }
  if (o.version) {
    std::cout << "gpuopt-lint " << GPUOPT_VERSION << (GPUOPT_HAVE_CLANG ? "" : " (no analyzer in this build)")
              << (GPUOPT_HAVE_CUDA ? "" : " (no demo kernels in this build)") << "\n";
    return 0;
  }
  if (o.listRules) return listRules();
  if (!o.explain.empty()) return explain(o.explain);
  if (!o.demo.empty()) return demo(o);

#if !GPUOPT_HAVE_CLANG
  std::cerr << "gpuopt-lint: error: this build has no analyzer (built without Clang 22); it can run --demo, "
               "--list-rules and --explain only. Build with clang-22/libclang-cpp22-dev to lint files.\n";
  return 2;
#else
  std::error_code ec;
  std::string cwd = std::filesystem::current_path(ec).string();
  if (profiling) {
    int rc = profile::measure(pc, o, err);
    if (rc) {
      std::cerr << "gpuopt-lint: error: " << err << "\n";
      profile::finish(pc);
      return rc;
    }
  }
  // Whole-project run: `-p DIR` and no files lints every CUDA translation unit of the database.
  if (o.files.empty() && !o.frontend.compileCommandsDir.empty() && !o.dumpConfig) {
    std::string dbErr;
    o.files = compileDatabaseCudaFiles(o.frontend.compileCommandsDir, dbErr);
    if (o.files.empty()) {
      std::cerr << "gpuopt-lint: error: " << (dbErr.empty() ? "no CUDA files in the compilation database" : dbErr) << "\n";
      return 2;
    }
  }
  // Configuration: .gpuopt-lint.yaml nearest to each file (command line wins).
  std::vector<FileResult> results(o.files.size());
  std::vector<ResolvedOptions> perFile(o.files.size());
  bool configError = false;
  for (size_t i = 0; i < o.files.size(); ++i) {
    std::string cerr;
    if (!resolveOptions(o, o.files[i], perFile[i], cerr)) {
      results[i].file = o.files[i];
      results[i].errors.push_back({o.files[i], cerr});
      configError = true;
    }
    perFile[i].analysis.otherInputs = o.files;
    if (profiling) perFile[i].analysis.model.profiledBlocks = profile::blockShapes(pc.profile);
  }
  if (o.dumpConfig) {
    ResolvedOptions r;
    std::string cerr;
    if (!resolveOptions(o, o.files.empty() ? std::string("./x.cu") : o.files.front(), r, cerr)) {
      std::cerr << "gpuopt-lint: error: " << cerr << "\n";
      return 2;
    }
    std::cout << dumpConfig(r);
    return 0;
  }
  if (o.files.empty()) {
    std::cerr << "gpuopt-lint: error: no input files\nRun 'gpuopt-lint --help' for usage.\n";
    return 2;
  }

  std::string resErr;
  std::string resourceDir = findResourceDir(o.frontend, resErr);
  if (resourceDir.empty()) {
    std::cerr << "gpuopt-lint: error: " << resErr << "\n";
    return 2;
  }
  std::vector<std::string> cudaLog;
  std::string cudaPath = findCudaPath(o.frontend, &cudaLog);
  if (o.frontend.verbose)
    for (const auto& l : cudaLog) std::cerr << "gpuopt-lint: " << l << "\n";
  auto rules = registerAllRules();

  // Progress on a terminal for runs of several files (never on a pipe or a file).
  bool progress = o.files.size() > 1 && isatty(STDERR_FILENO) && !o.quiet;
  std::mutex progressMutex;
  size_t done = 0;
  std::vector<std::vector<std::string>> logs(o.files.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < o.files.size();) {
      if (!results[i].errors.empty()) continue;  // config error
      const ResolvedOptions& ro = perFile[i];
      if (ro.excluded) {
        results[i].file = o.files[i];
        continue;
      }
      if (progress) {
        std::lock_guard<std::mutex> lock(progressMutex);
        std::cerr << fmt::format("\r\033[K[{}/{}] {}", done + 1, o.files.size(), o.files[i]) << std::flush;
      }
      FileAnalysis fa = analyzeFile(o.files[i], ro.analysis, rules, resourceDir, cudaPath);
      SourceCache sc;
      // NOLINT comments of each file a finding is in (the file itself, or a header it includes).
      std::set<std::string> files;
      for (const auto& d : fa.result.diags) files.insert(d.span.begin.file);
      files.erase(o.files[i]);
      applySuppressions(o.files[i], sc.lines(o.files[i]), fa.result.diags);
      for (const auto& f : files) {
        Suppressions s(f, sc.lines(f));
        std::erase_if(fa.result.diags, [&](const Diagnostic& d) { return d.span.begin.file == f && s.suppresses(d); });
      }
      applySeverities(ro, fa.result.diags);
      if (!o.noGroup) groupRepeats(fa.result.diags);
      assignFingerprints(fa.result.diags, sc);
      results[i] = std::move(fa.result);
      logs[i] = std::move(fa.log);
      if (o.frontend.verbose)
        logs[i].push_back(fmt::format("{}: parse {:.1f} ms, analysis {:.1f} ms, {} kernels", o.files[i], fa.parseMs,
                                      fa.analysisMs, fa.kernels));
      if (progress) {
        std::lock_guard<std::mutex> lock(progressMutex);
        ++done;
      }
    }
  };
  unsigned jobs = std::max(1u, std::min<unsigned>(o.jobs, static_cast<unsigned>(o.files.size())));
  std::vector<std::thread> pool;
  for (unsigned j = 1; j < jobs; ++j) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (progress) std::cerr << "\r\033[K" << std::flush;
  if (o.frontend.verbose)
    for (auto& l : logs)
      for (auto& line : l) std::cerr << "gpuopt-lint: " << line << "\n";

  // A header (or an included kernel file) linted through several inputs is reported once.
  {
    std::set<std::tuple<std::string, std::string, unsigned, unsigned, std::string>> seen;
    for (auto& r : results)
      std::erase_if(r.diags, [&](const Diagnostic& d) {
        std::error_code e2;
        std::string f = std::filesystem::weakly_canonical(std::filesystem::absolute(d.span.begin.file, e2), e2).string();
        return !seen.insert({d.ruleId, f, d.span.begin.line, d.span.begin.col, d.message}).second;
      });
  }

  // --fix: apply mechanical fixes.
  if (o.fix) {
    for (auto& r : results) {
      // Fixes are applied file by file (a finding can be in a header the input includes).
      std::map<std::string, std::vector<Diagnostic>> byFile;
      for (const auto& d : r.diags)
        if (!d.fixIts.empty()) byFile[d.span.begin.file].push_back(d);
      for (const auto& [file, diags] : byFile) {
        std::string ferr;
        if (!applyFixes(file, diags, o.dryRun, std::cout, ferr)) r.errors.push_back({file, ferr});
      }
    }
  }

  if (profiling) {
    int rc = profile::joinAndTryFixes(pc, results, cwd, err);
    profile::finish(pc);
    if (rc) {
      std::cerr << "gpuopt-lint: error: " << err << "\n";
      return rc;
    }
  }

  OutputContext oc;
  oc.cwd = cwd;
  oc.toolVersion = GPUOPT_VERSION;
  oc.docsBaseUri = "https://github.com/gpuopt-lint/gpuopt-lint/blob/main/docs/rules/";
  oc.color = o.color == "always" || (o.color == "auto" && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
  SourceCache sources;
  if (!(o.fix && o.dryRun)) {
    switch (o.format) {
      case OutputFormat::Text: writeText(std::cout, results, oc, sources); break;
      case OutputFormat::Json: writeJson(std::cout, results, oc); break;
      case OutputFormat::Sarif: writeSarif(std::cout, results, oc); break;
      case OutputFormat::Github: writeGithub(std::cout, results, oc); break;
    }
  }
  bool anyError = configError;
  bool anyFinding = false;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].errors.empty()) anyError = true;
    for (const auto& d : results[i].diags)
      if (meetsFailThreshold(perFile[i], d)) anyFinding = true;
  }
  if (o.format == OutputFormat::Text && !o.quiet) {
    size_t n = 0, files = 0, kernels = 0;
    std::vector<std::string> noKernel;
    for (const auto& r : results) {
      n += r.diags.size();
      files += r.errors.empty() ? 1 : 0;
      if (r.kernels > 0) kernels += static_cast<size_t>(r.kernels);
      if (r.kernels == 0 && r.errors.empty()) noKernel.push_back(r.file);
    }
    if (n || anyError)
      std::cerr << fmt::format("gpuopt-lint: {} finding{} in {} file{} analysed ({} kernel{}){}\n", n, n == 1 ? "" : "s",
                               files, files == 1 ? "" : "s", kernels, kernels == 1 ? "" : "s",
                               anyError ? "; some inputs could not be analysed" : "");
    // Say which files had no kernel to analyse (host code only, or kernels the compiler rejected).
    if (!noKernel.empty()) {
      std::string list;
      for (size_t k = 0; k < noKernel.size() && k < 5; ++k) list += (k ? ", " : "") + noKernel[k];
      if (noKernel.size() > 5) list += fmt::format(" and {} more", noKernel.size() - 5);
      std::cerr << fmt::format("gpuopt-lint: no kernel analysed in {} file{}: {}\n", noKernel.size(),
                               noKernel.size() == 1 ? "" : "s", list);
    }
  }
  return anyError ? 2 : anyFinding ? 1 : 0;
#endif
}
