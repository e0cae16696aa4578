#include "analyzer/engine/engine.h"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Lex/PreprocessorOptions.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <filesystem>
#include <fmt/format.h>
#include <set>
#include <tuple>

#include "analyzer/engine/compile_errors.h"
#include "analyzer/model/kernel_model.h"
#include "analyzer/engine/parse_command.h"
#include "analyzer/frontend/nvcc_lexing.h"
#include "analyzer/frontend/preamble.h"
#include "analyzer/rule/rule.h"
#include "analyzer/rule/rule_context.h"
#include "rules/compile_error.h"

namespace gpuopt {

void Rule::checkTranslationUnit(clang::ASTContext&, RuleContext&) {}
void Rule::checkKernel(const KernelModel&, RuleContext&) {}

namespace fs = std::filesystem;

namespace {
using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// One compiler error, as Clang reported it.
struct RawError {
  clang::SourceLocation loc;  // expansion location (valid while the parse's SourceManager lives)
  std::string where;          // "file:line:col: " for messages
  std::string message;
};

// Collects the Clang errors of a parse. Fatal errors (a missing #include) are made plain errors by
// the action, so the rest of the file is still parsed.
class ErrorCollector : public clang::DiagnosticConsumer {
 public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Error) return;
    llvm::SmallString<256> msg;
    info.FormatDiagnostic(msg);
    RawError e;
    e.message = std::string(msg);
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      auto& sm = info.getSourceManager();
      e.loc = sm.getExpansionLoc(info.getLocation());
      auto p = sm.getPresumedLoc(e.loc);
      if (p.isValid()) e.where = fmt::format("{}:{}:{}: ", p.getFilename(), p.getLine(), p.getColumn());
    }
    errors.push_back(std::move(e));
  }
  std::vector<RawError> errors;
};

// A file with a launch written `<< <` (which nvcc accepts) is read with the chevrons joined; the
// text keeps its length, so every location stays where it was. Likewise `extern "C"__global__`
// (splitReservedLiteralSuffixes: the literal moves one column left).
class PatchedFile : public llvm::vfs::File {
 public:
  PatchedFile(llvm::vfs::Status st, std::string text)
      : st_(llvm::vfs::Status::copyWithNewSize(st, text.size())), text_(std::move(text)) {}
  llvm::ErrorOr<llvm::vfs::Status> status() override { return st_; }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> getBuffer(const llvm::Twine& name, int64_t, bool, bool) override {
    return llvm::MemoryBuffer::getMemBufferCopy(text_, name.str());
  }
  std::error_code close() override { return {}; }

 private:
  llvm::vfs::Status st_;
  std::string text_;
};

class LaunchChevronFS : public llvm::vfs::ProxyFileSystem {
 public:
  LaunchChevronFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs, std::vector<std::string> skip)
      : ProxyFileSystem(std::move(fs)), skip_(std::move(skip)) {}
  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>> openFileForRead(const llvm::Twine& path) override {
    auto f = ProxyFileSystem::openFileForRead(path);
    std::string p = path.str();
    if (!f || p.rfind("/usr/", 0) == 0) return f;
    for (const auto& s : skip_)
      if (!s.empty() && p.rfind(s, 0) == 0) return f;
    auto st = (*f)->status();
    auto buf = (*f)->getBuffer(path);
    if (!st || !buf) return ProxyFileSystem::openFileForRead(path);
    std::string text = (*buf)->getBuffer().str();
    bool changed = text.find("<<") != std::string::npos && normalizeLaunchChevrons(text);
    changed = splitReservedLiteralSuffixes(text) || changed;  // `extern "C"__global__` (nvcc_lexing.h)
    if (!changed) return ProxyFileSystem::openFileForRead(path);
    return std::unique_ptr<llvm::vfs::File>(new PatchedFile(*st, std::move(text)));
  }

 private:
  std::vector<std::string> skip_;
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
                 << " addr: " << vals(a.addr, a.mask)
                 << (a.isWrite ? std::string(" storedSame=") + (a.storedSame ? "1" : "0") + " tags=" +
                                     (a.storedTag.empty() ? std::string("none")
                                                          : std::to_string(a.storedTag[0] % 1000) + "," + std::to_string(a.storedTag.size() > 1 ? a.storedTag[1] % 1000 : 0))
                               : std::string())
                 << "\n";
  for (const auto& b : m.branches()) {
    std::vector<int64_t> p(b.path.begin(), b.path.end());
    llvm::errs() << "  branch " << (b.cond ? rc.text(b.cond) : "") << " known=" << b.known << " data=" << b.data
                 << " sym=" << b.symbolic << " loop=" << b.isLoop << " ctx=" << b.context << " paths: " << vals(p, b.active) << "\n";
  }
  for (const auto& b : m.barriers()) llvm::errs() << "  barrier " << b.name << " ctx=" << b.context << "\n";
}

