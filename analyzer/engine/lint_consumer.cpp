#include "analyzer/engine/lint_consumer.h"

#include <clang/AST/RecursiveASTVisitor.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>

#include <llvm/Support/Path.h>
#include <cstdlib>
#include <functional>
#include <fmt/format.h>
#include <set>

#include "analyzer/engine/compile_errors.h"
#include "analyzer/engine/instantiation_cap.h"
#include "analyzer/model/coverage.h"
#include "analyzer/model/kernel_model.h"
#include "analyzer/model/shapes.h"
#include "analyzer/rule/rule.h"
#include "analyzer/rule/rule_context.h"

namespace gpuopt::engine {

namespace {
// The note on the findings of a kernel whose walk the work bound cut (KernelModel::loopCuts).
std::string cutNote(const KernelModel& m) {
  return fmt::format("the analysis of this kernel was cut by its work bound (too many loop iterations in all): this loop{} "
                     "walked one iteration only, and what the iterations not walked compute is a guess",
                     m.loopCuts() > 1 ? fmt::format(" and {} later ones", m.loopCuts() - 1) : "");
}
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

// Statements and declarations Clang could not make sense of (RecoveryExpr, invalid declarations).
struct InvalidFinder : clang::RecursiveASTVisitor<InvalidFinder> {
  bool found = false;
  const clang::SourceManager* sm = nullptr;
  const std::vector<clang::SourceLocation>* tolerated = nullptr;
  bool TraverseStmt(clang::Stmt* s, DataRecursionQueue* q = nullptr) {
    // An expression around an error nvcc does not have (ErrorCollector::tolerated): skipped whole.
    if (auto* e = llvm::dyn_cast_or_null<clang::Expr>(s); e && e->containsErrors() && sm && tolerated)
      for (clang::SourceLocation t : *tolerated) {
        auto b = sm->getExpansionLoc(e->getBeginLoc()), en = sm->getExpansionLoc(e->getEndLoc());
        if (b.isValid() && en.isValid() && sm->getFileID(b) == sm->getFileID(t) && !sm->isBeforeInTranslationUnit(t, b) &&
            !sm->isBeforeInTranslationUnit(en, t))
          return true;
      }
    return clang::RecursiveASTVisitor<InvalidFinder>::TraverseStmt(s, q);
  }
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
    dropErrorsNvccDefers(ctx);
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
    {
      auto tTest = Clock::now();
      rc.setTestUnit(testFramework(ctx, files));
      out_.phaseMs["test unit"] += msSince(tTest);
    }
    auto enabled = [&](const Rule& r) {
      return opts_.enabledRules.empty() || opts_.enabledRules.count(std::string(r.info().id));
    };

