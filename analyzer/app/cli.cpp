#include "analyzer/app/cli.h"
#include "analyzer/app/shard.h"

#include <cstdlib>
#include <regex>
#include <thread>

#include "analyzer/rule/rule_info.h"
#include "analyzer/report/suppression.h"

namespace gpuopt {

namespace {
// "Finds ... with 16 rules: a, b, ..." wrapped at 100 columns, from the rule list itself.
std::string ruleListText() {
  const auto& infos = allRuleInfos();
  std::string out, line = "Finds CUDA performance and correctness mistakes with " + std::to_string(infos.size()) + " rules:";
  for (size_t i = 0; i < infos.size(); ++i) {
    std::string word = std::string(infos[i].id) + (i + 1 < infos.size() ? "," : " (--list-rules, --explain ID).");
    if (line.size() + 1 + word.size() > 100) {
      out += line + "\n";
      line = word;
    } else {
      line += " " + word;
    }
  }
  return out + line + "\n";
}
}  // namespace

std::string usageText() {
  return R"(Usage: gpuopt-lint [options] FILE... [-- COMPILER-ARGS]
  or:  gpuopt-lint lsp [options]      (language server on stdin/stdout; also --lsp)
  or:  gpuopt-lint profile [options] [FILE...] -- COMMAND [ARGS...]   (see gpuopt-lint profile --help)
  or:  gpuopt-lint merge-sarif [-o OUT] FILE...   (one SARIF report from the reports of several --shard runs)

)" + ruleListText() + R"(
Input and compiler:
  -p DIR                  read compile flags from DIR/compile_commands.json (default: found upward)
  -- ARGS                 extra compiler arguments, read as nvcc reads them (e.g. -DTILE=32 -Iinclude
                          -Xcompiler -fopenmp; Clang's own options pass through)
  --cuda-path DIR         CUDA toolkit (default: $CUDA_PATH, nvcc on PATH, /usr/local/cuda)
  --no-cuda               parse with the bundled CUDA declarations even if a toolkit exists
  --gpu-arch sm_XX        GPU architecture to parse for (default sm_90)
  --resource-dir DIR      Clang resource directory (default: the one this build was made with)
  --block-dim [KERNEL=]X[,Y[,Z]]
                          block shape of kernels whose launch in the code gives none (repeatable; with
                          KERNEL=, for that kernel only); a launch in the code always wins. Without it
                          such kernels are judged under a few plausible shapes (see docs/architecture.md)
  --max-file-size BYTES   refuse larger inputs (default 8 MiB)
  --max-instantiations N  analyse at most N instantiations of one kernel template per file (default 4;
                          0: all), chosen to cover every value of each template argument and every
                          launch shape; the others are named in a note

Rules:
  --list-rules            list the rules
  --explain ID            print a rule's documentation
  --rules=ID,...          run only these rules (globs allowed; alias --select)
  --disable=ID,...        do not run these rules (alias --ignore)
  --checks=GLOB,...       clang-tidy style: globs in order, '-' disables ('-*,bank-conflict')
  --header-filter REGEX   lint the kernels of included files whose absolute path matches REGEX
                          (POSIX extended, searched) instead of the project's own headers; '' lints
                          the main file only. Toolkit and Clang headers are never linted
  --config FILE           use this configuration instead of the nearest .gpuopt-lint.yaml
  --no-config             ignore .gpuopt-lint.yaml files
  --dump-config           print the effective configuration (for the first file) and exit
  --fail-on LEVEL         note|warning|error: lowest severity that makes the exit status 1

Large projects:
  --shard I/N             lint only the I-th of N parts of the inputs (1 <= I <= N; a file's part is
                          fixed by its path, so it stays on one CI job between runs); combine the
                          parts' SARIF with 'gpuopt-lint merge-sarif'

Only new findings:
  --baseline FILE         do not report the findings FILE lists (written by --write-baseline; matched
                          by file, rule and fingerprint, so findings whose lines moved stay hidden)
  --write-baseline FILE   write the findings of this run to FILE (exit 0 unless an input failed)
  --diff REV              report only findings on lines added or changed since the git revision REV
                          (without FILE: the .cu/.cuh files changed since REV); '--diff -' reads a
                          unified diff from stdin instead (as clang-tidy-diff: git diff -U0 | ...)

Output:
  --format FMT            text (default), json, sarif, github (alias --output-format)
  --color WHEN            auto (default), always, never
  -q, --quiet             no summary line and no progress
  --statistics            print the number of findings per rule instead of the findings
  --sort impact|place     impact: the findings with the highest static cost first, across files
                          (text: one list; json/sarif: per file, files by their top finding);
                          place (default): by file and line
  --min-impact X          leave out findings whose static cost is below X (0 to 1: the place's share
                          of its kernel's estimated global traffic, or how often it runs relative to
                          the kernel's hottest access; host code: 1 repeated with device work, 0.02
                          setup or verification). Below a rule's min-impact option (default 0.1) a
                          finding is a note
  --exit-zero             exit 0 even when there are findings (2 still means an input error)
  --show-fixes            list the mechanical fixes (with --fix: the ones applied)
  --export-fixes FILE     write findings and fixes as clang-tidy YAML for clang-apply-replacements
  --no-group              list every place of a repeated pattern (default: one finding per pattern
                          and kernel, saying "and N more like it", the others as related places;
                          and one finding per rule and statement line, the others as notes)
  --fix                   apply mechanical fixes (e.g. pad a bank-conflicting shared array), then lint
                          the fixed files again and report what remains
  --dry-run               with --fix: print the fixes as a patch (git apply, patch -p1) instead
  -j N                    analyse N files in parallel (default: number of cores)
  --cache-dir DIR         cache folder for precompiled CUDA headers and unchanged files' findings
                          (default: $XDG_CACHE_HOME/gpuopt-lint or ~/.cache/gpuopt-lint)
  --no-cache              neither read nor write the cache (parse every file from scratch)
  --verbose               show the compiler command, compile_commands.json use and timings (a file
                          answered from the result cache shows the log stored with it: add --no-cache
                          to parse it again)

Editor:
  lsp, --lsp              Language Server Protocol on stdio: diagnostics on open, change and save,
                          quick fixes as code actions; the options above apply to every file

Measured proofs (needs a CUDA GPU):
  profile ... -- COMMAND  run COMMAND under Nsight Compute and join its per-line counters with the
                          findings: measured figures, verdicts, measured-only findings
  --demo RULE|all|list    run the before/after kernels that measure a rule's penalty
  --json                  with --demo: JSON output

  --help, --version

With -p DIR and no FILE, every CUDA translation unit of DIR/compile_commands.json is linted.

Exit status: 0 no findings, 1 findings (compile errors are findings: compile-error, whatever else
the file holds), 2 usage error or an input that cannot be reported on (unreadable, not a source
file, a compile command the compiler driver rejects, a file that makes Clang crash).
Exit status of --demo: 0 every fixed variant verified, 1 one computed a wrong result, 2 unknown demo,
3 no usable GPU or driver (or a build without nvcc), 4 too little device memory.
Suppress a finding with // NOLINT(rule-id), // NOLINTNEXTLINE(rule-id), NOLINTBEGIN/NOLINTEND.
)";
}

namespace {
std::vector<std::string> splitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t c = s.find(',', start);
    std::string item = s.substr(start, c == std::string::npos ? std::string::npos : c - start);
    if (!item.empty()) out.push_back(item);
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return out;
}

bool checkRuleList(const std::vector<std::string>& ids, const char* flag, std::string& error) {
  for (const auto& item : ids) {
    std::string id = item[0] == '-' ? item.substr(1) : item;  // --checks: '-' disables
    bool any = false;
    for (const auto& r : allRuleInfos()) any = any || globMatch(id, r.id);
    if (!any) {
      error = std::string("unknown rule '") + id + "' in " + flag + " (see --list-rules)";
      return false;
    }
  }
  return true;
}
}  // namespace