// What one parse of a file produced.
struct CompileError {
  SourceSpan span;      // in a linted file
  std::string message;  // Clang's, with a hint where one is known
  bool inTarget = true; // located in the linted file itself (not attributed to an #include line)
  bool removedApi = false;  // a use of an API nvcc 13 rejects (compile_errors.h), not a Clang error
  bool deviceCode = false;  // inside a function compiled for the GPU (inDeviceCode)
};
struct SkippedKernel {
  std::string name;
  SourceSpan where;
  std::string reason;
  int error = -1;  // index into errors of the error that explains it, if in a linted file
};
struct ParseResult {
  bool ran = false;
  size_t rawErrors = 0;                  // every error of the parse
  std::vector<std::string> errorTexts;   // "file:line:col: error: ..." for the input-error message
  std::vector<CompileError> errors;      // errors in (or attributed to) linted files
  size_t errorsInTarget = 0;             // errors located in the linted files themselves
  std::vector<Diagnostic> diags;         // the rules' findings
  std::vector<SkippedKernel> skipped;
  unsigned kernels = 0;                  // analysed
  unsigned assumedKernels = 0;           // ... with an assumed block shape (no launch, bounds or --block-dim)
  unsigned cleanFunctions = 0;           // host or device functions with a body free of errors
  double parseMs = 0, analysisMs = 0;
  std::map<std::string, double> phaseMs;  // FileAnalysis::phaseMs
  std::vector<std::string> log;
  bool consumed = false;                 // the AST was built and analysed (false: the parse never started)
  std::vector<std::pair<std::string, bool>> filesRead;  // real files the parse read, and whether each is a
                                                       // system header (the result cache's dependencies)
  std::optional<Preamble> preamble;      // the precompiled preamble it used
};

// Statements and declarations Clang could not make sense of (RecoveryExpr, invalid declarations).
struct InvalidFinder : clang::RecursiveASTVisitor<InvalidFinder> {
  bool found = false;
  bool VisitExpr(clang::Expr* e) {
    if (e->containsErrors()) { found = true; return false; }
    return true;
  }
  bool VisitDecl(clang::Decl* d) {
    if (d->isInvalidDecl()) { found = true; return false; }
    return true;
  }
};

// The program's own functions a body calls (not system headers).
struct CalleeFinder : clang::RecursiveASTVisitor<CalleeFinder> {
  const clang::SourceManager* sm;
  std::vector<const clang::FunctionDecl*> found;
  void add(const clang::FunctionDecl* fd) {
    if (!fd) return;
    // An instantiation Clang could not make (an error in the template's body): no body, invalid.
    if (fd->isInvalidDecl()) {
      found.push_back(fd);
      return;
    }
    const clang::FunctionDecl* def = fd->getDefinition();
    if (!def || !def->hasBody()) return;
    auto loc = sm->getExpansionLoc(def->getLocation());
    if (loc.isInvalid() || sm->isInSystemHeader(loc)) return;
    found.push_back(def);
  }
  bool VisitCallExpr(clang::CallExpr* c) { add(c->getDirectCallee()); return true; }
  bool VisitCXXConstructExpr(clang::CXXConstructExpr* c) { add(c->getConstructor()); return true; }
};

class LintConsumer : public clang::ASTConsumer {
 public:
  LintConsumer(ParseResult& out, const AnalysisOptions& opts, const std::vector<std::unique_ptr<Rule>>& rules,
               const LintedFiles::Settings& files, Clock::time_point start, ErrorCollector& errs)
      : out_(out), opts_(opts), rules_(rules), filesSettings_(files), start_(start), errs_(errs) {}

  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    out_.parseMs = msSince(start_);
    out_.consumed = true;
    auto t0 = Clock::now();
    parseHadErrors_ = ctx.getDiagnostics().hasErrorOccurred() || !errs_.errors.empty();
    auto& sm = ctx.getSourceManager();
    LintedFiles files(sm, filesSettings_);
    // Rules and the kernel search traverse only the translation unit's own declarations (not the
    // thousands in the CUDA headers): the main file's and those of the linted files.
    std::vector<clang::Decl*> scope;
    for (clang::Decl* d : ctx.getTranslationUnitDecl()->decls())
      if (files.inScope(d->getLocation())) scope.push_back(d);
    ctx.setTraversalScope(scope);
    RuleContext rc(ctx, opts_.model, files);
    auto enabled = [&](const Rule& r) {
      return opts_.enabledRules.empty() || opts_.enabledRules.count(std::string(r.info().id));
    };