    collectErrors(sm, files, rc);
    auto timed = [&](const std::string& phase, auto&& f) {
      auto t = Clock::now();
      f();
      out_.phaseMs[phase] += msSince(t);
    };
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
    // (Setting a traversal scope drops the parent map built for the previous one: where the linted
    // files are the whole project, as in most files, the launch index's map is kept for the rules.)
    const bool sameScope = project == scope;
    if (!sameScope) ctx.setTraversalScope(project);
    LaunchIndex launches(ctx, opts_.programCalls.get());
    out_.programFacts = launches.programFacts();
    if (!sameScope) ctx.setTraversalScope(scope);
    out_.phaseMs["launch index"] += msSince(tLaunches);
    std::vector<const clang::FunctionDecl*> functions;
    const std::vector<const clang::FunctionDecl*> kernels = findFunctions(ctx, files, functions);
    // Kernels this file launches only in code that never runs (notRunHere), known to the rules over
    // the whole unit before they run.
    std::map<const clang::FunctionDecl*, std::string> notRunWhy;
    {
      std::set<const clang::FunctionDecl*> notRun;
      for (const clang::FunctionDecl* k : kernels)
        if (launches.all(k).empty() && !KernelModel::shapeGiven(k, opts_.model, launches) && !launches.unreadable(k) &&
            !opts_.model.profiledBlocks.count(k->getNameAsString()))
          if (std::string why = notRunHere(k, launches, sm); !why.empty()) {
            notRun.insert(k->getCanonicalDecl());
            notRunWhy[k] = std::move(why);
          }
      rc.setNotRunKernels(std::move(notRun));
    }
    for (const auto& r : rules_)
      if (enabled(*r)) timed(std::string(r->info().id), [&] { r->checkTranslationUnit(ctx, rc); });
    // At most maxInstantiations instantiations of one kernel template (instantiation_cap.h), among
    // those free of compile errors.
    std::set<const clang::FunctionDecl*> capped;
    std::vector<CappedTemplate> cappedTemplates;
    {
      auto tTaintK = Clock::now();
      std::vector<const clang::FunctionDecl*> clean;
      for (const clang::FunctionDecl* k : kernels)
        if (!taint(k, sm)) clean.push_back(k);
      out_.phaseMs["error scan"] += msSince(tTaintK);
      cappedTemplates = capInstantiations(clean, opts_.model.maxInstantiations, [&](const clang::FunctionDecl* k) {
        std::vector<std::string> f = templateArgumentFeatures(k);
        for (const auto& s : launches.all(k)) f.push_back(fmt::format("block={}x{}x{}", s.x, s.y, s.z));
        return f;
      }, capped);
    }
    for (const clang::FunctionDecl* k : kernels) {
      if (capped.count(k)) continue;
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
      std::string inst, group;
      if (k->getTemplateSpecializationArgs()) {
        llvm::raw_string_ostream os(inst);
        k->getNameForDiagnostic(os, ctx.getPrintingPolicy(), /*Qualified=*/true);
        if (const auto* pt = k->getPrimaryTemplate()) group = fmt::format("{}", static_cast<const void*>(pt->getCanonicalDecl()));
      }
      // A kernel this file launches only in code that never runs (a branch the constants make dead,
      // a group the preprocessor skips: CudaSift's alternative matchers, ninth stop check), with no
      // shape given for it: nothing here runs it, so it is named and not judged under a guessed
      // shape (--block-dim analyses it anyway).
      if (auto why = notRunWhy.find(k); why != notRunWhy.end()) {
        KernelCoverage kc;
        kc.kernel = inst.empty() ? k->getQualifiedNameAsString() : inst;
        kc.where = rc.span(k->getLocation());
        kc.accessesTotal = static_cast<unsigned>(sourceAccesses(k, ctx).size());
        kc.whole = why->second;
        out_.coverage.push_back(std::move(kc));
        continue;
      }
      if (shapes.size() > 4) shapes.resize(4);
      if (shapes.size() < 2 && !profiled) shapes.clear();
      ++out_.kernels;
      auto describe = [&](const KernelModel& model) {
        // (The log is kept whatever --verbose says: it is stored with the result, and --verbose is
        // not part of the result cache's key.)
        out_.log.push_back(fmt::format("{}: kernel {}: block {}x{}x{} ({}), {} accesses, {} branches, {} barriers{}{}",
                                       rc.span(k->getLocation()).begin.file, k->getQualifiedNameAsString(), model.blockX(),
                                       model.blockY(), model.blockZ(), model.blockSource(), model.accesses().size(),
                                       model.branches().size(), model.barriers().size(),
                                       model.truncated() ? " (evaluation truncated)" : "",
                                       model.loopCuts() ? fmt::format(" ({} loops cut by the work bound, the first at line {})",
                                                                      model.loopCuts(), rc.span(model.firstLoopCut()).begin.line)
                                                        : ""));
        if (std::getenv("GPUOPT_LINT_DEBUG")) dumpModel(model, rc);
      };
      auto covered = [&](const KernelModel& model) {
        KernelModel::Coverage c = model.coverage();
        KernelCoverage kc;
        kc.kernel = inst.empty() ? k->getQualifiedNameAsString() : inst;
        kc.where = rc.span(k->getLocation());
        kc.accessesTotal = c.total, kc.accessesReached = c.reached;
        for (auto& g : c.missed) kc.unanalysed.push_back({files.displayName(g.fid), g.firstLine, g.lastLine, g.reason});
        out_.coverage.push_back(std::move(kc));
      };
      auto runRules = [&](const KernelModel& model) {
        rc.setFunction(k->getQualifiedNameAsString(), inst, group);
        const size_t before = rc.diagnostics().size();
        for (const auto& r : rules_)
          if (enabled(*r)) timed(std::string(r->info().id), [&] { r->checkKernel(model, rc); });
        if (model.loopCuts())  // the work bound cut the walk: its findings say so
          for (size_t i = before; i < rc.diagnostics().size(); ++i)
            rc.diagnostics()[i].notes.push_back({rc.span(model.firstLoopCut()), cutNote(model)});
        rc.setFunction({});
      };
      if (profiled || KernelModel::shapeGiven(k, opts_.model, launches)) {
        size_t variants = std::max<size_t>(1, shapes.size());
        for (size_t vi = 0; vi < variants; ++vi) {
          const LaunchIndex::Shape* shape = shapes.empty() ? nullptr : &shapes[vi];
          rc.setLaunchVariant(shape && shapes.size() > 1 ? fmt::format("the {}x{}x{} block of the {}", shape->x, shape->y, shape->z, shape->where)
                                    : std::string());
          std::unique_ptr<KernelModel> model;
          timed("kernel model", [&] { model = KernelModel::build(k, ctx, modelOpts, launches, shape); });
          describe(*model);
          if (vi == 0) timed("coverage", [&] { covered(*model); });
          runRules(*model);
        }
        rc.setLaunchVariant({});
        continue;
      }
      // No shape given: the plausible shapes (model/shapes.h). The primary first; the others only
      // when it gives findings, to confirm or qualify them.
      // (An includer may launch it: the includer search looks for kernels like this one.)
      if (!launches.unreadable(k)) ++out_.assumedKernels;
      std::string why;
      ShapeFacts facts = KernelModel::shapeFacts(k, ctx, modelOpts, launches, &why);
      std::vector<ShapeGuess> guesses = plausibleShapes(facts);
      std::vector<ShapeRun> runs;
      std::vector<std::unique_ptr<KernelModel>> models;
      size_t primary = 0;
      for (; primary < guesses.size(); ++primary) {
        std::unique_ptr<KernelModel> model;
        timed("kernel model", [&] { model = KernelModel::buildGuess(k, ctx, modelOpts, launches, guesses[primary], why); });
        bool fits = !model->outOfBounds();
        models.push_back(std::move(model));
        if (fits) break;
      }
      // Every guess indexes some array past its end (a 1-D guess is shrunk until it fits, so a
      // kernel of several dimensions): the shape is not one of those tried, and nothing that
      // depends on it is said. The first walk still says what it analysed.
      const bool noneFits = primary == guesses.size();
      const KernelModel& first = noneFits ? *models.front() : *models.back();
      describe(first);
      timed("coverage", [&] { covered(first); });
      if (noneFits && first.blockY() * first.blockZ() > 1) continue;
      auto capture = [&](const KernelModel& model) {
        ShapeRun run;
        run.shape = {model.blockX(), model.blockY(), model.blockZ()};
        run.assumption = "; assuming " + model.blockDescription();
        rc.beginCapture();
        runRules(model);
        run.diags = rc.endCapture();
        if (model.loopCuts())  // (runRules adds the note only to findings reported, not captured)
          for (auto& d : run.diags) d.notes.push_back({rc.span(model.firstLoopCut()), cutNote(model)});
        return run;
      };
      runs.push_back(capture(first));
      if (!runs[0].diags.empty())
        for (size_t gi = primary + 1; gi < guesses.size(); ++gi) {
          std::unique_ptr<KernelModel> model;
          timed("kernel model", [&] { model = KernelModel::buildGuess(k, ctx, modelOpts, launches, guesses[gi], why); });
          if (model->outOfBounds()) continue;
          if (model->blockX() == first.blockX() && model->blockY() == first.blockY() && model->blockZ() == first.blockZ()) continue;
          runs.push_back(capture(*model));
        }
      rc.setFunction(k->getQualifiedNameAsString(), inst, group);
      for (auto& d : mergeShapeRuns(runs, guessedAxes(facts), why, k->getNameAsString())) rc.report(std::move(d));
      rc.setFunction({});
    }
    // The instantiations the cap left out: one note per template, with the accesses they hold.
    for (const CappedTemplate& c : cappedTemplates) {
      KernelCoverage kc;
      kc.kernel = c.first->getQualifiedNameAsString();
      kc.where = rc.span(c.first->getLocation());
      for (const clang::FunctionDecl* k : c.skipped) kc.accessesTotal += static_cast<unsigned>(sourceAccesses(k, ctx).size());
      kc.capped = true;
      kc.whole = fmt::format("{} of its {} instantiations in this file were not analysed: at most {} instantiations of one "
                             "kernel template are, chosen to cover every value of each template argument and every launch "
                             "shape (--max-instantiations N analyses more; 0: all)",
                             c.skipped.size(), c.total, opts_.model.maxInstantiations);
      out_.coverage.push_back(std::move(kc));
    }
    // Kernel templates of the file the user named that nothing in this unit instantiates (a
    // header-only library linted alone): nothing of them is analysed, and the run says so by name
    // instead of "0 kernels". (Those of the headers it includes are the business of the units
    // that launch them.)
    out_.uninstantiatedKernels = static_cast<unsigned>(uninstantiated_.size());
    for (const clang::FunctionTemplateDecl* t : uninstantiated_) {
      KernelCoverage kc;
      kc.kernel = t->getQualifiedNameAsString();
      kc.where = rc.span(t->getTemplatedDecl()->getLocation());
      kc.accessesTotal = static_cast<unsigned>(sourceAccesses(t->getTemplatedDecl(), ctx).size());
      kc.whole = "a kernel template that nothing in this file instantiates (no launch or explicit instantiation reaches "
                 "it), so it was not analysed: lint a file that launches it (with --header-filter matching this file "
                 "to see its findings here)";
      out_.coverage.push_back(std::move(kc));
    }
    auto tTaint = Clock::now();
    for (const clang::FunctionDecl* f : functions)
      if (!taint(f, sm)) ++out_.cleanFunctions;
    out_.phaseMs["error scan"] += msSince(tTaint);
    rc.finishInstantiations();
    out_.diags = std::move(rc.diagnostics());
    out_.sourceHashes = fixedFileHashes(sm, files, out_.diags);
    out_.analysisMs = msSince(t0);
  }

