#include "analyzer/engine.h"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <chrono>
#include <tuple>
#include <filesystem>
#include <fmt/format.h>

#include "analyzer/kernel_model.h"
#include "analyzer/rule.h"
#include "analyzer/rule_context.h"

namespace gpuopt {

void Rule::checkTranslationUnit(clang::ASTContext&, RuleContext&) {}
void Rule::checkKernel(const KernelModel&, RuleContext&) {}

namespace {
using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Collects the Clang errors of a parse as text (first ones are what the user sees).
class ErrorCollector : public clang::DiagnosticConsumer {
 public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Error) return;
    llvm::SmallString<256> msg;
    info.FormatDiagnostic(msg);
    std::string where;
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      auto& sm = info.getSourceManager();
      auto loc = sm.getPresumedLoc(sm.getExpansionLoc(info.getLocation()));
      if (loc.isValid()) where = fmt::format("{}:{}:{}: ", loc.getFilename(), loc.getLine(), loc.getColumn());
    }
    errors.push_back(where + "error: " + std::string(msg));
  }
  std::vector<std::string> errors;
};

// GPUOPT_LINT_DEBUG=1: print the model's events (for developing rules).
void dumpModel(const KernelModel& m, RuleContext& rc) {
  auto vals = [&](const std::vector<int64_t>& v, const Mask& mask) {
    std::string s;
    for (unsigned t = 0; t < std::min<size_t>(v.size(), std::getenv("GPUOPT_LINT_DEBUG_ALL") ? 64 : 8); ++t) s += mask[t] ? std::to_string(v[t]) + " " : "- ";
    return s;
  };
  for (const auto& a : m.accesses())
    llvm::errs() << "  access " << rc.text(a.expr) << " space=" << memSpaceName(a.space) << " R" << a.isRead << "W"
                 << a.isWrite << " size=" << a.elemSize << " known=" << a.known << " data=" << a.data
                 << " sym=" << a.symbolic << " stride=" << a.strideSym << " epoch=" << a.epoch << " ctx=" << a.context
                 << " addr: " << vals(a.addr, a.mask) << "\n";
  for (const auto& b : m.branches()) {
    std::vector<int64_t> p(b.path.begin(), b.path.end());
    llvm::errs() << "  branch " << (b.cond ? rc.text(b.cond) : "") << " known=" << b.known << " data=" << b.data
                 << " sym=" << b.symbolic << " loop=" << b.isLoop << " ctx=" << b.context << " paths: " << vals(p, b.active) << "\n";
  }
  for (const auto& b : m.barriers()) llvm::errs() << "  barrier " << b.name << " ctx=" << b.context << "\n";
}

class LintConsumer : public clang::ASTConsumer {
 public:
  LintConsumer(FileAnalysis& out, const AnalysisOptions& opts, const std::vector<std::unique_ptr<Rule>>& rules,
               const std::string& file, Clock::time_point start, ErrorCollector& errs)
      : out_(out), opts_(opts), rules_(rules), file_(file), start_(start), errs_(errs) {}

  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    out_.parseMs = msSince(start_);
    if (!errs_.errors.empty()) return;  // reported by the caller
    auto t0 = Clock::now();
    // Only the file being linted is reported, so rules and kernel search traverse only its
    // top-level declarations (not the thousands in the CUDA headers).
    std::vector<clang::Decl*> scope;
    auto& sm = ctx.getSourceManager();
    for (clang::Decl* d : ctx.getTranslationUnitDecl()->decls())
      if (d->getLocation().isValid() && sm.isInMainFile(sm.getExpansionLoc(d->getLocation()))) scope.push_back(d);
    ctx.setTraversalScope(scope);
    RuleContext rc(ctx, opts_.model, file_);
    auto enabled = [&](const Rule& r) {
      return opts_.enabledRules.empty() || opts_.enabledRules.count(std::string(r.info().id));
    };
    for (const auto& r : rules_)
      if (enabled(*r)) r->checkTranslationUnit(ctx, rc);
    LaunchIndex launches(ctx);
    for (const clang::FunctionDecl* k : findKernels(ctx, rc)) {
      auto model = KernelModel::build(k, ctx, opts_.model, launches);
      ++out_.kernels;
      if (opts_.frontend.verbose)
        out_.log.push_back(fmt::format("{}: kernel {}: block {}x{}x{} ({}), {} accesses, {} branches, {} barriers{}",
                                       file_, k->getQualifiedNameAsString(), model->blockX(), model->blockY(),
                                       model->blockZ(), model->blockSource(), model->accesses().size(),
                                       model->branches().size(), model->barriers().size(),
                                       model->truncated() ? " (evaluation truncated)" : ""));
      if (std::getenv("GPUOPT_LINT_DEBUG")) dumpModel(*model, rc);
      for (const auto& r : rules_)
        if (enabled(*r)) r->checkKernel(*model, rc);
    }
    out_.result.diags = std::move(rc.diagnostics());
    std::stable_sort(out_.result.diags.begin(), out_.result.diags.end(), [](const Diagnostic& a, const Diagnostic& b) {
      return std::tie(a.span.begin.line, a.span.begin.col) < std::tie(b.span.begin.line, b.span.begin.col);
    });
    out_.analysisMs = msSince(t0);
  }

 private:
  // Kernel definitions in the main file; template kernels through their instantiations.
  std::vector<const clang::FunctionDecl*> findKernels(clang::ASTContext& ctx, RuleContext& rc) {
    struct V : clang::RecursiveASTVisitor<V> {
      std::vector<const clang::FunctionDecl*> found;
      RuleContext* rc;
      bool shouldVisitTemplateInstantiations() const { return true; }
      bool VisitFunctionDecl(clang::FunctionDecl* f) {
        if (!f->hasAttr<clang::CUDAGlobalAttr>() || !f->doesThisDeclarationHaveABody()) return true;
        if (f->isDependentContext()) return true;  // uninstantiated template pattern
        if (!rc->inMainFile(f->getLocation())) return true;
        found.push_back(f);
        return true;
      }
    } v;
    v.rc = &rc;
    v.TraverseDecl(ctx.getTranslationUnitDecl());
    return v.found;
  }

  FileAnalysis& out_;
  const AnalysisOptions& opts_;
  const std::vector<std::unique_ptr<Rule>>& rules_;
  std::string file_;
  Clock::time_point start_;
  ErrorCollector& errs_;
};

