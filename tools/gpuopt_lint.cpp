// gpuopt-lint: the command-line driver. Built twice when Clang is there:
// - gpuopt-lint-engine: everything (parse with Clang, analyse, report);
// - gpuopt-lint (GPUOPT_LAUNCHER): links no Clang or LLVM shared library, so it starts in a few
//   milliseconds. It answers what needs no analysis (--help, --version, --list-rules, --explain)
//   and a lint whose every file is unchanged since the last run (the result cache), with the same
//   output, exit status and summary as the analyzer; anything else runs the analyzer in its place
//   (exec, same arguments).
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <tuple>
#include <set>
#include <sstream>
#include <thread>

#include "analyzer/app/cli.h"
#include "analyzer/app/merge_sarif.h"
#include "analyzer/app/shard.h"
#include "analyzer/rule/embedded_docs.h"
#include "analyzer/app/progress.h"
#include "analyzer/rule/rule_info.h"
#include "analyzer/report/suppression.h"
#if GPUOPT_HAVE_CLANG
#include <fmt/format.h>

#include "analyzer/app/config.h"
#include "analyzer/app/summary.h"
#include "analyzer/report/fix.h"
#include "analyzer/report/grouping.h"
#include "analyzer/report/new_findings.h"
#include "analyzer/report/output.h"
#include "analyzer/engine/engine.h"
#include "analyzer/app/lint.h"
#include "analyzer/app/profile_command.h"
#if !GPUOPT_LAUNCHER
#include "analyzer/app/lsp_server.h"
#include "analyzer/engine/program_scan.h"
#include "analyzer/rule/rule.h"
#endif
#endif
#if GPUOPT_HAVE_CUDA && !GPUOPT_LAUNCHER
#include "kernels/demos.h"
#endif

using namespace gpuopt;