    collectErrors(sm, files, rc);
    auto timed = [&](const std::string& phase, auto&& f) {
      auto t = Clock::now();
      f();
      out_.phaseMs[phase] += msSince(t);
    };
    for (const auto& r : rules_)
      if (enabled(*r)) timed(std::string(r->info().id), [&] { r->checkTranslationUnit(ctx, rc); });
    // The model carries what the enabled rules ask of it (like clang-tidy registering the matchers
    // of the enabled checks only).
    ModelOptions modelOpts = opts_.model;
    modelOpts.blockSteps = false;
    for (const auto& r : rules_)
      if (enabled(*r) && r->needsBlockSteps()) modelOpts.blockSteps = true;
    auto tLaunches = Clock::now();
    // Launches are looked for in all of the project's code the parse holds, not only the linted
    // files: a kernel file linted through its includer is launched from another file it brings in.
    std::vector<clang::Decl*> project;
    for (clang::Decl* d : ctx.getTranslationUnitDecl()->decls())
      if (files.inProject(d->getLocation())) project.push_back(d);
    ctx.setTraversalScope(project);
    LaunchIndex launches(ctx);
    ctx.setTraversalScope(scope);
    out_.phaseMs["launch index"] += msSince(tLaunches);
    std::vector<const clang::FunctionDecl*> functions;
    for (const clang::FunctionDecl* k : findFunctions(ctx, files, functions)) {
      auto tTaintK = Clock::now();
      auto skip = taint(k, sm);
      out_.phaseMs["error scan"] += msSince(tTaintK);
      if (skip) {
        SkippedKernel s;
        s.name = k->getQualifiedNameAsString();
        s.where = rc.span(k->getLocation());
        s.reason = skip->first;
        s.error = errorIndexAt(skip->second, sm);
        out_.skipped.push_back(std::move(s));
        continue;
      }
      // A kernel launched with several block shapes is judged with each (up to 4).
      // The shapes a profile recorded win over the launches in the code (and over --block-dim,
      // which gives the shape only of kernels whose launch is not known).
      auto prof = opts_.model.profiledBlocks.find(k->getNameAsString());
      bool profiled = prof != opts_.model.profiledBlocks.end() && !prof->second.empty();
      std::vector<LaunchIndex::Shape> shapes;
      if (profiled) {
        // The launch as profiled: its block and grid. A launch in the code with the same block
        // lends its place (messages point at it, as in a plain lint of it).
        auto grids = opts_.model.profiledGrids.find(k->getNameAsString());
        auto code = launches.all(k);
        for (size_t bi = 0; bi < prof->second.size(); ++bi) {
          const auto& b = prof->second[bi];
          LaunchIndex::Shape s{b[0], b[1], b[2], "launch the profile recorded"};
          for (const auto& c : code)
            if (c.x == b[0] && c.y == b[1] && c.z == b[2]) s = c;
          if (grids != opts_.model.profiledGrids.end() && bi < grids->second.size() && grids->second[bi][0] > 0) {
            const auto& g = grids->second[bi];
            std::copy(g.begin(), g.end(), s.grid);
            s.gridBlocks = g[0] * g[1] * g[2];
          }
          shapes.push_back(s);
        }
      }
      else
        shapes = launches.all(k);
      if (shapes.size() > 4) shapes.resize(4);
      if (shapes.size() < 2 && !profiled) shapes.clear();
      size_t variants = std::max<size_t>(1, shapes.size());
      ++out_.kernels;
      for (size_t vi = 0; vi < variants; ++vi) {
        const LaunchIndex::Shape* shape = shapes.empty() ? nullptr : &shapes[vi];
        rc.setLaunchVariant(shape && shapes.size() > 1 ? fmt::format("the {}x{}x{} block of the {}", shape->x, shape->y, shape->z, shape->where)
                                  : std::string());
        std::unique_ptr<KernelModel> model;
        timed("kernel model", [&] { model = KernelModel::build(k, ctx, modelOpts, launches, shape); });
        if (vi == 0 && model->blockAssumed() && !opts_.model.blockDimGiven && !launches.unreadable(k)) ++out_.assumedKernels;
        // (The log is kept whatever --verbose says: it is stored with the result, and --verbose is
        // not part of the result cache's key.)
        out_.log.push_back(fmt::format("{}: kernel {}: block {}x{}x{} ({}), {} accesses, {} branches, {} barriers{}",
                                         rc.span(k->getLocation()).begin.file, k->getQualifiedNameAsString(), model->blockX(),
                                         model->blockY(), model->blockZ(), model->blockSource(), model->accesses().size(),
                                         model->branches().size(), model->barriers().size(),
                                         model->truncated() ? " (evaluation truncated)" : ""));
        if (std::getenv("GPUOPT_LINT_DEBUG")) dumpModel(*model, rc);
        std::string inst, group;
        if (k->getTemplateSpecializationArgs()) {
          llvm::raw_string_ostream os(inst);
          k->getNameForDiagnostic(os, ctx.getPrintingPolicy(), /*Qualified=*/true);
          if (const auto* pt = k->getPrimaryTemplate()) group = fmt::format("{}", static_cast<const void*>(pt->getCanonicalDecl()));
        }
        rc.setFunction(k->getQualifiedNameAsString(), inst, group);
        for (const auto& r : rules_)
          if (enabled(*r)) timed(std::string(r->info().id), [&] { r->checkKernel(*model, rc); });
        rc.setFunction({});
      }
      rc.setLaunchVariant({});
    }
    auto tTaint = Clock::now();
    for (const clang::FunctionDecl* f : functions)
      if (!taint(f, sm)) ++out_.cleanFunctions;
    out_.phaseMs["error scan"] += msSince(tTaint);
    rc.finishInstantiations();
    out_.diags = std::move(rc.diagnostics());
    out_.analysisMs = msSince(t0);
  }

 private:
  // Kernel definitions in the linted files (template kernels through their instantiations); the
  // other function definitions there go to `others`.
  std::vector<const clang::FunctionDecl*> findFunctions(clang::ASTContext& ctx, const LintedFiles& files,
                                                        std::vector<const clang::FunctionDecl*>& others) {
    struct V : clang::RecursiveASTVisitor<V> {
      std::vector<const clang::FunctionDecl*> kernels, others;
      const LintedFiles* files;
      bool shouldVisitTemplateInstantiations() const { return true; }
      bool VisitFunctionDecl(clang::FunctionDecl* f) {
        if (!f->doesThisDeclarationHaveABody()) return true;
        if (f->isDependentContext()) return true;  // uninstantiated template pattern
        if (!files->contains(f->getLocation())) return true;
        (f->hasAttr<clang::CUDAGlobalAttr>() ? kernels : others).push_back(f);
        return true;
      }
    } v;
    v.files = &files;
    v.TraverseDecl(ctx.getTranslationUnitDecl());
    others = std::move(v.others);
    return v.kernels;
  }

  // Why a function cannot be trusted: code Clang could not compile in its body or in a function
  // of the program it calls. Returns the reason and the error's location.
  // Memoised: asked for each kernel, then again for every function at the end.
  std::map<const clang::FunctionDecl*, std::optional<std::pair<std::string, clang::SourceLocation>>> taintMemo_;
  bool parseHadErrors_ = true;
  std::optional<std::pair<std::string, clang::SourceLocation>> taint(const clang::FunctionDecl* f,
                                                                      const clang::SourceManager& sm) {
    // A parse without errors has no invalid declarations or recovery expressions to find.
    if (!parseHadErrors_) return std::nullopt;
    auto memo = taintMemo_.find(f);
    if (memo != taintMemo_.end()) return memo->second;
    return taintMemo_[f] = taintOf(f, sm);
  }
  std::optional<std::pair<std::string, clang::SourceLocation>> taintOf(const clang::FunctionDecl* f,
                                                                        const clang::SourceManager& sm) {
    std::set<const clang::FunctionDecl*> seen;
    std::vector<std::pair<const clang::FunctionDecl*, int>> todo = {{f, 0}};
    while (!todo.empty()) {
      auto [fn, depth] = todo.back();
      todo.pop_back();
      if (!seen.insert(fn).second) continue;
      const clang::FunctionDecl* pattern = fn->getTemplateInstantiationPattern();
      clang::SourceLocation where;
      bool bad = fn->isInvalidDecl();
      for (const clang::FunctionDecl* g : {fn, pattern}) {
        if (!g) continue;
        auto b = sm.getExpansionLoc(g->getBeginLoc()), e = sm.getExpansionLoc(g->getEndLoc());
        for (const auto& err : errs_.errors)
          if (err.loc.isValid() && b.isValid() && e.isValid() && sm.getFileID(err.loc) == sm.getFileID(b) &&
              !sm.isBeforeInTranslationUnit(err.loc, b) && !sm.isBeforeInTranslationUnit(e, err.loc)) {
            bad = true;
            where = err.loc;
            break;
          }
        if (bad) break;
      }
      if (!bad && fn->getBody()) {
        InvalidFinder inv;
        inv.TraverseStmt(fn->getBody());
        bad = inv.found;
      }
      if (bad) {
        if (where.isInvalid()) where = sm.getExpansionLoc(fn->getLocation());
        std::string line = fmt::format("line {}", sm.getExpansionLineNumber(where));
        if (fn == f) return std::make_pair("its body has code Clang could not compile (" + line + ")", where);
        return std::make_pair(fmt::format("it calls '{}', which has code Clang could not compile ({})",
                                          fn->getQualifiedNameAsString(), line),
                              where);
      }
      if (depth >= 8 || !fn->getBody()) continue;
      CalleeFinder cf;
      cf.sm = &sm;
      cf.TraverseStmt(fn->getBody());
      for (const auto* c : cf.found) todo.push_back({c, depth + 1});
    }
    return std::nullopt;
  }

  int errorIndexAt(clang::SourceLocation loc, const clang::SourceManager& sm) const {
    for (size_t i = 0; i < errorLocs_.size(); ++i)
      if (errorLocs_[i] == loc) return static_cast<int>(i);
    // Attributed to an #include line: the error whose line matches.
    unsigned line = sm.getExpansionLineNumber(loc);
    for (size_t i = 0; i < out_.errors.size(); ++i)
      if (out_.errors[i].span.begin.line == line) return static_cast<int>(i);
    return -1;
  }

  // Errors in the linted files as findings; an error in a header the file includes is reported at
  // the #include line that brings it in.
  void collectErrors(const clang::SourceManager& sm, const LintedFiles& files, RuleContext& rc) {
    out_.rawErrors = errs_.errors.size();
    std::set<std::pair<std::string, unsigned>> lines;
    std::vector<clang::SourceLocation> locs;
    for (const auto& e : errs_.errors) locs.push_back(e.loc);
    std::vector<bool> device = errs_.errors.empty() ? std::vector<bool>{} : inDeviceCode(rc.ast(), locs);
    for (size_t ei = 0; ei < errs_.errors.size(); ++ei) {
      const auto& e = errs_.errors[ei];
      out_.errorTexts.push_back(e.where + "error: " + e.message);
      if (e.loc.isInvalid()) continue;
      clang::SourceLocation at = e.loc;
      std::string origin;
      bool direct = files.contains(at);
      if (!direct) {
        // Up the include stack to a linted file.
        clang::FileID fid = sm.getFileID(at);
        clang::SourceLocation inc = sm.getIncludeLoc(fid);
        std::string header = std::string(sm.getFilename(at));
        unsigned hline = sm.getExpansionLineNumber(at);
        while (inc.isValid() && !files.contains(inc)) inc = sm.getIncludeLoc(sm.getFileID(inc));
        if (inc.isInvalid()) {
          // Not reached through an #include of a linted file (a forced header, the includer's own
          // code): the includer's errors are not this file's; anything else is shown at line 1.
          if (!files.settings().targetPath.empty()) continue;
          inc = sm.getLocForStartOfFile(sm.getMainFileID());
        }
        at = inc;
        origin = fmt::format("in included file {}:{}: ", header, hline);
      }
      SourceSpan span = rc.span(clang::SourceRange(at, at));
      if (!lines.insert({span.begin.file, span.begin.line}).second) continue;  // one per line
      CompileError ce;
      ce.span = span;
      ce.message = origin + e.message + compileErrorHint(e.message);  // analyzer/engine/compile_errors.cpp
      ce.inTarget = direct;
      ce.deviceCode = direct && device[ei];
      if (direct) ++out_.errorsInTarget;
      out_.errors.push_back(std::move(ce));
      errorLocs_.push_back(direct ? e.loc : clang::SourceLocation());
    }
    // APIs nvcc 13 rejects that the parse still declares (texture references, __shfl_down): a
    // compile-error finding each, not a Clang error (the kernels using them are analysed).
    for (const auto& u : findRemovedApiUses(rc.ast(), files, std::string(kBundledIncludeDir))) {
      auto at = clang::SourceLocation::getFromRawEncoding(u.raw);
      SourceSpan span = rc.span(clang::SourceRange(at, at));
      if (!lines.insert({span.begin.file, span.begin.line}).second) continue;
      out_.errors.push_back(CompileError{span, u.message, true, true});
      errorLocs_.push_back(at);
    }
  }

  ParseResult& out_;
  const AnalysisOptions& opts_;
  const std::vector<std::unique_ptr<Rule>>& rules_;
  LintedFiles::Settings filesSettings_;
  Clock::time_point start_;
  ErrorCollector& errs_;
  std::vector<clang::SourceLocation> errorLocs_;  // parallel to out_.errors
};

