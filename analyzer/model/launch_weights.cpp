// The cost of a kernel within its program (issue 28): each kernel launched from the translation
// unit's main is weighed by how often the host code launches it, on how many blocks and threads, and
// how much each thread loops; a finding's static cost within its kernel (rules/cost.h) is scaled by
// the kernel's share of the heaviest comparison the code supports. A verification or set-up kernel
// launched once beside a kernel launched 100 times in the program's main loop is a small share.
// Nothing is made up: a factor the code does not give (a loop count, a grid sized at run time, a
// loop's trips in the kernel) leaves the kernel unbounded (no discount), and on the other side of the
// comparison counts at its lower bound (once, one block); two unknown grids count as equal.
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "analyzer/model/launch_detail.h"
#include "analyzer/model/launch_eval.h"
#include "analyzer/model/launch_index.h"

namespace gpuopt {

using namespace launch_detail;

namespace {
bool isLoop(const clang::Stmt* s) {
  return llvm::isa<clang::ForStmt>(s) || llvm::isa<clang::WhileStmt>(s) || llvm::isa<clang::DoStmt>(s) ||
         llvm::isa<clang::CXXForRangeStmt>(s);
}

// The loop variable of `for (int i = A; i < B; ++i)` (or `i = A`, `i <= B`, `i != B`, `i > B` with
// a decrement) and its bounds as expressions.
struct Counted {
  const clang::Expr *from = nullptr, *to = nullptr;
  int extra = 0;  // `<=`: one more
};
const clang::VarDecl* declOf(const clang::Expr* e) {
  auto* d = llvm::dyn_cast_or_null<clang::DeclRefExpr>(e ? e->IgnoreParenImpCasts() : nullptr);
  return d ? llvm::dyn_cast<clang::VarDecl>(d->getDecl()) : nullptr;
}
std::optional<Counted> counted(const clang::ForStmt* f) {
  auto* cond = llvm::dyn_cast_or_null<clang::BinaryOperator>(f->getCond() ? f->getCond()->IgnoreParenImpCasts() : nullptr);
  if (!cond) return std::nullopt;
  const clang::VarDecl* v = declOf(cond->getLHS());
  if (!v) return std::nullopt;
  Counted c;
  if (auto* ds = llvm::dyn_cast_or_null<clang::DeclStmt>(f->getInit()); ds && ds->isSingleDecl() && ds->getSingleDecl() == v)
    c.from = v->getInit();
  else if (auto* b = llvm::dyn_cast_or_null<clang::BinaryOperator>(f->getInit()); b && b->getOpcode() == clang::BO_Assign && declOf(b->getLHS()) == v)
    c.from = b->getRHS();
  if (!c.from) return std::nullopt;
  switch (cond->getOpcode()) {
    case clang::BO_LT:
    case clang::BO_NE: c.to = cond->getRHS(); break;
    case clang::BO_LE: c.to = cond->getRHS(), c.extra = 1; break;
    case clang::BO_GT: c.to = cond->getRHS(), c.extra = -1; break;  // counting down: from - to
    case clang::BO_GE: c.to = cond->getRHS(), c.extra = -2; break;
    default: return std::nullopt;
  }
  return c;
}
}  // namespace

void LaunchIndex::weighKernels(clang::ASTContext& ctx, HostValues& hv) {
  if (runs_.empty()) return;
  auto& sm = ctx.getSourceManager();
  auto lineOf = [&](const clang::Stmt* s) { return sm.getExpansionLineNumber(s->getBeginLoc()); };

  // Iterations of a loop: a counted `for` whose bounds the host values give, else the stand-in. A
  // loop whose condition is false from the start (`do { } while (0)`) runs once.
  auto trips = [&](const clang::Stmt* loop, const clang::FunctionDecl* fn, bool* known) -> double {
    *known = false;
    if (auto* f = llvm::dyn_cast<clang::ForStmt>(loop))
      if (auto c = counted(f)) {
        HostValues::Env env{{fn, nullptr}};
        auto a = hv.integer(c->from, env), b = hv.integer(c->to, env);
        hv.clearMissing();
        if (a && b) {
          int64_t n = c->extra >= 0 ? *b - *a + c->extra : *a - *b + (c->extra == -2 ? 1 : 0);
          *known = true;
          return n > 0 ? static_cast<double>(n) : 0.0;
        }
      }
    const clang::Expr* cond = nullptr;
    if (auto* d = llvm::dyn_cast<clang::DoStmt>(loop)) cond = d->getCond();
    else if (auto* w = llvm::dyn_cast<clang::WhileStmt>(loop)) cond = w->getCond();
    bool value = true;
    if (cond && !cond->isValueDependent() && cond->EvaluateAsBooleanCondition(value, ctx) && !value) {
      *known = true;
      return llvm::isa<clang::DoStmt>(loop) ? 1.0 : 0.0;
    }
    return 1;  // not known: at least once (a lower bound; `known` says it is not the count)
  };
  // The product of the trips of the host loops around `s` in its function; `first` the innermost.
  struct Around {
    double times = 1;
    bool known = true;
    const clang::Stmt* loop = nullptr;  // the innermost loop
  };
  auto around = [&](const clang::Stmt* s) {
    Around r;
    const clang::FunctionDecl* fn = hv.enclosingFunction(s);
    const clang::Stmt* child = s;
    clang::DynTypedNodeList parents = ctx.getParents(*s);
    for (int guard = 0; !parents.empty() && guard < 512; ++guard) {
      const clang::Stmt* p = parents[0].get<clang::Stmt>();
      if (!p) {
        const clang::Decl* d = parents[0].get<clang::Decl>();
        if (!d || llvm::isa<clang::FunctionDecl>(d)) break;
        parents = ctx.getParents(*d);
        continue;
      }
      if (llvm::isa<clang::LambdaExpr>(p)) break;
      auto* f = llvm::dyn_cast<clang::ForStmt>(p);
      if (isLoop(p) && !(f && f->getInit() == child)) {
        bool known = false;
        r.times *= trips(p, fn, &known);
        r.known = r.known && known;
        if (!r.loop) r.loop = p;
      }
      child = p;
      parents = ctx.getParents(*p);
    }
    return r;
  };
  // How often a host function runs: the sum over its call sites of the loops around each call
  // times how often the caller runs, four callers deep. Only `main` is known to run once: a
  // function nothing here calls otherwise (an API entry point, a callback) runs as often as
  // another translation unit says, so `inProgram` is cleared and the kernel is not weighed.
  std::function<double(const clang::FunctionDecl*, int, std::set<const clang::FunctionDecl*>&, bool&, bool&)> runsOf =
      [&](const clang::FunctionDecl* fn, int depth, std::set<const clang::FunctionDecl*>& seen, bool& known,
          bool& inProgram) -> double {
    if (!fn || depth > 4 || !seen.insert(fn->getCanonicalDecl()).second) {
      inProgram = false;
      return 1;
    }
    const auto& calls = hv.callsOf(fn);
    if (calls.empty()) {
      inProgram = inProgram && fn->isMain();
      return 1;
    }
    double n = 0;
    for (const clang::CallExpr* c : calls) {
      Around a = around(c);
      known = known && a.known;
      n += a.times * runsOf(hv.enclosingFunction(c), depth + 1, seen, known, inProgram);
    }
    seen.erase(fn->getCanonicalDecl());
    return std::min(n, 1e12);
  };
  // A kernel's loop work per thread: the largest product of the trips of its nested loops (and of
  // the device functions it calls, two deep).
  // `allKnown` is cleared by a loop whose count is not a constant.
  bool allKnown = true;
  std::function<double(const clang::Stmt*, int)> loopWork = [&](const clang::Stmt* s, int depth) -> double {
    if (!s) return 1;
    double most = 1;
    for (const clang::Stmt* c : s->children()) {
      if (!c) continue;
      most = std::max(most, loopWork(c, depth));
    }
    if (auto* call = llvm::dyn_cast<clang::CallExpr>(s); call && depth < 2) {
      if (const clang::FunctionDecl* fd = call->getDirectCallee(); fd && fd->hasBody() && fd->hasAttr<clang::CUDADeviceAttr>())
        most = std::max(most, loopWork(fd->getBody(), depth + 1));
      else if (!fd)
        allKnown = false;  // through a pointer: not known
    }
    if (isLoop(s)) {
      bool known = false;
      double t = 1;  // not a constant: at least once
      if (auto* f = llvm::dyn_cast<clang::ForStmt>(s))
        if (auto c = counted(f)) {
          clang::Expr::EvalResult a, b;
          if (!c->from->isValueDependent() && !c->to->isValueDependent() && c->from->EvaluateAsInt(a, ctx) &&
              c->to->EvaluateAsInt(b, ctx)) {
            int64_t n = c->extra >= 0 ? b.Val.getInt().getExtValue() - a.Val.getInt().getExtValue() + c->extra
                                      : a.Val.getInt().getExtValue() - b.Val.getInt().getExtValue() + (c->extra == -2 ? 1 : 0);
            t = n > 0 ? static_cast<double>(n) : 1.0;
            known = true;
          }
        }
      allKnown = allKnown && known;
      most *= t;
    }
    return std::min(most, 1e9);
  };

  // Per kernel, each factor as a lower bound (a count known only at run time counts 1) and whether
  // it is known.
  struct Weight {
    double launches = 0;  // sum over the launches of the host loops' trips
    bool launchesKnown = true, inProgram = true;
    unsigned blocks = 0, threads = 0;  // the largest over the launches; 0: some launch's is not known
    bool blocksKnown = true, threadsKnown = true;
    double work = 1;  // loop trips per thread
    bool workKnown = true;
    unsigned line = 0;                   // the first launch's line (or its outermost wrapper call's)
    const clang::Stmt* loop = nullptr;   // the innermost host loop around a launch
  };
  std::map<const clang::FunctionDecl*, Weight> weights;
  for (const auto& [k, runs] : runs_) {
    Weight w;
    const clang::FunctionDecl* def = k->getDefinition() ? k->getDefinition() : k;
    allKnown = def->hasBody();
    w.work = def->hasBody() ? loopWork(def->getBody(), 0) : 1;
    w.workKnown = allKnown;
    for (const LaunchRun& r : runs) {
      Around a = around(r.call);
      double times = a.times;
      bool known = a.known;
      const clang::Stmt* loop = a.loop;
      const clang::Expr* outer = r.call;
      for (const clang::Expr* c : r.via) {
        Around b = around(c);
        times *= b.times;
        known = known && b.known;
        if (!loop) loop = b.loop;
        outer = c;
      }
      std::set<const clang::FunctionDecl*> seen;
      times *= runsOf(hv.enclosingFunction(outer), 0, seen, known, w.inProgram);
      w.launches += times;
      w.launchesKnown = w.launchesKnown && known;
      w.blocksKnown = w.blocksKnown && r.blocks;
      w.threadsKnown = w.threadsKnown && r.threads;
      w.blocks = std::max(w.blocks, r.blocks);
      w.threads = std::max(w.threads, r.threads);
      if (!w.line) w.line = lineOf(outer), w.loop = loop;
      if (!w.loop) w.loop = loop;
    }
    if (!w.blocksKnown) w.blocks = 0;
    if (!w.threadsKnown) w.threads = 0;
    weights[k] = w;
  }
  // Only kernels whose every launch is reached from main are weighed against one another.
  for (auto it = weights.begin(); it != weights.end();) it = it->second.inProgram ? std::next(it) : weights.erase(it);
  if (weights.empty()) return;
  // In source order (the maps are keyed by address), for a deterministic choice among equals.
  std::vector<const clang::FunctionDecl*> order;
  for (const auto& [k, w] : weights) order.push_back(k);
  std::stable_sort(order.begin(), order.end(), [&](const clang::FunctionDecl* a, const clang::FunctionDecl* b) {
    return sm.isBeforeInTranslationUnit(sm.getExpansionLoc(a->getLocation()), sm.getExpansionLoc(b->getLocation()));
  });
  // How `k` compares with `j`: at most this share of it, from the factors the code gives. What `k`
  // does not give (a loop count, a grid, its loops' trips) leaves no bound, unless `j` lacks it too
  // (two grids sized at run time count as equal); what `j` does not give counts at its lower bound.
  auto ratio = [&](const Weight& k, const Weight& j) -> std::optional<double> {
    if (!k.launchesKnown || j.launches <= 0) return std::nullopt;
    double r = k.launches / j.launches;
    auto factor = [&](bool kKnown, double kv, bool jKnown, double jv) -> std::optional<double> {
      if (kKnown && jKnown) return kv / std::max(jv, 1.0);
      if (!kKnown && !jKnown) return 1.0;
      if (kKnown) return kv;  // j's at least 1
      return std::nullopt;
    };
    for (auto f : {factor(k.blocksKnown, k.blocks, j.blocksKnown, j.blocks),
                   factor(k.threadsKnown, k.threads, j.threadsKnown, j.threads),
                   factor(k.workKnown, k.work, j.workKnown, j.work)}) {
      if (!f) return std::nullopt;
      r *= *f;
    }
    return r;
  };
  auto describe = [&](const clang::FunctionDecl* k, const Weight& w) {
    std::string name = k->getNameAsString();
    std::string how;
    if (w.launches <= 1.0 && w.launchesKnown) how = "launched once";
    else if (w.loop) how = fmt::format("launched in the loop at line {}", lineOf(w.loop));
    else how = fmt::format("launched {:.0f} times", w.launches);
    if (w.launchesKnown && w.launches > 1 && w.loop) how += fmt::format(" ({:.0f} launches)", w.launches);
    else if (!w.launchesKnown) how += " (a loop count known only at run time)";
    std::string grid = w.blocks ? fmt::format("{} block{}", w.blocks, w.blocks == 1 ? "" : "s") : "a grid known only at run time";
    return fmt::format("'{}' is {} with {}", name, how, grid);
  };
  for (const clang::FunctionDecl* k : order) {
    const Weight& w = weights[k];
    double least = 1;
    const clang::FunctionDecl* against = nullptr;
    for (const clang::FunctionDecl* j : order) {
      if (j == k) continue;
      auto r = ratio(w, weights[j]);
      if (r && *r < least) least = *r, against = j;
    }
    if (against && least < 0.5) {
      ProgramShare s;
      s.share = std::clamp(least, 0.0, 1.0);
      s.why = fmt::format("{}; {}", describe(k, w), describe(against, weights[against]));
      shares_[k] = std::move(s);
      continue;
    }
    // A kernel whose whole work is known and smaller than one wave of the GPU (every SM full once:
    // 132 SMs x 2048 threads on an H100), one loop iteration per thread counted as one: it cannot
    // fill the GPU even once, and its time is mostly its launch's.
    double total = w.launches * w.blocks * w.threads * w.work;
    if (!w.launchesKnown || !w.blocksKnown || !w.threadsKnown || !w.workKnown || total >= kWave) continue;
    ProgramShare s;
    s.share = std::max(total, 1.0) / kWave;
    s.why = fmt::format("'{}' runs {:.0f} thread iterations in all ({:.0f} launch{} of {} block{}): less than one wave of "
                        "an H100, 132 SMs x 2048 threads", k->getNameAsString(), total, w.launches,
                        w.launches == 1 ? "" : "es", w.blocks, w.blocks == 1 ? "" : "s");
    shares_[k] = std::move(s);
  }
}

LaunchIndex::ProgramShare LaunchIndex::programShare(const clang::FunctionDecl* k) const {
  if (!k || onlyDead(k)) return {};
  auto it = shares_.find(k->getCanonicalDecl());
  return it == shares_.end() ? ProgramShare{} : it->second;
}

}  // namespace gpuopt