namespace {

#if GPUOPT_LAUNCHER
// The analyzer this launcher runs: $GPUOPT_LINT_ENGINE, else gpuopt-lint-engine beside this
// binary (the build folder), else ../libexec/gpuopt-lint/gpuopt-lint-engine (an installed tree).
std::string analyzerPath() {
  if (const char* e = std::getenv("GPUOPT_LINT_ENGINE"); e && *e) return e;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  std::filesystem::path beside = self / "gpuopt-lint-engine";
  std::filesystem::path installed = self.parent_path() / "libexec" / "gpuopt-lint" / "gpuopt-lint-engine";
  if (!std::filesystem::exists(beside, ec) && std::filesystem::exists(installed, ec)) return installed.string();
  return beside.string();
}

// Replaces this process with the analyzer, same arguments (stdin, stdout and stderr stay).
[[noreturn]] void runAnalyzer(char** argv) {
  std::string path = analyzerPath();
  execv(path.c_str(), argv);
  std::cerr << "gpuopt-lint: error: cannot run the analyzer " << path << ": " << std::strerror(errno)
            << " (reinstall gpuopt-lint, or set GPUOPT_LINT_ENGINE to the gpuopt-lint-engine binary)\n";
  std::exit(2);
}
#endif

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

#if !GPUOPT_LAUNCHER
int demo(const CliOptions& o) {
#if GPUOPT_HAVE_CUDA
  if (o.demo == "list") {
    for (const auto& d : demos::list())
      std::cout << d.name << std::string(d.name.size() < 24 ? 24 - d.name.size() : 1, ' ') << d.summary << "\n";
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
#endif

}  // namespace

int main(int argc, char** argv) {
  const auto startTime = std::chrono::steady_clock::now();
#if GPUOPT_HAVE_CLANG && !GPUOPT_LAUNCHER
  tuneAllocatorForAnalysis();
#endif
#if GPUOPT_HAVE_CLANG
  if (argc > 1 && std::string_view(argv[1]) == "merge-sarif") return mergeSarifMain(argc, argv, std::cout, std::cerr);
#endif
  CliOptions o;
  std::string err;
#if GPUOPT_LAUNCHER
  if (argc > 1 && std::string_view(argv[1]) == "profile") runAnalyzer(argv);
  bool profiling = false;
  bool parsed = parseCommandLine(argc, argv, o, err);
#elif GPUOPT_HAVE_CLANG
  // `gpuopt-lint profile ... -- COMMAND`: measure with Nsight Compute, lint, join (analyzer/profile/profile*).
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
#if GPUOPT_HAVE_CLANG && !GPUOPT_LAUNCHER
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
#if GPUOPT_LAUNCHER
  // What the launcher leaves to the analyzer: the demos, the language server, a whole
  // compilation database, changing files (--fix) or writing fixes, --dump-config.
  // (--diff - reads the diff from stdin, which the analyzer would then not see.)
  if (!o.demo.empty() || o.lsp || o.files.empty() || o.fix || o.showFixes || !o.exportFixes.empty() || o.dumpConfig ||
      (o.diff && *o.diff == "-"))
    runAnalyzer(argv);
#else
  if (!o.demo.empty()) return demo(o);
#endif

#if !GPUOPT_HAVE_CLANG
  std::cerr << "gpuopt-lint: error: this build has no analyzer (built without Clang 22); it can run --demo, "
               "--list-rules and --explain only. Build with clang-22/libclang-cpp22-dev to lint files.\n";
  return 2;
#else
#if !GPUOPT_LAUNCHER
  if (o.lsp) return runLanguageServer(o, std::cin, std::cout, std::cerr, GPUOPT_VERSION);
#endif
  std::error_code ec;
  std::string cwd = std::filesystem::current_path(ec).string();
#if !GPUOPT_LAUNCHER
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
#endif
  // Only new findings: the lines a diff changes (--diff), the findings a baseline lists (--baseline).
  std::optional<ChangedLines> changed;
  if (o.diff) {
    ChangedLines cl;
    std::string derr;
    bool ok;
    if (*o.diff == "-") {
      std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
      ok = cl.parse(text, repositoryRoot(cwd + "/."), cwd, derr);
      if (ok && o.files.empty())
        for (const auto& f : cl.files())
          if (f.ends_with(".cu") || f.ends_with(".cuh")) o.files.push_back(relativePath(f, cwd));
    } else {
      ok = cl.fromGit(*o.diff, cwd, o.files, derr);
    }
    if (!ok) {
      std::cerr << "gpuopt-lint: error: " << derr << "\n";
      return 2;
    }
    if (o.files.empty()) {
      if (!o.quiet) std::cerr << "gpuopt-lint: no CUDA file changed" << (*o.diff == "-" ? " in the diff" : " since " + *o.diff) << "\n";
      return 0;
    }
    changed = std::move(cl);
  }
  // --shard I/N: this job's part of the inputs (analyzer/app/shard.h).
  bool emptyShard = false;
  if (!o.shard.empty()) {
    Shard sh;
    std::string serr;
    parseShard(o.shard, sh, serr);  // checked when parsed
    size_t all = o.files.size();
    o.files = selectShard(o.files, o.frontend.compileCommandsDir.empty() ? cwd : o.frontend.compileCommandsDir, sh);
    emptyShard = o.files.empty() && all > 0;
    if (o.frontend.verbose || emptyShard)
      std::cerr << fmt::format("gpuopt-lint: shard {}: {} of {} input{}\n", o.shard, o.files.size(), all, all == 1 ? "" : "s");
  }
  Baseline baseline;
  if (!o.baseline.empty()) {
    std::string berr;
    if (!baseline.load(o.baseline, berr)) {
      std::cerr << "gpuopt-lint: error: " << berr << "\n";
      return 2;
    }
  }
  // The preamble and result caches (--cache-dir, --no-cache).
  CacheOptions cache;
  if (!o.noCache) cache.dir = o.cacheDir.empty() ? defaultCacheDir() : o.cacheDir;
  if (!cache.dir.empty()) {
    if (auto why = cacheDirProblem(cache.dir)) {
#if GPUOPT_LAUNCHER
      runAnalyzer(argv);  // it says why
#endif
      // Analysed without the cache, said once, whether the folder was given or is the default.
      const char* xdg = std::getenv("XDG_CACHE_HOME");
      const char* from = !o.cacheDir.empty()                               ? "--cache-dir"
                         : xdg && *xdg && std::filesystem::path(xdg).is_absolute() ? "$XDG_CACHE_HOME"
                                                                                   : "$HOME/.cache";
      std::cerr << "gpuopt-lint: warning: cannot use the cache folder '" << cache.dir << "' (" << from << "): " << *why
                << "; analysing without the cache (--no-cache says nothing)\n";
      cache.dir.clear();
    }
  }
#if GPUOPT_LAUNCHER
  if (cache.dir.empty()) runAnalyzer(argv);  // --no-cache
#endif
  // A core to spare (fewer files at once than cores): a missing preamble is built beside the parse.
  cache.backgroundPreamble = std::min<size_t>(o.jobs, o.files.size()) < std::max(1u, std::thread::hardware_concurrency());
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
    perFile[i].analysis.cache = cache;
#if !GPUOPT_LAUNCHER
    if (profiling) {
      perFile[i].analysis.model.profiledBlocks = profile::blockShapes(pc.profile);
      perFile[i].analysis.model.profiledGrids = profile::gridShapes(pc.profile);
      // The block shapes a profile recorded change the findings and are not part of the result
      // cache's key: a profile run does not read or store results (the header preamble still helps).
      perFile[i].analysis.cache.results = false;
    }
#endif
  }
#if GPUOPT_LAUNCHER
  if (configError) runAnalyzer(argv);  // it reports the error with the other files' findings
#endif
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
  if (o.files.empty() && !emptyShard) {
    std::cerr << "gpuopt-lint: error: no input files\nRun 'gpuopt-lint --help' for usage.\n";
    return 2;
  }

  std::string resErr;
  std::string resourceDir = findResourceDir(o.frontend, resErr);
  if (resourceDir.empty()) {
#if GPUOPT_LAUNCHER
    runAnalyzer(argv);
#endif
    std::cerr << "gpuopt-lint: error: " << resErr << "\n";
    return 2;
  }
  std::vector<std::string> cudaLog;
  std::string cudaPath = findCudaPath(o.frontend, &cudaLog);
  // The call sites of each compile database's files (launch wrappers called from other units):
  // one index per database the inputs use, reused from the cache while what it was read from is
  // unchanged (the launcher reads only its fingerprints, to check stored results against them).
  {
    std::map<std::string, std::shared_ptr<const ProgramCalls>> programs;
    for (size_t i = 0; i < o.files.size(); ++i) {
      std::string dir = findCompileCommandsDir(o.files[i], perFile[i].analysis.frontend.compileCommandsDir);
      if (dir.empty()) continue;
      auto [it, fresh] = programs.try_emplace(dir);
      if (fresh) {
#if GPUOPT_LAUNCHER
        it->second = loadStoredProgram(cache.dir, dir, true);
#else
        it->second = loadStoredProgram(cache.dir, dir, false);
        if (it->second) {
          cudaLog.push_back("program call sites: " + dir + ": unchanged since the last run (" +
                            std::to_string(it->second->files()) + " files; from the cache)");
        } else if ((it->second = scanProgram(dir, cudaPath, &cudaLog))) {
          storeProgram(cache.dir, dir, *it->second);
        }
#endif
      }
      perFile[i].analysis.programCalls = it->second;
    }
  }
#if GPUOPT_LAUNCHER
  // Every file must come from the result cache; the first that does not runs the analyzer.
  const std::string engineId = toolIdentityOf(analyzerPath());
  std::atomic<bool> miss{false};
#else
  if (o.frontend.verbose)
    for (const auto& l : cudaLog) std::cerr << "gpuopt-lint: " << l << "\n";
  LintEnvironment env;
  env.rules = registerAllRules();
  env.resourceDir = resourceDir;
  env.cudaPath = cudaPath;
#endif

  // Progress on a terminal for runs of several files (never on a pipe or a file).
  Progress progress(std::cerr, o.files.size(),
                    progressWanted(o.files.size(), isatty(STDERR_FILENO), o.quiet, std::getenv("TERM")),
                    terminalWidth(STDERR_FILENO));
  std::atomic<size_t> fromCache{0}, preamblesBuilt{0};
  std::vector<std::vector<std::string>> logs(o.files.size());
  std::atomic<size_t> next{0};
  std::vector<size_t> todo(o.files.size());  // the inputs to lint (all; after --fix, the fixed ones)
  for (size_t i = 0; i < todo.size(); ++i) todo[i] = i;
  auto worker = [&] {
    for (size_t n; (n = next.fetch_add(1)) < todo.size();) {
      const size_t i = todo[n];
      if (!results[i].errors.empty()) continue;  // config error
      const ResolvedOptions& ro = perFile[i];
      if (ro.excluded) {
        results[i].file = o.files[i];
        continue;
      }
      progress.started(o.files[i]);
      SourceCache sc;
#if GPUOPT_LAUNCHER
      if (miss) break;
      std::optional<FileAnalysis> hit = lintFromCache(o.files[i], ro, resourceDir, cudaPath, engineId, !o.noGroup, sc);
      if (!hit) {
        miss = true;
        break;
      }
      FileAnalysis fa = std::move(*hit);
#else
      FileAnalysis fa = lintFile(o.files[i], ro, env, !o.noGroup, sc);
#endif
      if (fa.fromCache) ++fromCache;
      if (fa.preambleBuilt) ++preamblesBuilt;
      results[i] = std::move(fa.result);
      logs[i] = ro.log;
      logs[i].insert(logs[i].end(), fa.log.begin(), fa.log.end());
      if (o.frontend.verbose && !fa.fromCache)
        logs[i].push_back(fmt::format("{}: parse {:.1f} ms, analysis {:.1f} ms, {} kernels", o.files[i], fa.parseMs,
                                      fa.analysisMs, fa.kernels));
      progress.finished(o.files[i]);
    }
  };
  auto lintTodo = [&] {
    next = 0;
    unsigned jobs = std::max(1u, std::min<unsigned>(o.jobs, static_cast<unsigned>(todo.size())));
    std::vector<std::thread> pool;
    for (unsigned j = 1; j < jobs; ++j) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    progress.clear();
  };
  lintTodo();
#if GPUOPT_LAUNCHER
  if (miss) runAnalyzer(argv);
  if (o.frontend.verbose) {
    for (const auto& l : cudaLog) std::cerr << "gpuopt-lint: " << l << "\n";
    std::cerr << "gpuopt-lint: every file unchanged: answered from the result cache without starting the analyzer\n";
  }
#endif
  if (o.frontend.verbose)
    for (auto& l : logs)
      for (auto& line : l) std::cerr << "gpuopt-lint: " << line << "\n";

  // A header (or an included kernel file) linted through several inputs is reported once; then
  // only new findings (--diff, --baseline).
  std::vector<size_t> hiddenByDiff(results.size()), hiddenByBaseline(results.size());  // per input
  auto reportable = [&] {
    mergeAcrossInputs(results);  // one finding per place in the run (analyzer/report/grouping.h)
    // One finding per statement line (not with --no-group, nor for `profile`, which judges each
    // access against its own instructions).
    if (!o.noGroup && !profiling)
      for (auto& r : results) foldSameLine(r.diags);
    for (auto& r : results)
      for (auto& d : r.diags) capMessage(d);
    if (o.minImpact >= 0) dropBelowImpact(results, o.minImpact);
    if (!o.writeBaseline.empty()) return;  // it records every finding
    for (size_t i : todo) {
      std::vector<FileResult> one(1);
      one[0] = std::move(results[i]);
      if (changed) hiddenByDiff[i] = changed->apply(one);
      if (!o.baseline.empty()) hiddenByBaseline[i] = baseline.apply(one);
      results[i] = std::move(one[0]);
    }
  };
  reportable();
  if (!o.writeBaseline.empty()) {
    size_t written = 0;
    std::string werr;
    if (!writeBaseline(o.writeBaseline, results, written, werr)) {
      std::cerr << "gpuopt-lint: error: " << werr << "\n";
      return 2;
    }
    bool inputError = configError;
    for (auto& r : results) {
      inputError = inputError || !r.errors.empty();
      r.diags.clear();  // recorded, not reported
    }
    SourceCache none;
    OutputContext eoc;
    eoc.cwd = cwd;
    writeText(std::cerr, results, eoc, none);  // the inputs that could not be analysed, if any
    std::cerr << fmt::format("gpuopt-lint: wrote {} finding{} to {}{}\n", written, written == 1 ? "" : "s", o.writeBaseline,
                             inputError ? "; some inputs could not be analysed (their findings are not in it)" : "");
    return inputError ? 2 : 0;
  }

  // --export-fixes: clang-tidy's YAML for clang-apply-replacements (before --fix changes the files).
  if (!o.exportFixes.empty()) {
    std::string ferr;
    if (!exportFixes(o.exportFixes, results, cwd, ferr)) {
      std::cerr << "gpuopt-lint: error: " << ferr << "\n";
      return 2;
    }
  }

  // --fix: apply mechanical fixes, file by file (a finding's fix can be in a header the input
  // includes), then lint the fixed inputs again: what is reported is what remains.
  std::vector<std::pair<std::string, std::string>> fixed;  // (file, rule) of the findings fixed
  // A patch names files from their repository's root (git apply), else from here (patch -p1).
  auto patchName = [&](const std::string& file) {
    std::string root = repositoryRoot(file);
    std::string shown = relativePath(file, root.empty() ? cwd : root);
    return !shown.empty() && shown[0] == '/' ? relativePath(file, cwd) : shown;
  };
  if (o.fix) {
    std::vector<size_t> again;
    for (size_t i = 0; i < results.size(); ++i) {
      auto& r = results[i];
      std::map<std::string, std::vector<Diagnostic>> byFile;  // edits of each file, by finding
      for (const auto& d : r.diags)
        for (const auto& fx : d.fixIts) {
          auto& v = byFile[fx.span.begin.file];
          if (v.empty() || v.back().fingerprint != d.fingerprint || v.back().span.begin.line != d.span.begin.line) {
            v.push_back(d);
            v.back().fixIts.clear();
          }
          v.back().fixIts.push_back(fx);
        }
      for (const auto& [file, diags] : byFile) {
        std::string ferr;
        bool skipped = false;
        auto hash = r.sourceHashes.find(file);
        if (!applyFixes(file, diags, o.dryRun, std::cout, ferr, patchName(file),
                        hash == r.sourceHashes.end() ? "" : hash->second, &skipped)) {
          if (skipped)  // edited while the tool ran: its findings stay reported, unfixed
            std::cerr << "gpuopt-lint: warning: " << file << ": " << ferr << "\n";
          else
            r.errors.push_back({file, ferr});
          continue;
        }
        for (const auto& d : diags) fixed.emplace_back(file, d.ruleId);
        if (!o.dryRun && (again.empty() || again.back() != i)) again.push_back(i);
      }
    }
#if !GPUOPT_LAUNCHER
    if (!again.empty() && !profiling) {
      todo = again;
      for (size_t i : todo) results[i] = FileResult{};
      lintTodo();
      reportable();
    }
#endif
  }

#if !GPUOPT_LAUNCHER
  if (profiling) {
    int rc = profile::joinAndTryFixes(pc, results, cwd, err);
    profile::finish(pc);
    if (rc) {
      std::cerr << "gpuopt-lint: error: " << err << "\n";
      return rc;
    }
  }
#endif

  OutputContext oc;
  oc.cwd = cwd;
  // GitHub annotations name files from the repository's root ($GITHUB_WORKSPACE in Actions).
  if (const char* ws = std::getenv("GITHUB_WORKSPACE"); ws && *ws) oc.repoRoot = ws;
  else oc.repoRoot = repositoryRoot(cwd + "/.");
  oc.toolVersion = GPUOPT_VERSION;
  oc.docsBaseUri = kDocsBaseUri;
  oc.verbose = o.frontend.verbose;
  oc.color = o.color == "always" || (o.color == "auto" && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
  SourceCache sources;
  if (o.statistics) {
    writeStatistics(std::cout, results, o.format == OutputFormat::Json);
  } else if (!(o.fix && o.dryRun)) {
    // --sort impact: text and annotations as one list across files, JSON and SARIF per file.
    std::vector<FileResult> sorted;
    if (o.sortImpact) {
      sorted = results;
      sortByImpact(sorted, o.format == OutputFormat::Text || o.format == OutputFormat::Github);
    }
    const auto& shown = o.sortImpact ? sorted : results;
    switch (o.format) {
      case OutputFormat::Text: writeText(std::cout, shown, oc, sources); break;
      case OutputFormat::Json: writeJson(std::cout, shown, oc); break;
      case OutputFormat::Sarif: writeSarif(std::cout, shown, oc); break;
      case OutputFormat::Github: writeGithub(std::cout, shown, oc); break;
    }
  }
  if (o.showFixes && o.format == OutputFormat::Text) {
    if (o.fix && !o.dryRun) {
      // ruff's --show-fixes: what was fixed, per file and rule.
      std::map<std::string, std::map<std::string, size_t>> byFile;
      for (const auto& [file, rule] : fixed) ++byFile[file][rule];
      std::cout << fmt::format("Fixed {} finding{}:\n", fixed.size(), fixed.size() == 1 ? "" : "s");
      for (const auto& [file, rules] : byFile) {
        std::cout << "- " << file << ":\n";
        for (const auto& [rule, n] : rules) std::cout << fmt::format("    {} x {}\n", n, rule);
      }
    } else if (!o.fix) {
      // Without --fix: the edits --fix would make, as a diff.
      std::map<std::string, std::vector<Diagnostic>> byFile;
      for (const auto& r : results)
        for (const auto& d : r.diags)
          if (!d.fixIts.empty()) byFile[d.span.begin.file].push_back(d);
      std::cout << (byFile.empty() ? "No finding has a mechanical fix.\n" : "Fixes (apply with --fix):\n");
      for (const auto& [file, diags] : byFile) {
        std::string ferr;
        if (!applyFixes(file, diags, true, std::cout, ferr, patchName(file))) std::cerr << "gpuopt-lint: error: " << file << ": " << ferr << "\n";
      }
    }
  }
  bool anyError = configError;
  bool anyFinding = false;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].errors.empty()) anyError = true;
    for (const auto& d : results[i].diags)
      if (meetsFailThreshold(perFile[i], d)) anyFinding = true;
  }
  if (o.format == OutputFormat::Text && !o.quiet && !o.statistics) {
    RunSummary sum;
    sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - startTime).count();
    sum.fromCache = fromCache, sum.preamblesBuilt = preamblesBuilt;
    for (size_t i = 0; i < results.size(); ++i) sum.hiddenByDiff += hiddenByDiff[i], sum.hiddenByBaseline += hiddenByBaseline[i];
    sum.diff = o.diff.value_or(""), sum.baseline = o.baseline;
    writeSummary(std::cerr, results, perFile, sum);
  }
  if (o.fix && !o.dryRun && !o.quiet) {
    std::set<std::string> files;
    size_t remaining = 0;
    for (const auto& [file, rule] : fixed) files.insert(file);
    for (const auto& r : results) remaining += r.diags.size();
    std::cerr << fixSummary(fixed.size(), files.size(), remaining) << "\n";
  }
  // --exit-zero (ruff): findings never fail the run; inputs that could not be analysed still do.
  return anyError ? 2 : anyFinding && !o.exitZero ? 1 : 0;
#endif
}