class LintAction : public clang::ASTFrontendAction {
 public:
  LintAction(FileAnalysis& out, const AnalysisOptions& opts, const std::vector<std::unique_ptr<Rule>>& rules,
             const std::string& file, ErrorCollector& errs)
      : out_(out), opts_(opts), rules_(rules), file_(file), errs_(errs) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&, llvm::StringRef) override {
    return std::make_unique<LintConsumer>(out_, opts_, rules_, file_, start_, errs_);
  }

 private:
  FileAnalysis& out_;
  const AnalysisOptions& opts_;
  const std::vector<std::unique_ptr<Rule>>& rules_;
  std::string file_;
  ErrorCollector& errs_;
  Clock::time_point start_ = Clock::now();
};

std::vector<std::string> compileDbArgs(const std::string& file, const FrontendOptions& fo,
                                       std::vector<std::string>& log) {
  std::string dir = findCompileCommandsDir(file, fo.compileCommandsDir);
  if (dir.empty()) return {};
  std::string err;
  auto db = clang::tooling::CompilationDatabase::loadFromDirectory(dir, err);
  if (!db) {
    log.push_back("compile_commands.json in " + dir + " could not be read: " + err);
    return {};
  }
  std::error_code ec;
  auto abs = std::filesystem::absolute(file, ec).lexically_normal().string();
  auto cmds = db->getCompileCommands(abs);
  if (!cmds.empty() && !cmds.front().Heuristic.empty()) cmds.clear();  // inferred from another file: not used
  if (cmds.empty()) {
    log.push_back("compile_commands.json in " + dir + " has no entry for " + file + "; using defaults");
    return {};
  }
  std::vector<std::string> dropped;
  auto args = filterCompileCommand(cmds.front().CommandLine, cmds.front().Directory, dropped);
  log.push_back("compile_commands.json: " + dir + " (kept " + std::to_string(args.size()) + " arguments)");
  for (const auto& d : dropped) log.push_back("  dropped (not for Clang): " + d);
  return args;
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
  auto dbArgs = compileDbArgs(file, opts.frontend, fa.log);
  ParseCommand pc = buildParseCommand(file, opts.frontend, resourceDir, cudaPath, dbArgs);
  if (opts.frontend.verbose) {
    std::string cmd;
    for (const auto& a : pc.args) cmd += (cmd.empty() ? "" : " ") + a;
    fa.log.push_back("parse: " + cmd);
  }

  auto parse = [&](const ParseCommand& cmd, ErrorCollector& errs) {
    auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
    {  // the bundled headers (and the nvcc-compatibility header) live in memory
      auto mem = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
      for (const auto& [path, text] : bundledCudaHeaders())
        mem->addFile(std::string(kBundledIncludeDir) + "/" + std::string(path), 0,
                     llvm::MemoryBuffer::getMemBuffer(text));
      overlay->pushOverlay(mem);
    }
    auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(clang::FileSystemOptions(), overlay);
    auto action = std::make_unique<LintAction>(fa, opts, rules, file, errs);
    clang::tooling::ToolInvocation inv(cmd.args, std::move(action), files.get());
    inv.setDiagnosticConsumer(&errs);
    return inv.run() && errs.errors.empty();
  };
  ErrorCollector errs;
  bool ok = parse(pc, errs);
  if (!ok && !pc.bundledCuda) {
    // Host code that calls host-only overloads (e.g. max(float, float) from the toolkit's host
    // math) does not compile device side: fall back to a host-side parse of the same file.
    ParseCommand host = pc;
    std::replace(host.args.begin(), host.args.end(), std::string("--cuda-device-only"), std::string("--cuda-host-only"));
    ErrorCollector hostErrs;
    FileAnalysis saved = fa;
    if (parse(host, hostErrs)) {
      fa.log.push_back(file + ": the device-side parse failed (" + (errs.errors.empty() ? std::string("driver error") : errs.errors.front()) +
                       "); analysed with a host-side parse (code under __CUDA_ARCH__ is not seen)");
      return fa;
    }
    fa = std::move(saved);
  }
  if (!ok) {
    std::string msg = "could not be parsed as CUDA";
    if (pc.bundledCuda) msg += " (with the bundled CUDA declarations; pass --cuda-path if a toolkit is installed)";
    size_t shown = 0;
    for (const auto& e : errs.errors) {
      if (shown++ == 3) { msg += fmt::format("\n  ... and {} more errors", errs.errors.size() - 3); break; }
      msg += "\n  " + e;
    }
    if (errs.errors.empty()) msg += "\n  (the compiler driver rejected the command; try --verbose)";
    fa.result.errors.push_back({file, msg});
    fa.result.diags.clear();
  }
  return fa;
}

}  // namespace gpuopt