// --verbose: includes resolved through the project-layout fallback folders.
class LayoutLog : public clang::PPCallbacks {
 public:
  LayoutLog(const std::vector<std::string>& dirs, std::vector<std::string>& log) : dirs_(dirs), log_(log) {}
  void InclusionDirective(clang::SourceLocation, const clang::Token&, llvm::StringRef name, bool,
                          clang::CharSourceRange, clang::OptionalFileEntryRef file, llvm::StringRef searchPath,
                          llvm::StringRef, const clang::Module*, bool, clang::SrcMgr::CharacteristicKind) override {
    if (!file) return;
    std::string sp = fs::path(searchPath.str()).lexically_normal().string();
    for (size_t i = 1; i < dirs_.size(); ++i)  // dirs_[0] is the file's own folder
      if (sp == dirs_[i]) {
        log_.push_back(fmt::format("#include \"{}\" found in the project-layout folder {}", name.str(), sp));
        return;
      }
  }

 private:
  const std::vector<std::string>& dirs_;
  std::vector<std::string>& log_;
};

class LintAction : public clang::ASTFrontendAction {
 public:
  LintAction(ParseResult& out, const AnalysisOptions& opts, const std::vector<std::unique_ptr<Rule>>& rules,
             const LintedFiles::Settings& files, ErrorCollector& errs, const std::vector<std::string>& layoutDirs)
      : out_(out), opts_(opts), rules_(rules), files_(files), errs_(errs), layoutDirs_(layoutDirs) {}
  bool BeginSourceFileAction(clang::CompilerInstance& ci) override {
    // A missing #include is fatal to Clang (nothing after it would be checked): make it a plain
    // error so the rest of the file is parsed and analysed.
    ci.getDiagnostics().setFatalsAsError(true);
    if (!layoutDirs_.empty())
      ci.getPreprocessor().addPPCallbacks(std::make_unique<LayoutLog>(layoutDirs_, out_.log));
    return true;
  }
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&, llvm::StringRef) override {
    return std::make_unique<LintConsumer>(out_, opts_, rules_, files_, start_, errs_);
  }
  // The files the parse read (what a stored result depends on): every file entered, not the
  // in-memory ones (bundled headers, the preamble's header).
  void EndSourceFileAction() override {
    const auto& sm = getCompilerInstance().getSourceManager();
    for (unsigned i = 0; i < sm.local_sloc_entry_size(); ++i) {
      const auto& e = sm.getLocalSLocEntry(i);
      if (!e.isFile()) continue;
      auto entry = e.getFile().getContentCache().OrigEntry;
      if (!entry) continue;
      std::string name = std::string(entry->getName());
      if (name.rfind(std::string(kBundledIncludeDir), 0) == 0 || name.rfind("/gpuopt-lint-preamble/", 0) == 0) continue;
      out_.filesRead.emplace_back(std::move(name), clang::SrcMgr::isSystem(e.getFile().getFileCharacteristic()));
    }
  }

 private:
  ParseResult& out_;
  const AnalysisOptions& opts_;
  const std::vector<std::unique_ptr<Rule>>& rules_;
  LintedFiles::Settings files_;
  ErrorCollector& errs_;
  const std::vector<std::string>& layoutDirs_;
  Clock::time_point start_ = Clock::now();
};

