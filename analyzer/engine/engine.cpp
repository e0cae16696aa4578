#include "analyzer/engine/engine.h"

#include <clang/Tooling/CompilationDatabase.h>
#include <malloc.h>

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <tuple>

#include "analyzer/engine/compile_errors.h"
#include "analyzer/engine/parse.h"
#include "analyzer/engine/parse_command.h"
#include "analyzer/engine/parse_strategies.h"
#include "analyzer/engine/store_result.h"
#include "analyzer/rule/rule.h"
#include "rules/compile_error.h"

// The driver of one file's analysis: the stages in the order of docs/architecture.md, each taking
// values and returning values:
//   input check -> result cache (cache.h) -> compile command (parse_command.h) -> parse with its
//   strategies (parse_strategies.h; each parse runs the model and the rules on its AST,
//   lint_consumer.h) -> findings (below) -> store (store_result.h).

namespace gpuopt {

void Rule::checkTranslationUnit(clang::ASTContext&, RuleContext&) {}
void Rule::checkKernel(const KernelModel&, RuleContext&) {}

namespace fs = std::filesystem;

namespace {
using namespace engine;

// The findings stage: the winning parse's findings, its compile errors as compile-error findings
// (with the kernels they kept from analysis named), sorted by place. False when the file cannot
// be reported on (an input error in `fa.result.errors`).
bool reportParse(const std::string& file, ParsedFile& parsed, const ParseCommand& pc, const AnalysisOptions& opts,
                 FileAnalysis& fa) {
  ParseResult& best = parsed.best;
  if (!best.crash.empty()) {
    fa.result.errors.push_back({file, best.crash});  // not stored: the next run tries again
    return false;
  }
  fa.parseMs = best.parseMs;
  fa.analysisMs = best.analysisMs;
  fa.phaseMs = best.phaseMs;
  fa.kernels = best.kernels;
  fa.result.kernels = static_cast<int>(best.kernels);
  fa.result.includer = parsed.usedIncluder;
  fa.result.sourceHashes = best.sourceHashes;
  fa.result.programFacts = best.programFacts;
  fa.log.insert(fa.log.end(), best.log.begin(), best.log.end());
  for (const auto& s : best.skipped)
    fa.log.push_back(fmt::format("{}:{}: kernel {} not analysed: {}", s.where.begin.file, s.where.begin.line, s.name, s.reason));

  bool compileErrorsOn = opts.enabledRules.empty() || opts.enabledRules.count(std::string(CompileErrorRule::kInfo.id));
  // One rule for the exit status (docs/rules/compile-error.md): code Clang parsed gives findings,
  // compile errors included (exit 1 at their default severity), whatever else the file holds. Only
  // a file gpuopt-lint cannot report on is an input error (exit 2): the compiler never ran (the
  // driver rejected the command), or its errors cannot be placed in the file and nothing could be
  // analysed.
  const bool nothingAnalysed = best.rawErrors && best.kernels == 0 && best.cleanFunctions == 0;
  if (!best.consumed || (nothingAnalysed && best.errors.empty())) {
    std::string msg = "could not be parsed as CUDA: no kernel or function in it could be analysed";
    if (pc.bundledCuda) msg += " (with the bundled CUDA declarations; pass --cuda-path if a toolkit is installed)";
    size_t shown = 0;
    for (const auto& e : best.errorTexts) {
      if (shown++ == 3) { msg += fmt::format("\n  ... and {} more errors", best.errorTexts.size() - 3); break; }
      msg += "\n  " + e;
    }
    fa.result.errors.push_back({file, msg});
    return false;
  }
  fa.result.diags = std::move(best.diags);
  fa.result.coverage = std::move(best.coverage);
  if (compileErrorsOn) {
    std::vector<Diagnostic> errs;
    for (const auto& e : best.errors) {
      Diagnostic d;
      d.ruleId = std::string(CompileErrorRule::kInfo.id);
      d.severity = e.nvccWarning ? Severity::Warning : e.nvccAccepts ? Severity::Note : CompileErrorRule::kInfo.severity;
      d.span = e.span;
      d.message = e.message;
      errs.push_back(std::move(d));
    }
    if (nothingAnalysed && !errs.empty())
      errs.front().notes.push_back({errs.front().span, "nothing in this file could be analysed: no kernel or function in "
                                                       "it is free of compile errors"});
    // Each kernel that was not analysed is named at the error that explains it (else at the first).
    // Instantiations of one kernel template skipped for one reason: one note, with their count.
    std::map<std::tuple<std::string, std::string, int>, std::pair<const SkippedKernel*, unsigned>> skippedOnce;
    std::vector<const SkippedKernel*> order;
    for (const auto& s : best.skipped) {
      auto [it, fresh] = skippedOnce.try_emplace({s.name, s.reason, s.error}, &s, 0u);
      if (fresh) order.push_back(&s);
      ++it->second.second;
    }
    for (const SkippedKernel* s : order) {
      size_t at = s->error >= 0 && static_cast<size_t>(s->error) < errs.size() ? static_cast<size_t>(s->error) : 0;
      if (errs.empty()) break;
      const unsigned n = skippedOnce[{s->name, s->reason, s->error}].second;
      errs[at].notes.push_back({s->where, fmt::format("kernel '{}'{} was not analysed: {}", s->name,
                                                      n > 1 ? fmt::format(" ({} instantiations)", n) : "", s->reason)});
    }
    // nvcc stops at a missing header: one finding names it, the errors after it are its notes;
    // at most 50 findings (analyzer/engine/compile_errors.cpp).
    foldErrorsAfterMissingHeaders(errs, static_cast<size_t>(std::count_if(best.errors.begin(), best.errors.end(),
                                                                           [](const CompileError& e) { return !e.removedApi; })));
    fa.result.diags.insert(fa.result.diags.end(), errs.begin(), errs.end());
  }
  std::stable_sort(fa.result.diags.begin(), fa.result.diags.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.span.begin.file, a.span.begin.line, a.span.begin.col) <
           std::tie(b.span.begin.file, b.span.begin.line, b.span.begin.col);
  });
  return true;
}

}  // namespace