 private:
  // Kernel definitions in the linted files (template kernels through their instantiations); the
  // other function definitions there go to `others`.
  std::vector<const clang::FunctionDecl*> findFunctions(clang::ASTContext& ctx, const LintedFiles& files,
                                                        std::vector<const clang::FunctionDecl*>& others) {
    struct V : clang::RecursiveASTVisitor<V> {
      std::vector<const clang::FunctionDecl*> kernels, others;
      std::vector<const clang::FunctionTemplateDecl*> uninstantiated;
      const LintedFiles* files;
      bool shouldVisitTemplateInstantiations() const { return true; }
      bool VisitFunctionDecl(clang::FunctionDecl* f) {
        if (!f->doesThisDeclarationHaveABody()) return true;
        if (f->isDependentContext()) {  // uninstantiated template pattern
          const clang::FunctionTemplateDecl* t = f->getDescribedFunctionTemplate();
          if (t && f->hasAttr<clang::CUDAGlobalAttr>() && !f->isInvalidDecl() && files->isInput(f->getLocation()) &&
              t->specializations().empty())
            uninstantiated.push_back(t);
          return true;
        }
        if (!files->contains(f->getLocation())) return true;
        (f->hasAttr<clang::CUDAGlobalAttr>() ? kernels : others).push_back(f);
        return true;
      }
    } v;
    v.files = &files;
    v.TraverseDecl(ctx.getTranslationUnitDecl());
    others = std::move(v.others);
    uninstantiated_ = std::move(v.uninstantiated);
    return v.kernels;
  }