std::string canonicalPath(const std::string& p) {
  std::error_code ec;
  return fs::weakly_canonical(fs::absolute(p, ec), ec).string();
}

// The prefixes of files that are never linted: the toolkit, Clang's headers, the bundled ones.
std::vector<std::string> excludedPrefixes(const std::string& resourceDir, const std::string& cudaPath) {
  std::vector<std::string> v = {std::string(kBundledIncludeDir)};
  for (const auto& p : {resourceDir, cudaPath})
    if (!p.empty()) {
      v.push_back(fs::absolute(p).lexically_normal().string());
      v.push_back(canonicalPath(p));
    }
  return v;
}

// Runs the LintAction, with the precompiled preamble when there is one: the forced includes the
// preamble holds are dropped from the command and the PCH is loaded instead.
class LintActionFactory : public clang::tooling::FrontendActionFactory {
 public:
  LintActionFactory(std::function<std::unique_ptr<clang::FrontendAction>()> make, const Preamble* pre)
      : make_(std::move(make)), pre_(pre) {}
  bool runInvocation(std::shared_ptr<clang::CompilerInvocation> inv, clang::FileManager* files,
                     std::shared_ptr<clang::PCHContainerOperations> ops, clang::DiagnosticConsumer* dc) override {
    if (pre_) {
      auto& pp = inv->getPreprocessorOpts();
      pp.Includes.clear();
      pp.ImplicitPCHInclude = pre_->pchPath;
    }
    return clang::tooling::FrontendActionFactory::runInvocation(std::move(inv), files, std::move(ops), dc);
  }
  std::unique_ptr<clang::FrontendAction> create() override { return make_(); }