FileAnalysis analyzeFile(const std::string& file, const AnalysisOptions& opts,
                         const std::vector<std::unique_ptr<Rule>>& rules, const std::string& resourceDir,
                         const std::string& cudaPath) {
  FileAnalysis fa;
  fa.result.file = file;
  if (auto err = checkInputFile(file, opts.frontend.maxFileBytes)) {
    fa.result.errors.push_back({file, *err});
    return fa;
  }
  // The result cache: same key (options, tool, what decides the command) and every file the
  // parse read unchanged. Looked up before the compilation database is parsed.
  std::string key;  // stays empty when the options turn the result cache off
  if (auto c = cachedAnalysis(file, opts, resourceDir, cudaPath, toolIdentity(), &key)) return std::move(*c);
  // How the file is parsed: its compile_commands.json entry, or its Makefile's flags and the usual
  // project layout.
  FileCommand cmd = commandForFile(file, opts.frontend, resourceDir, cudaPath, fa.log);
  Parser parser{opts, rules, resourceDir, cudaPath};
  ParsedFile parsed = parseWithStrategies(file, cmd, parser, opts, resourceDir, cudaPath, fa.log);
  const bool reported = reportParse(file, parsed, cmd.pc, opts, fa);
  parser.finishBackground(fa.log);  // a preamble built beside the parse is stored before we return
  if (!reported) return fa;
  fa.preambleBuilt = parser.preambleBuilt;
  if (!key.empty()) storeAnalysis(file, key, fa, parsed.deps, opts, resourceDir, cudaPath);
  return fa;
}

void tuneAllocatorForAnalysis() {
#ifdef M_MMAP_THRESHOLD
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

std::vector<std::string> compileDatabaseCudaFiles(const std::string& dir, std::string& error) {
  auto db = clang::tooling::CompilationDatabase::loadFromDirectory(dir, error);
  if (!db) return {};
  std::vector<std::string> out;
  for (const auto& cmd : db->getAllCompileCommands()) {
    std::string ext = fs::path(cmd.Filename).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
    bool cuda = ext == ".cu" || ext == ".cuh";
    for (size_t i = 0; !cuda && i < cmd.CommandLine.size(); ++i) {
      const auto& a = cmd.CommandLine[i];
      if ((a == "-x" && i + 1 < cmd.CommandLine.size() && cmd.CommandLine[i + 1] == "cuda") || a == "-xcuda" ||
          (i == 0 && fs::path(a).filename() == "nvcc"))
        cuda = true;
    }
    if (!cuda) continue;
    fs::path p = fs::path(cmd.Filename).is_absolute() ? fs::path(cmd.Filename) : fs::path(cmd.Directory) / cmd.Filename;
    std::string s = p.lexically_normal().string();
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  if (out.empty()) error = "compile_commands.json in " + dir + " has no CUDA translation unit (.cu, -x cuda or nvcc)";
  return out;
}


}  // namespace gpuopt