bool parseCommandLine(int argc, char** argv, CliOptions& o, std::string& error) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return parseCommandLine(args, o, error);
}

bool parseCommandLine(const std::vector<std::string>& args, CliOptions& o, std::string& error) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (i == 0 && a == "lsp") a = "--lsp";  // `gpuopt-lint lsp`, like `ruff server`
    std::string value;
    bool hasInline = false;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      hasInline = true;
    }
    auto need = [&](std::string& out) {
      if (hasInline) { out = value; return true; }
      if (i + 1 >= args.size()) { error = "option '" + a + "' needs a value"; return false; }
      out = args[++i];
      return true;
    };
    auto flag = [&]() {
      if (hasInline) { error = "option '" + a + "' takes no value"; return false; }
      return true;
    };
    if (a == "--") {
      o.frontend.extraArgs.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    } else if (a == "-h" || a == "--help") { if (!flag()) return false; o.help = true; }
    else if (a == "--version") { if (!flag()) return false; o.version = true; }
    else if (a == "--list-rules") { if (!flag()) return false; o.listRules = true; }
    else if (a == "--explain") { if (!need(o.explain)) return false; }
    else if (a == "--demo") { if (!need(o.demo)) return false; }
    else if (a == "--json") { if (!flag()) return false; o.demoJson = true; }
    else if (a == "-p") { if (!need(o.frontend.compileCommandsDir)) return false; }
    else if (a == "--cuda-path") { if (!need(o.frontend.cudaPath)) return false; }
    else if (a == "--no-cuda") { if (!flag()) return false; o.frontend.noCuda = true; }
    else if (a == "--resource-dir") { if (!need(o.frontend.resourceDir)) return false; }
    else if (a == "--gpu-arch") {
      if (!need(o.frontend.gpuArch)) return false;
      if (o.frontend.gpuArch.rfind("sm_", 0) != 0) { error = "--gpu-arch expects sm_XX, got '" + o.frontend.gpuArch + "'"; return false; }
      o.gpuArchGiven = true;
    }
    else if (a == "--verbose" || a == "-v") { if (!flag()) return false; o.frontend.verbose = true; }
    else if (a == "-q" || a == "--quiet") { if (!flag()) return false; o.quiet = true; }
    else if (a == "--format" || a == "--output-format") {
      std::string f;
      if (!need(f)) return false;
      if (!parseOutputFormat(f, o.format)) { error = "unknown --format '" + f + "' (text, json, sarif, github)"; return false; }
    } else if (a == "--color") {
      if (!need(o.color)) return false;
      if (o.color != "auto" && o.color != "always" && o.color != "never") { error = "--color expects auto, always or never"; return false; }
    } else if (a == "--rules" || a == "--select") {
      std::string v;
      if (!need(v)) return false;
      o.rules = splitComma(v);
      o.rulesGiven = true;
      if (!checkRuleList(o.rules, "--rules", error)) return false;
    } else if (a == "--checks") {
      // clang-tidy's list: globs applied in order, '-' disables ("-*,bank-conflict").
      std::string v;
      if (!need(v)) return false;
      auto c = splitComma(v);
      if (!checkRuleList(c, "--checks", error)) return false;
      o.checks.insert(o.checks.end(), c.begin(), c.end());
    } else if (a == "--header-filter") {
      std::string v;
      if (!need(v)) return false;
      try {
        std::regex check(v, std::regex::extended);
      } catch (const std::regex_error& e) {
        error = "--header-filter '" + v + "' is not a valid regular expression: " + e.what();
        return false;
      }
      o.headerFilter = v;
    } else if (a == "--export-fixes") { if (!need(o.exportFixes)) return false; }
    else if (a == "--statistics") { if (!flag()) return false; o.statistics = true; }
    else if (a == "--sort") {
      std::string v;
      if (!need(v)) return false;
      if (v != "impact" && v != "place") { error = "--sort expects impact or place, got '" + v + "'"; return false; }
      o.sortImpact = v == "impact";
    } else if (a == "--max-instantiations") {
      std::string v;
      if (!need(v)) return false;
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 0 || n > 100000) {
        error = "--max-instantiations expects a whole number (0 for no limit), got '" + v + "'";
        return false;
      }
      o.maxInstantiations = static_cast<int>(n);
    } else if (a == "--min-impact") {
      std::string v;
      if (!need(v)) return false;
      char* end = nullptr;
      o.minImpact = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || o.minImpact < 0 || o.minImpact > 1) {
        error = "--min-impact expects a number from 0 to 1, got '" + v + "'";
        return false;
      }
    }
    else if (a == "--exit-zero") { if (!flag()) return false; o.exitZero = true; }
    else if (a == "--shard") {
      if (!need(o.shard)) return false;
      Shard sh;
      if (!parseShard(o.shard, sh, error)) return false;
    }
    else if (a == "--show-fixes") { if (!flag()) return false; o.showFixes = true; }
    else if (a == "--lsp") { if (!flag()) return false; o.lsp = true; }
    else if (a == "--disable" || a == "--ignore") {
      std::string v;
      if (!need(v)) return false;
      auto d = splitComma(v);
      if (!checkRuleList(d, "--disable", error)) return false;
      o.disable.insert(o.disable.end(), d.begin(), d.end());
    } else if (a == "--block-dim") {
      std::string v;
      if (!need(v)) return false;
      // NAME=X,Y,Z: for one kernel; X,Y,Z: for every kernel no launch in the code gives a shape.
      std::string kernel, dims = v;
      if (size_t eq = v.find('='); eq != std::string::npos) {
        kernel = v.substr(0, eq), dims = v.substr(eq + 1);
        if (kernel.empty()) { error = "--block-dim expects [KERNEL=]X[,Y[,Z]], got '" + v + "'"; return false; }
      }
      auto parts = splitComma(dims);
      if (parts.empty() || parts.size() > 3) { error = "--block-dim expects [KERNEL=]X[,Y[,Z]], got '" + v + "'"; return false; }
      unsigned long long total = 1;
      std::array<unsigned, 3> d{0, 1, 1};
      for (size_t k = 0; k < parts.size(); ++k) {
        try {
          size_t pos = 0;
          long x = std::stol(parts[k], &pos);
          if (pos != parts[k].size() || x <= 0) throw 0;
          if (x > 1024) {
            error = "--block-dim " + v + ": a block has at most 1024 threads (got " + parts[k] + " in one dimension)";
            return false;
          }
          d[k] = static_cast<unsigned>(x);
          total *= static_cast<unsigned long long>(x);
        } catch (...) {
          error = "--block-dim expects positive integers, got '" + v + "'";
          return false;
        }
      }
      if (total > 1024) { error = "--block-dim " + v + " has more than 1024 threads"; return false; }
      if (kernel.empty()) o.blockDim[0] = d[0], o.blockDim[1] = d[1], o.blockDim[2] = d[2];
      else o.kernelBlockDims[kernel] = d;
    } else if (a == "--max-file-size") {
      std::string v;
      if (!need(v)) return false;
      try { o.frontend.maxFileBytes = std::stoull(v); } catch (...) { error = "--max-file-size expects a number of bytes"; return false; }
    } else if (a == "-j" || a.rfind("-j", 0) == 0) {
      std::string v = a.size() > 2 ? a.substr(2) : "";
      if (v.empty() && !need(v)) return false;
      try { o.jobs = static_cast<unsigned>(std::stoul(v)); } catch (...) { error = "-j expects a number"; return false; }
      if (o.jobs == 0) { error = "-j expects a positive number"; return false; }
    } else if (a == "--config") { if (!need(o.configFile)) return false; }
    else if (a == "--no-config") { if (!flag()) return false; o.noConfig = true; }
    else if (a == "--dump-config") { if (!flag()) return false; o.dumpConfig = true; }
    else if (a == "--fail-on") {
      if (!need(o.failOn)) return false;
      Severity s;
      if (!parseSeverity(o.failOn, s)) { error = "--fail-on expects note, warning or error"; return false; }
    }
    else if (a == "--cache-dir") {
      if (!need(o.cacheDir)) return false;
      if (o.cacheDir.empty()) { error = "--cache-dir expects a folder"; return false; }
    }
    else if (a == "--no-cache") { if (!flag()) return false; o.noCache = true; }
    else if (a == "--baseline") { if (!need(o.baseline)) return false; }
    else if (a == "--write-baseline") { if (!need(o.writeBaseline)) return false; }
    else if (a == "--diff") {
      std::string v;
      if (!need(v)) return false;
      if (v.empty()) { error = "--diff expects a git revision, or '-' for a unified diff on stdin"; return false; }
      o.diff = v;
    }
    else if (a == "--fix") { if (!flag()) return false; o.fix = true; }
    else if (a == "--no-group") { if (!flag()) return false; o.noGroup = true; }
    else if (a == "--dry-run") { if (!flag()) return false; o.dryRun = true; }
    else if (!a.empty() && a[0] == '-' && a != "-") { error = "unknown option '" + args[i] + "'"; return false; }
    else o.files.push_back(args[i]);
  }
  if (o.dryRun && !o.fix) { error = "--dry-run goes with --fix"; return false; }
  if (o.statistics && o.format != OutputFormat::Text && o.format != OutputFormat::Json) {
    error = "--statistics prints text or json (not sarif or github)";
    return false;
  }
  if (o.lsp && !o.files.empty()) {
    error = "the language server takes no files (the editor sends them): '" + o.files.front() + "'";
    return false;
  }
  if (o.lsp && (o.fix || o.statistics || !o.exportFixes.empty() || o.dumpConfig || o.diff || !o.baseline.empty() ||
                !o.writeBaseline.empty())) {
    error = "the language server cannot be combined with --fix, --statistics, --export-fixes, --dump-config, --diff, "
            "--baseline or --write-baseline";
    return false;
  }
  if (!o.writeBaseline.empty() && (o.diff || o.fix)) {
    error = "--write-baseline records every finding: it does not go with --diff or --fix";
    return false;
  }
  if (o.jobs == 0) o.jobs = std::max(1u, std::thread::hardware_concurrency());
  return true;
}

}  // namespace gpuopt