 private:
  std::function<std::unique_ptr<clang::FrontendAction>()> make_;
  const Preamble* pre_;
};

struct Parser {
  const AnalysisOptions& opts;
  const std::vector<std::unique_ptr<Rule>>& rules;
  std::string resourceDir, cudaPath;
  bool preambleBuilt = false;
  bool mayBuildPreamble = true;  // one preamble build (attempt) per analyzed file and run

  // The file system of a parse: the real one (with `<< <` launches joined), the bundled headers
  // in memory, and `extraPath` (the preamble's header) when given.
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fileSystem(const std::string& extraPath = {},
                                                              const std::string& extraText = {}) {
    // Unsaved editor buffers (the language server) replace the files on disk, under the launch
    // chevron normalisation like any file.
    llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> real = llvm::vfs::getRealFileSystem();
    if (!opts.overlays.empty()) {
      auto buffers = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
      for (const auto& [path, text] : opts.overlays)
        buffers->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(text, path));
      auto withBuffers = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(real);
      withBuffers->pushOverlay(buffers);
      real = withBuffers;
    }
    auto base = llvm::makeIntrusiveRefCnt<LaunchChevronFS>(real, excludedPrefixes(resourceDir, cudaPath));
    auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(base);
    // The bundled headers (and the nvcc-compatibility header) live in memory.
    auto mem = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
    for (const auto& [path, text] : bundledCudaHeaders())
      mem->addFile(std::string(kBundledIncludeDir) + "/" + std::string(path), 0, llvm::MemoryBuffer::getMemBuffer(text));
    if (!extraPath.empty()) mem->addFile(extraPath, 0, llvm::MemoryBuffer::getMemBufferCopy(extraText));
    overlay->pushOverlay(mem);
    return overlay;
  }

  // One parse of `file` (the translation unit), linting either it and its project includes or,
  // with `target`, only that file.
  ParseResult run(const std::string& file, const ParseCommand& cmd, const std::vector<std::string>& layoutDirs,
                  const std::string& target = {}, const std::string& targetName = {}) {
    std::optional<Preamble> pre;
    std::vector<std::string> preLog;
    // Not with unsaved editor buffers: the file on disk is not what is parsed.
    if (!cmd.bundledCuda && !opts.cache.dir.empty() && opts.cache.preamble && opts.overlays.empty()) {
      pre = getPreamble(opts.cache.dir, cmd.args, layoutDirs, file,
                        [&](const std::string& p, const std::string& t) { return fileSystem(p, t); },
                        &preLog, mayBuildPreamble);
      if (pre && pre->built) preambleBuilt = true;
    }
    ParseResult res = runOnce(file, cmd, layoutDirs, target, targetName, pre ? &*pre : nullptr);
    if (pre && !res.consumed) {
      // The PCH could not be loaded (changed under us, or rejected): parse without it.
      preLog.push_back(file + ": the preamble " + pre->pchPath + " could not be used; parsed without it");
      pre.reset();
      res = runOnce(file, cmd, layoutDirs, target, targetName, nullptr);
    }
    if (pre)
      preLog.push_back(fmt::format("{}: parsed with the preamble {} ({} leading includes)", file, pre->pchPath, pre->includes));
    res.log.insert(res.log.begin(), preLog.begin(), preLog.end());
    res.preamble = std::move(pre);
    return res;
  }

  ParseResult runOnce(const std::string& file, const ParseCommand& cmd, const std::vector<std::string>& layoutDirs,
                      const std::string& target, const std::string& targetName, const Preamble* pre) {
    ParseResult res;
    res.ran = true;
    auto overlay = pre ? fileSystem(pre->headerPath, pre->headerText) : fileSystem();
    LintedFiles::Settings fs;
    fs.mainName = file;
    fs.targetPath = target.empty() ? std::string() : canonicalPath(target);
    fs.targetName = targetName;
    std::string root = repositoryRoot(file);
    fs.projectRoot = !root.empty() ? root : fs::absolute(file).lexically_normal().parent_path().parent_path().string();
    fs.excluded = excludedPrefixes(resourceDir, cudaPath);
    fs.projectDirs = layoutDirs;
    fs.headerFilter = opts.headerFilter;
    auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(clang::FileSystemOptions(), overlay);
    ErrorCollector errs;
    LintActionFactory factory([&] { return std::make_unique<LintAction>(res, opts, rules, fs, errs, layoutDirs); }, pre);
    clang::tooling::ToolInvocation inv(cmd.args, &factory, files.get(), std::make_shared<clang::PCHContainerOperations>());
    inv.setDiagnosticConsumer(&errs);
    bool ok = inv.run();
    // A header that is not found: where it was searched (the database entry and the flags that
    // gave the folders, or the Makefile), analyzer/engine/compile_errors.cpp.
    for (auto& e : res.errors)
      if (isMissingHeader(e.message))
        e.message += missingHeaderHint({cmd.flagsSource, cmd.fromDatabase, cmd.includeOrigins});
    if (!ok && errs.errors.empty() && res.rawErrors == 0) {
      res.rawErrors = 1;  // the driver rejected the command
      res.errorTexts.push_back("error: the compiler driver rejected the command; try --verbose");
    }
    return res;
  }
};