  std::vector<const clang::FunctionTemplateDecl*> uninstantiated_;  // kernel templates with no instantiation (findFunctions)

  // Which unit-test framework the file the user named defines test cases with, or "": a class
  // derived from testing::Test (GoogleTest's TEST, TEST_F, TEST_P), a registrar object of Catch2
  // (Catch::AutoReg) or Boost.Test, or a static registered through doctest::detail. Declarations
  // at namespace scope of the input file only.
  static std::string testFramework(clang::ASTContext& ctx, const LintedFiles& files) {
    auto derivesFromGTest = [](const clang::CXXRecordDecl* rd) {
      std::vector<const clang::CXXRecordDecl*> todo = {rd};
      for (int steps = 0; !todo.empty() && steps < 32; ++steps) {
        const clang::CXXRecordDecl* r = todo.back();
        todo.pop_back();
        if (!r || !r->hasDefinition()) continue;
        for (const auto& b : r->getDefinition()->bases()) {
          const clang::CXXRecordDecl* bd = b.getType()->getAsCXXRecordDecl();
          if (!bd) continue;
          if (bd->getQualifiedNameAsString() == "testing::Test") return true;
          todo.push_back(bd);
        }
      }
      return false;
    };
    std::function<std::string(const clang::DeclContext*, int)> walk = [&](const clang::DeclContext* dc, int depth) {
      for (const clang::Decl* d : dc->decls()) {
        if (!files.isInput(d->getLocation())) continue;
        if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(d)) {
          if (depth < 8)
            if (std::string f = walk(ns, depth + 1); !f.empty()) return f;
          continue;
        }
        if (const auto* rd = llvm::dyn_cast<clang::CXXRecordDecl>(d);
            rd && rd->isThisDeclarationADefinition() && !rd->isDependentContext() && derivesFromGTest(rd))
          return std::string("GoogleTest");
        if (const auto* vd = llvm::dyn_cast<clang::VarDecl>(d)) {
          std::string type;
          if (const auto* td = vd->getType()->getAsCXXRecordDecl()) type = td->getQualifiedNameAsString();
          if (type.starts_with("Catch::AutoReg")) return std::string("Catch2");
          if (type.starts_with("boost::unit_test::")) return std::string("Boost.Test");
          if (const auto* call = llvm::dyn_cast_or_null<clang::CallExpr>(vd->getInit() ? vd->getInit()->IgnoreImplicit() : nullptr))
            if (const clang::FunctionDecl* fd = call->getDirectCallee(); fd && fd->getQualifiedNameAsString().starts_with("doctest::detail::"))
              return std::string("doctest");
        }
      }
      return std::string();
    };
    return walk(ctx.getTranslationUnitDecl(), 0);
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
          if (!err.staticThroughReference && err.loc.isValid() && b.isValid() && e.isValid() && sm.getFileID(err.loc) == sm.getFileID(b) &&
              !sm.isBeforeInTranslationUnit(err.loc, b) && !sm.isBeforeInTranslationUnit(e, err.loc)) {
            bad = true;
            where = err.loc;
            break;
          }
        if (bad) break;
      }
      if (!bad && fn->getBody()) {
        InvalidFinder inv;
        inv.sm = &sm;
        inv.tolerated = &errs_.tolerated;
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

  // Why nothing in this unit runs kernel `k` although the file launches it (empty when it does, or
  // when it has no launch at all): every launch dead (LaunchIndex::onlyDeadLaunch), or the only
  // launches in groups the preprocessor skipped (`#if 0`: ErrorCollector::skippedRanges).
  std::string notRunHere(const clang::FunctionDecl* k, const LaunchIndex& launches, const clang::SourceManager& sm) const {
    const std::string name = k->getNameAsString();
    const std::string anyway = fmt::format("it was not analysed (--block-dim {}=X,Y,Z analyses it anyway)", name);
    if (const clang::Expr* dead = launches.onlyDeadLaunch(k))
      return fmt::format("its only launch in this file (line {}) is in a branch the constants make dead: nothing "
                         "here runs it, so {}", sm.getExpansionLineNumber(dead->getBeginLoc()), anyway);
    if (name.empty()) return {};
    auto isIdent = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (const clang::SourceRange& r : errs_.skippedRanges) {
      clang::SourceLocation b = sm.getExpansionLoc(r.getBegin()), e = sm.getExpansionLoc(r.getEnd());
      if (b.isInvalid() || e.isInvalid() || sm.getFileID(b) != sm.getFileID(e) || sm.isInSystemHeader(b)) continue;
      const llvm::StringRef buf = sm.getBufferData(sm.getFileID(b));
      const unsigned from = sm.getFileOffset(b), to = std::min<unsigned>(sm.getFileOffset(e), buf.size());
      if (from >= to) continue;
      const llvm::StringRef text = buf.substr(from, to - from);
      for (size_t at = text.find(name); at != llvm::StringRef::npos; at = text.find(name, at + 1)) {
        if (at > 0 && isIdent(text[at - 1])) continue;
        size_t p = at + name.size();
        if (p < text.size() && isIdent(text[p])) continue;
        while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
        if (p + 1 < text.size() && text[p] == '<' && !text.substr(p).starts_with("<<<")) {  // template arguments
          int depth = 0;
          for (; p < text.size(); ++p) {
            if (text[p] == '<') ++depth;
            else if (text[p] == '>' && --depth == 0) { ++p; break; }
            else if (text[p] == ';' || text[p] == '{') break;
          }
          while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
        }
        if (!text.substr(p).starts_with("<<<")) continue;
        const clang::SourceLocation launch = b.getLocWithOffset(static_cast<int>(at));
        return fmt::format("its only launch in this file (line {}) is in code the preprocessor skips (the group from "
                           "line {}): nothing here runs it, so {}", sm.getExpansionLineNumber(launch),
                           sm.getExpansionLineNumber(b), anyway);
      }
    }
    return {};
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

  // Where a linted file includes the header of `fid`, or one of the headers that include it,
  // although the parse entered it earlier through the includer's own code (a file analysed through
  // its includer: its #include of a header the includer already read is guarded away). Invalid if
  // none.
  clang::SourceLocation includedByLintedFile(const clang::SourceManager& sm, const LintedFiles& files,
                                             clang::FileID fid) const {
    for (int depth = 0; fid.isValid() && depth < 64; ++depth) {
      auto entry = sm.getFileEntryRefForID(fid);
      if (!entry) break;
      std::string path = std::string(entry->getFileEntry().tryGetRealPathName());
      for (const auto& [hash, file] : errs_.includes)
        if (!path.empty() && file == path && files.contains(hash)) return hash;
      clang::SourceLocation up = sm.getIncludeLoc(fid);
      if (up.isInvalid()) break;
      fid = sm.getFileID(up);
    }
    return {};
  }

  // Errors Clang gives in a template's definition that nvcc gives only where the template is
  // instantiated (nvcc's front end defers them; so does GCC):
  // - an inline-asm string that does not fit its operands: nvcc reads the string only in code it
  //   generates. Where an instantiation that is generated has it, Clang says it again from the
  //   instantiation ("in instantiation of" follows), and that is kept.
  // - no matching constructor in the functional notation `T(args)` of a non-dependent type, in a
  //   template nothing instantiates (cuSZ's tune_histsp: `GPU_histogram_generic<T>(...)` without
  //   `::kernel` in a test main() no longer calls). A declaration `T x(args);` nvcc checks at once,
  //   and an instantiated template Clang does not check again, so both keep the error.
  // - no member of that name in a class template's current instantiation (`m.set_slice3x3(...)` in
  //   a member of `Matrix<T, 3, 3>` that has only set_slice_3x3): nvcc looks the name up when the
  //   member function is instantiated, so a pattern nothing instantiates compiles (CUTLASS 2.x's
  //   matrix.h under FasterTransformer, checked with nvcc 13 -c).
  void dropErrorsNvccDefers(clang::ASTContext& ctx) {
    std::vector<clang::SourceLocation> locs;
    std::vector<size_t> which;
    for (size_t i = 0; i < errs_.errors.size(); ++i) {
      const RawError& e = errs_.errors[i];
      if ((e.asmString || e.noViableInit || e.noMember) && !e.fromInstantiation && e.loc.isValid()) {
        locs.push_back(e.loc);
        which.push_back(i);
      }
    }
    if (locs.empty()) return;
    std::vector<bool> pattern = inTemplatePattern(ctx, locs);
    std::vector<bool> instantiated, declared;
    bool anyInit = false;
    for (size_t i : which) anyInit = anyInit || !errs_.errors[i].asmString;
    if (anyInit) {
      instantiated = inInstantiatedTemplatePattern(ctx, locs);
      declared = atVariableDeclaration(ctx, locs);
    }
    std::set<size_t> drop;
    for (size_t k = 0; k < which.size(); ++k) {
      if (!pattern[k]) continue;
      const RawError& e = errs_.errors[which[k]];
      if (e.asmString || (!instantiated[k] && !(e.noViableInit && declared[k]))) drop.insert(which[k]);
    }
    std::vector<RawError> kept;
    for (size_t i = 0; i < errs_.errors.size(); ++i)
      if (!drop.count(i)) kept.push_back(std::move(errs_.errors[i]));
    errs_.errors = std::move(kept);
    errs_.dropped += drop.size();
  }

  // Errors in the linted files as findings; an error in a header the file includes is reported at
  // the #include line that brings it in.
  void collectErrors(const clang::SourceManager& sm, const LintedFiles& files, RuleContext& rc) {
    out_.rawErrors = errs_.errors.size();
    std::set<std::pair<std::string, unsigned>> lines;
    std::vector<clang::SourceLocation> locs;
    for (const auto& e : errs_.errors) locs.push_back(e.loc);
    std::vector<bool> device = errs_.errors.empty() ? std::vector<bool>{} : inDeviceCode(rc.ast(), locs);
    // What nvcc accepts in one place and not another (nvccAcceptsInContext): decided from the AST.
    for (auto& e : errs_.errors) {
      if (!e.nvccAccepts && (e.nonLiteralInConstexpr || e.thisInConstantExpression) &&
          nvccAcceptsInContext(rc.ast(), e.loc, e.nonLiteralInConstexpr))
        e.nvccAccepts = true;
      if (!e.nvccAccepts && e.nonConstantAt.isValid())
        if (auto r = staticMemberThroughReference(rc.ast(), e.nonConstantAt)) {
          e.nvccAccepts = e.staticThroughReference = true;
          e.staticThroughReferenceNote = staticMemberThroughReferenceNote(*r);
        }
      if (e.unmatchedDefinition && !e.nvccAccepts)
        if (auto u = unmatchedTemplateDefinition(rc.ast(), e.loc)) {
          e.nvccAccepts = true;
          if (auto entry = sm.getFileEntryRefForID(u->file))
            out_.declarationSites.push_back({canonicalPath(std::string(entry->getName())), u->offset, u->declaration});
        }
      if (e.targetSpecialization && !e.nvccAccepts) {
        std::vector<UnmatchedDefinition> sites = hostDeviceSpecializationSites(rc.ast(), e.loc);
        if (!sites.empty()) e.nvccAccepts = true;
        for (const auto& u : sites)
          if (auto entry = sm.getFileEntryRefForID(u.file))
            out_.declarationSites.push_back({canonicalPath(std::string(entry->getName())), u.offset, u.declaration});
      }
      if (!e.badTargets.empty() && !e.nvccAccepts) {
        std::vector<UnmatchedDefinition> sites = archDeviceSites(rc.ast(), e.badTargets);
        if (!sites.empty()) e.nvccAccepts = e.archDeviceMacro = out_.archDeviceMacros = true;
        else out_.badTargetsUnread = true;
        for (const auto& u : sites)
          if (auto entry = sm.getFileEntryRefForID(u.file))
            out_.declarationSites.push_back({canonicalPath(std::string(entry->getName())), u.offset, u.declaration});
      }
      if (e.missingTemplateKeyword || e.unresolvedOverload) {
        // `C<T>::f<N>(x)`: at the pattern (err_template_kw_missing) or at an instantiation, where
        // the comparison it was read as cannot take the member template ("reference to overloaded
        // function could not be resolved"). nvcc accepts it when C's definition declares f a
        // member template; the strategies then read the file with the keyword nvcc assumes.
        clang::SourceLocation name;
        const bool finds = nvccFindsMemberTemplate(rc.ast(), e.loc, &name);
        if (e.missingTemplateKeyword) e.nvccAccepts = finds;
        else if (finds) e.missingTemplateKeyword = e.nvccAccepts = true;
        auto& sm = rc.ast().getSourceManager();
        if (finds && name.isValid() && name.isFileID()) {
          if (auto entry = sm.getFileEntryRefForID(sm.getFileID(name)))
            out_.templateKeywordSites.push_back({canonicalPath(std::string(entry->getName())), sm.getFileOffset(name)});
        }
      }
    }
    // Errors Clang gives after rejecting a template template argument nvcc accepts, that nothing
    // above explains: they may follow from the declaration it dropped (RawError::followsDropped).
    unsigned dropped = 0;
    for (auto& e : errs_.errors) {
      if (e.templateTemplateArgument && e.loc.isValid()) {
        if (!dropped) dropped = sm.getExpansionLineNumber(e.loc);
      } else if (dropped && !e.nvccAccepts && !e.includedAnyway && e.loc.isValid()) {
        e.followsDropped = dropped;
        e.nvccAccepts = true;
      }
    }
    // The #include lines of headers Clang entered although they were not found as written.
    std::set<std::pair<clang::FileID, unsigned>> enteredAnyway;
    for (const auto& e : errs_.errors)
      if (e.includedAnyway && e.loc.isValid()) enteredAnyway.insert({sm.getFileID(e.loc), sm.getExpansionLineNumber(e.loc)});
    auto insideEnteredAnyway = [&](clang::SourceLocation loc) {
      for (clang::SourceLocation inc = sm.getIncludeLoc(sm.getFileID(loc)); inc.isValid();
           inc = sm.getIncludeLoc(sm.getFileID(inc)))
        if (enteredAnyway.count({sm.getFileID(inc), sm.getExpansionLineNumber(inc)})) return true;
      return false;
    };
    std::map<unsigned, std::vector<std::string>> followers;  // a rejected template template argument's line -> later errors' lines
    for (size_t ei = 0; ei < errs_.errors.size(); ++ei) {
      const auto& e = errs_.errors[ei];
      // nvcc stops at a header it does not find; what Clang found inside it anyway is no error of nvcc's.
      if (!enteredAnyway.empty() && e.loc.isValid() && insideEnteredAnyway(e.loc)) {
        --out_.rawErrors;
        continue;
      }
      // nvcc's warning #20054-D (compile_errors.h): said as a warning, not counted as an error.
      const bool nvccWarning = e.message == "initialization is not supported for __shared__ variables" &&
                               e.loc.isValid() && nvccOnlyWarnsAtSharedInit(rc.ast(), e.loc);
      if (nvccWarning || e.nvccAccepts) --out_.rawErrors;
      // What follows a template template argument Clang rejected and nvcc accepts: counted in
      // that finding, not a finding of its own each (RawError::followsDropped).
      if (e.followsDropped) {
        if (e.loc.isValid())
          followers[e.followsDropped].push_back(
              sm.getFileID(e.loc) == sm.getMainFileID()
                  ? std::to_string(sm.getExpansionLineNumber(e.loc))
                  : fmt::format("{}:{}", llvm::sys::path::filename(sm.getFilename(e.loc)).str(), sm.getExpansionLineNumber(e.loc)));
        continue;
      }
      else out_.errorTexts.push_back(e.where + "error: " + e.message);
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
        if (inc.isInvalid() && !sm.isInSystemHeader(at)) inc = includedByLintedFile(sm, files, fid);
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
      const std::string accepted =
          !e.nvccAccepts                ? std::string()
          : e.missingTemplateKeyword    ? std::string(kNvccAcceptsMissingTemplateKeyword)
          : e.unmatchedDefinition       ? std::string(kNvccAcceptsUnmatchedDefinition)
          : e.targetSpecialization      ? std::string(kNvccAcceptsTargetSpecialization)
          : e.archDeviceMacro           ? std::string(kNvccAcceptsArchDeviceMacro)
          : e.nonLiteralInConstexpr     ? std::string(kNvccAcceptsNonLiteralInConstexpr)
          : e.thisInConstantExpression  ? std::string(kNvccAcceptsThisInConstantExpression)
          : e.templateTemplateArgument  ? std::string(kNvccAcceptsTemplateTemplateArgument)
          : e.staticThroughReference    ? e.staticThroughReferenceNote
          : e.followsDropped            ? fmt::format("Clang's error '{}' comes after its rejection of the template template "
                                                      "argument at line {}, which nvcc accepts: it may follow from what "
                                                      "Clang dropped there, so it is not counted as an error",
                                                      e.message, e.followsDropped)
                                        : std::string(kNvccAcceptsOwnParameters);
      ce.message = origin + (nvccWarning ? std::string(kNvccWarnsSharedInit) : e.nvccAccepts ? accepted : e.message + compileErrorHint(e.message));
      ce.nvccWarning = nvccWarning;
      ce.nvccAccepts = e.nvccAccepts;
      ce.templateKeyword = e.nvccAccepts && e.missingTemplateKeyword;
      ce.unmatchedDefinition = e.nvccAccepts && e.unmatchedDefinition;
      ce.targetSpecialization = e.nvccAccepts && e.targetSpecialization;
      ce.archDeviceMacro = e.nvccAccepts && e.archDeviceMacro;
      ce.inTarget = direct;
      ce.deviceCode = direct && device[ei];
      if (direct && !nvccWarning && !e.nvccAccepts) ++out_.errorsInTarget;
      out_.errors.push_back(std::move(ce));
      // A constant Clang could not evaluate where nvcc can (a static member through a reference):
      // the function keeps its body, and the model reads the constant as a value it does not know.
      errorLocs_.push_back(direct && !e.staticThroughReference ? e.loc : clang::SourceLocation());
    }
    for (size_t i = 0; i < out_.errors.size(); ++i) {
      CompileError& ce = out_.errors[i];
      auto it = followers.find(ce.span.begin.line);
      if (!ce.nvccAccepts || it == followers.end() || ce.message.find(kNvccAcceptsTemplateTemplateArgument) == std::string::npos)
        continue;
      std::vector<std::string> at;
      for (const std::string& l : it->second)
        if (std::find(at.begin(), at.end(), l) == at.end()) at.push_back(l);
      std::string lines;
      for (size_t k = 0; k < at.size() && k < 6; ++k) lines += (k ? ", " : "") + at[k];
      if (at.size() > 6) lines += ", ...";
      ce.message += fmt::format("; Clang's {} error{} after it (line{} {}) may follow from what it dropped, so {} not "
                                "counted as errors",
                                it->second.size(), it->second.size() == 1 ? "" : "s", at.size() == 1 ? "" : "s", lines,
                                it->second.size() == 1 ? "it is" : "they are");
      followers.erase(it);
    }
    // APIs nvcc 13 rejects that the parse still declares (texture references, __shfl_down): a
    // compile-error finding each, not a Clang error (the kernels using them are analysed).
    for (const auto& u : findRemovedApiUses(rc.ast(), files, std::string(kBundledIncludeDir), errs_.includes)) {
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

}  // namespace

std::unique_ptr<clang::ASTConsumer> makeLintConsumer(ParseResult& out, const AnalysisOptions& opts,
                                                     const std::vector<std::unique_ptr<Rule>>& rules,
                                                     const LintedFiles::Settings& files, Clock::time_point start,
                                                     ErrorCollector& errs) {
  return std::make_unique<LintConsumer>(out, opts, rules, files, start, errs);
}

}  // namespace gpuopt::engine