ParseCommand hostVariant(ParseCommand pc) {
  std::replace(pc.args.begin(), pc.args.end(), std::string("--cuda-device-only"), std::string("--cuda-host-only"));
  return pc;
}

// The host-side parse replaces a device-side one that had more errors (host code calling what only
// nvcc's host headers declare), but the device-side errors inside GPU code are nvcc's too (its
// device compilation fails there): they are kept as findings (the host parse's kernels are still
// analysed).
void keepDeviceCodeErrors(ParseResult& host, const ParseResult& device) {
  std::set<std::pair<std::string, unsigned>> lines;
  for (const auto& e : host.errors) lines.insert({e.span.begin.file, e.span.begin.line});
  for (const auto& e : device.errors) {
    if (!e.deviceCode || e.removedApi || !lines.insert({e.span.begin.file, e.span.begin.line}).second) continue;
    host.errors.push_back(e);
    ++host.rawErrors;
    if (e.inTarget) ++host.errorsInTarget;
  }
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
  Parser parser{opts, rules, resourceDir, cudaPath};
  // How a file is parsed (analyzer/engine/parse_command.cpp): its compile_commands.json entry, or
  // its Makefile's flags and the usual project layout.
  std::vector<std::string> responseFiles;  // named by the database entries used
  auto commandFor = [&](const std::string& f, std::vector<std::string>& layout) {
    FileCommand c = commandForFile(f, opts.frontend, resourceDir, cudaPath, fa.log);
    layout = std::move(c.layout);
    responseFiles.insert(responseFiles.end(), c.responseFiles.begin(), c.responseFiles.end());
    return std::move(c.pc);
  };
  // The result cache: same key (options, tool, what decides the command) and every file the
  // parse read unchanged. Looked up before the compilation database is parsed.
  std::string key;  // stays empty when the options turn the result cache off
  if (auto c = cachedAnalysis(file, opts, resourceDir, cudaPath, toolIdentity(), &key)) return std::move(*c);
  std::vector<std::string> layout;
  ParseCommand pc = commandFor(file, layout);
  std::vector<std::pair<std::string, bool>> filesRead;  // by every parse made (the stored result's dependencies)
  std::vector<FileStamp> preambleDeps;
  // A parse with errors may miss a header that a later run finds (the user adds it): the folders its
  // includes are searched in become dependencies too (by the names they hold).
  std::vector<std::string> searchFolders;
  bool anyErrors = false;
  auto searched = [&](const ParseCommand& c) {
    for (size_t i = 0; i < c.args.size(); ++i)
      for (const char* flag : {"-I", "-iquote", "-idirafter", "-isystem"}) {
        std::string_view a = c.args[i], f = flag;
        if (a == f && i + 1 < c.args.size()) searchFolders.push_back(c.args[i + 1]);
        else if (a.size() > f.size() && a.substr(0, f.size()) == f && (f == "-I" || a[f.size()] == '='))
          searchFolders.push_back(std::string(a.substr(f.size() + (f == "-I" ? 0 : 1))));
      }
  };
  searched(pc);
  auto note = [&](const ParseResult& r) {
    anyErrors = anyErrors || r.rawErrors > 0;
    filesRead.insert(filesRead.end(), r.filesRead.begin(), r.filesRead.end());
    if (r.preamble) preambleDeps.insert(preambleDeps.end(), r.preamble->deps.begin(), r.preamble->deps.end());
  };

  ParseResult best = parser.run(file, pc, layout);
  note(best);
  if (best.rawErrors && !pc.bundledCuda) {
    // Host code that calls host-only overloads (e.g. max(float, float) from the toolkit's host
    // math) does not compile device side: a host-side parse may do better.
    ParseResult h = parser.run(file, hostVariant(pc), layout);
    note(h);
    if (h.rawErrors < best.rawErrors) {
      fa.log.push_back(file + ": the device-side parse had " + std::to_string(best.rawErrors) + " errors (" +
                       best.errorTexts.front() + "); analysed with a host-side parse (" + std::to_string(h.rawErrors) +
                       " errors; code under __CUDA_ARCH__ is not seen)");
      keepDeviceCodeErrors(h, best);
      best = std::move(h);
    }
  }
  std::string usedIncluder;
  // A file tried through the files that include it depends on the other files of its folders
  // (which of them include it), on what the includers' parses read and on their commands' sources:
  // all of it becomes the stored result's dependencies.
  IncluderScan scan;
  std::vector<std::string> commandFiles;  // compile databases and Makefiles of the includers tried
  auto triedIncluder = [&](const std::string& inc, const ParseResult& r) {
    note(r);
    for (auto& src : commandSources(inc, opts.frontend.compileCommandsDir)) commandFiles.push_back(std::move(src));
  };
  if (best.errorsInTarget > 0) {
    // A kernel file that only compiles inside the file that includes it: analyse it there.
    std::vector<std::string> dbFiles;  // entries of the database (if any) are candidates too
    if (std::string dir = findCompileCommandsDir(file, opts.frontend.compileCommandsDir); !dir.empty()) {
      std::string err;
      if (auto db = clang::tooling::CompilationDatabase::loadFromDirectory(dir, err)) dbFiles = db->getAllFiles();
    }
    for (const auto& inc : findIncluders(file, opts.otherInputs, dbFiles, 3, &scan)) {
      std::vector<std::string> incLayout;
      ParseCommand ipc = commandFor(inc, incLayout);
      searched(ipc);
      ParseResult r = parser.run(inc, ipc, incLayout, file, file);
      triedIncluder(inc, r);
      if (r.rawErrors && !ipc.bundledCuda && r.errorsInTarget) {
        ParseResult h = parser.run(inc, hostVariant(ipc), incLayout, file, file);
        triedIncluder(inc, h);
        if (h.errorsInTarget < r.errorsInTarget) {
          keepDeviceCodeErrors(h, r);
          r = std::move(h);
        }
      }
      std::string shown = relativePath(inc, fs::current_path().string());
      fa.log.push_back(fmt::format("{}: tried through {}, which includes it: {} errors in the file", file, shown,
                                   r.errorsInTarget));
      if (r.errorsInTarget < best.errorsInTarget) {
        best = std::move(r);
        usedIncluder = shown;
      }
      if (best.errorsInTarget == 0) break;
    }
    if (!usedIncluder.empty()) fa.log.push_back(file + ": does not compile alone; analysed as included by " + usedIncluder);
  } else if (best.assumedKernels > 0 && best.errorsInTarget == 0) {
    // Kernels with no launch in this file: a file that includes it (main.cu's `#include
    // "kernel.cu"`) may launch them, and its parse gives their block shapes.
    for (const auto& inc : findIncluders(file, opts.otherInputs, {}, 3, &scan)) {
      std::vector<std::string> incLayout;
      ParseCommand ipc = commandFor(inc, incLayout);
      searched(ipc);
      ParseResult r = parser.run(inc, ipc, incLayout, file, file);
      triedIncluder(inc, r);
      std::string shown = relativePath(inc, fs::current_path().string());
      if (r.consumed && r.errorsInTarget == 0 && r.kernels >= best.kernels && r.assumedKernels < best.assumedKernels) {
        fa.log.push_back(fmt::format("{}: {} of its kernels have no launch here; analysed as included by {}, which "
                                     "launches {}", file, best.assumedKernels, shown,
                                     best.assumedKernels - r.assumedKernels));
        best = std::move(r);
        usedIncluder = shown;
        break;
      }
    }
  }
  fa.parseMs = best.parseMs;
  fa.analysisMs = best.analysisMs;
  fa.phaseMs = best.phaseMs;
  fa.kernels = best.kernels;
  fa.result.kernels = static_cast<int>(best.kernels);
  fa.result.includer = usedIncluder;
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
    return fa;
  }
  fa.result.diags = std::move(best.diags);
  if (compileErrorsOn) {
    std::vector<Diagnostic> errs;
    for (const auto& e : best.errors) {
      Diagnostic d;
      d.ruleId = std::string(CompileErrorRule::kInfo.id);
      d.severity = CompileErrorRule::kInfo.severity;
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
  fa.preambleBuilt = parser.preambleBuilt;
  if (!key.empty()) {
    // System headers (toolkit, Clang, the C++ library) are trusted by size and time; the project's
    // files are compared by content.
    std::sort(filesRead.begin(), filesRead.end());
    filesRead.erase(std::unique(filesRead.begin(), filesRead.end()), filesRead.end());
    std::vector<FileStamp> deps;
    bool complete = true;  // a dependency that cannot be stamped: not stored
    auto add = [&](std::optional<FileStamp> st) {
      if (st) deps.push_back(std::move(*st));
      else complete = false;
    };
    for (const auto& [f, system] : filesRead) add(stampFile(f, !system));
    deps.insert(deps.end(), preambleDeps.begin(), preambleDeps.end());
    // The includer search: the source files its folders hold, the files it read by size and
    // time, the includers' command sources by content. After errors, the names in the folders
    // includes are searched in (a missing header that appears).
    std::set<std::string> searchedIn;
    if (anyErrors) {
      std::vector<std::string> dirs = searchFolders;
      for (const auto& [f, system] : filesRead)
        if (!system) dirs.push_back(fs::path(f).parent_path().string());
      auto excluded = excludedPrefixes(resourceDir, cudaPath);  // toolkit, Clang, bundled (in memory)
      for (auto d : dirs) {
        std::error_code ec;
        d = fs::absolute(d.empty() ? std::string(".") : d, ec).lexically_normal().string();
        if (ec || d.empty()) continue;
        if (std::any_of(excluded.begin(), excluded.end(), [&](const std::string& p) { return d.rfind(p, 0) == 0; }))
          continue;
        // A folder that does not exist (yet): its parent's names tell when it appears.
        while (!fs::is_directory(d, ec) && fs::path(d).has_parent_path() && fs::path(d).parent_path() != fs::path(d))
          d = fs::path(d).parent_path().string();
        if (d.size() > 1 && d.back() == '/') d.pop_back();
        searchedIn.insert(d);
      }
    }
    for (const auto& d : searchedIn) add(stampFolder(d, false));
    for (const auto& d : std::set<std::string>(scan.folders.begin(), scan.folders.end())) add(stampFolder(d, true));
    for (const auto& f : std::set<std::string>(scan.files.begin(), scan.files.end())) add(stampFile(f, false));
    for (const auto& f : std::set<std::string>(commandFiles.begin(), commandFiles.end())) add(stampFile(f, true));
    // The response files the database entries named (CMake's includes_CUDA.rsp), by content.
    for (const auto& f : std::set<std::string>(responseFiles.begin(), responseFiles.end())) add(stampFile(f, true));
    if (complete) storeCachedResult(opts.cache.dir, file, key, deps, CachedAnalysis{fa.result, fa.kernels, fa.log});
  }
  return fa;
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
