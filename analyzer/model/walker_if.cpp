// The kernel model's walk of an if statement: which threads take each path, conditions walked with
// the lanes unknown when deciding them would hide code, and the threads that may have left after an
// undecided return, break or continue (see builder.h; the other statements are in walker.cpp).
#include <clang/Basic/SourceManager.h>
#include <fmt/format.h>

#include "analyzer/model/builder.h"
#include "analyzer/model/coverage.h"

#include <algorithm>
#include <functional>

namespace gpuopt::model_detail {

namespace {
// Whether an expression reads memory (a subscript or a dereference).
bool readsMemory(const clang::Stmt* s) {
  if (!s) return false;
  if (llvm::isa<clang::ArraySubscriptExpr>(s)) return true;
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(s); u && u->getOpcode() == clang::UO_Deref) return true;
  if (auto* m = llvm::dyn_cast<clang::MemberExpr>(s); m && m->isArrow()) return true;
  for (const clang::Stmt* c : s->children())
    if (readsMemory(c)) return true;
  return false;
}

// A check only a failure passes: `t[i] != i`, `!(a[i] == b[i])`, `fabsf(out[i] - ref[i]) > tol`: a
// value read from memory compared with an expected value (not a constant: `key != EMPTY` filters),
// possibly one conjunct of `&&`. Code under it is verification, not the kernel's work.
bool failureTest(const clang::Expr* e, clang::ASTContext& ctx) {
  e = e->IgnoreParenImpCasts();
  auto constant = [&](const clang::Expr* x) {
    clang::Expr::EvalResult r;
    return !x->isValueDependent() && x->EvaluateAsRValue(r, ctx);
  };
  auto check = [&](const clang::Expr* a, const clang::Expr* b) {
    return !constant(a) && !constant(b) && (readsMemory(a) || readsMemory(b));
  };
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u && u->getOpcode() == clang::UO_LNot)
    if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(u->getSubExpr()->IgnoreParenImpCasts()); b && b->getOpcode() == clang::BO_EQ)
      return check(b->getLHS(), b->getRHS());
  auto* b = llvm::dyn_cast<clang::BinaryOperator>(e);
  if (!b) return false;
  if (b->getOpcode() == clang::BO_LAnd) return failureTest(b->getLHS(), ctx) || failureTest(b->getRHS(), ctx);
  if (b->getOpcode() == clang::BO_LOr) return failureTest(b->getLHS(), ctx) && failureTest(b->getRHS(), ctx);
  if (b->getOpcode() == clang::BO_NE) return check(b->getLHS(), b->getRHS());
  // |x - y| > tolerance
  const clang::Expr* big = b->getOpcode() == clang::BO_GT || b->getOpcode() == clang::BO_GE ? b->getLHS()
                           : b->getOpcode() == clang::BO_LT || b->getOpcode() == clang::BO_LE ? b->getRHS() : nullptr;
  if (auto* call = big ? llvm::dyn_cast<clang::CallExpr>(big->IgnoreParenImpCasts()) : nullptr; call && call->getNumArgs() == 1)
    if (const auto* fd = call->getDirectCallee(); fd && fd->getIdentifier() && fd->getName().contains("abs"))
      if (auto* d = llvm::dyn_cast<clang::BinaryOperator>(call->getArg(0)->IgnoreParenImpCasts()); d && d->getOpcode() == clang::BO_Sub)
        return check(d->getLHS(), d->getRHS());
  return false;
}
}  // namespace

void Builder::walkIf(const clang::IfStmt* is) {
  if (is->getInit()) walk(is->getInit());
  if (is->getConditionVariableDeclStmt()) walk(is->getConditionVariableDeclStmt());
  if (is->isConsteval()) return;
  Value c = eval(is->getCond());
  if (c.opaque) c.known = false;  // a stand-in for a value nothing is known about: not decided
  Mask saved = active_;
  // Every thread of the block decides it alike (blockIdx, a parameter, a uniform load), even when
  // it is walked as undecided below.
  const bool uniformCond = uniformish(c);
  // A condition over stand-in values that every thread decides alike must not hide code: when its
  // path leaves (`if (i < lo || i > hi) return;` with lo and hi stand-ins: every thread returned and
  // nothing after was walked) or it has an else that no thread would take, it is walked with the
  // lanes unknown, as a condition on data is. (Without an else, a then no thread takes is walked
  // with every thread below: `approx`.)
  if (c.known && c.symbolic) {
    bool anyT = false, anyF = false;
    for (unsigned t = 0; t < N_; ++t)
      if (saved[t]) (c.v[t] != 0 ? anyT : anyF) = true;
    if (anyT != anyF) {
      const clang::Stmt* taken = anyT ? is->getThen() : is->getElse();
      const clang::Stmt* other = anyT ? is->getElse() : is->getThen();
      if ((taken && hasJump(taken)) || (other && is->getElse())) c.known = false;
    }
  }
  recordBranch(is, is->getCond(), c, isBranchWork(is->getThen(), ctx_), is->getElse() && isBranchWork(is->getElse(), ctx_), false);
  Mask tm = saved, fm = saved;
  if (c.known)
    for (unsigned t = 0; t < N_; ++t) {
      tm[t] = saved[t] && c.v[t] != 0;
      fm[t] = saved[t] && c.v[t] == 0;
    }
  // An unknown condition some threads are known to fail (a bound on the unknown side): they only
  // take the else path.
  if (!c.known && !c.falseFor.empty())
    for (unsigned t = 0; t < N_; ++t) tm[t] = tm[t] && !c.falseFor[t];
  // A guard over representative symbol values (`if (t < n)` with a 2-D grid index) that every
  // thread fails must not hide the body: without an else, walk it with the threads that got here.
  bool approx = c.known && c.symbolic && !is->getElse() && std::find(tm.begin(), tm.end(), 1) == tm.end();
  if (approx) tm = saved;
  approxMasks_ += approx;
  // Unknown condition: both paths are walked with every thread (over-approximation); the
  // accesses there remember the condition's line.
  const unsigned line = ctx_.getSourceManager().getExpansionLineNumber(is->getCond()->getBeginLoc());
  if (!c.known) guards_.push_back(line);
  const bool dataGuard = !c.known && !uniformCond;
  dataGuards_ += dataGuard;
  const bool selects = !c.known && selections_.count(strip(is->getCond()));
  const bool selectsInWarp = !c.known && !selects && warpSelections_.count(strip(is->getCond()));
  // A condition on blockIdx that every thread of the block decides alike: some blocks only.
  bool perBlock = false;
  if (c.known && c.block) {
    perBlock = true;
    int first = -1;
    for (unsigned t = 0; t < N_ && perBlock; ++t)
      if (saved[t]) {
        int v = c.v[t] != 0;
        if (first < 0) first = v;
        else if (v != first) perBlock = false;
      }
  }
  if (perBlock) ++blockGuards_;
  bool variant = blockVariant(c);
  enterBlockVariant(variant, is);
  // A branch on the block alone that the representative block does not take (`if (blockIdx.y ==
  // gridDim.y - 1) nLast = ny - 2 - 14 * blockIdx.y + 1;`): its body is walked so that nothing in
  // it is hidden, but the representative block's variables keep the values it has after skipping
  // it (else the last block's bound leaks into the code after: HeCBench stencil3d).
  std::optional<std::vector<std::map<const clang::VarDecl*, Value>>> keptVars;
  if (approx && c.block && uniformByForm(is->getCond())) {
    keptVars.emplace();
    for (const auto& f : frames_) keptVars->push_back(f.vars);
  }
  // Undecided: each path starts from the values before the if, and a variable the two paths leave
  // different holds one or the other afterwards (not the last path's value).
  std::vector<std::pair<const clang::VarDecl*, Value*>> merged;
  std::vector<Value> before, afterThenVals;
  if (!c.known) {
    auto it = branchVars_.find(is);
    if (it == branchVars_.end()) {
      std::set<const clang::VarDecl*> vs = assignedVars(is->getThen());
      if (is->getElse())
        for (const auto* v : assignedVars(is->getElse())) vs.insert(v);
      it = branchVars_.emplace(is, std::vector<const clang::VarDecl*>(vs.begin(), vs.end())).first;
    }
    for (const clang::VarDecl* vd : it->second)
      for (auto f = frames_.rbegin(); f != frames_.rend(); ++f)
        if (auto v = f->vars.find(vd); v != f->vars.end()) {
          merged.push_back({vd, &v->second});
          before.push_back(v->second);
          break;
        }
  }
  // A path may replace the variable maps (an if inside it that keeps the representative block's
  // values restores a copy): `merged` then points into freed maps; find the variables again.
  auto relocate = [&] {
    for (auto& [vd, value] : merged)
      for (auto f = frames_.rbegin(); f != frames_.rend(); ++f)
        if (auto v = f->vars.find(vd); v != f->vars.end()) {
          value = &v->second;
          break;
        }
  };
  // What leaving looks like before the paths (to tell a path that left from one that did not).
  Mask aliveBefore = alive_, retBefore = frames_.back().returned;
  Mask brokenBefore, contBefore;
  if (!c.known && !loops_.empty()) brokenBefore = loops_.back().broken, contBefore = loops_.back().continued;
  active_ = tm;
  if (selects) selectGuards_.push_back(guards_.back());
  if (selectsInWarp) warpSelectGuards_.push_back(guards_.back());
  const bool failure = !c.known && failureTest(is->getCond(), ctx_);
  failureGuards_ += failure;
  // Both arms walked, but every thread of the block takes the same one: their accesses exclude each
  // other (races.cpp).
  const bool uniformArms = !c.known && uniformCond && is->getElse();
  const unsigned armWalk = uniformArms ? ++uniformIfWalks_ : 0;
  if (uniformArms) uniformArms_.push_back({armWalk, 1});
  walk(is->getThen());
  if (uniformArms) uniformArms_.pop_back();
  failureGuards_ -= failure;
  if (selects) selectGuards_.pop_back();
  if (selectsInWarp) warpSelectGuards_.pop_back();
  if (keptVars && keptVars->size() == frames_.size())
    for (size_t i = 0; i < frames_.size(); ++i) frames_[i].vars = std::move((*keptVars)[i]);
  relocate();
  Mask afterThen = active_;
  if (!merged.empty()) {
    for (size_t i = 0; i < merged.size(); ++i) {
      afterThenVals.push_back(*merged[i].second);
      *merged[i].second = before[i];
    }
  }
  active_ = fm;
  if (uniformArms) uniformArms_.push_back({armWalk, 2});
  if (is->getElse()) walk(is->getElse());
  if (uniformArms) uniformArms_.pop_back();
  relocate();
  Mask afterElse = active_;
  leaveBlockVariant(variant);
  approxMasks_ -= approx;
  if (perBlock) --blockGuards_;
  if (!c.known) guards_.pop_back();
  dataGuards_ -= dataGuard;
  for (size_t i = 0; i < merged.size(); ++i) {
    Value& cur = *merged[i].second;
    const Value& other = afterThenVals[i];
    bool same = cur.known == other.known && cur.isPtr == other.isPtr && cur.base == other.base;
    for (unsigned t = 0; t < N_ && same; ++t)
      if (saved[t]) same = laneNumber(cur, t) == laneNumber(other, t) && (!cur.known || cur.v[t] == other.v[t]);
    if (same) continue;
    // One or the other by a condition the whole block decides alike, each the same for every
    // thread (`if (blockIdx.x == 0) len = prefix[0]; else len = prefix[blockIdx.x] - prefix[...]`):
    // still one value for the block, which the walk stands in for by one of them, as for a
    // parameter (symbolic); it may differ between blocks, and how is not known (no block steps).
    auto uniformOver = [&](const Value& x) {
      if (!x.known || x.data || x.opaque) return false;
      int first = -1;
      for (unsigned t = 0; t < N_; ++t)
        if (saved[t]) {
          if (first < 0) first = static_cast<int>(t);
          else if (x.v[t] != x.v[static_cast<unsigned>(first)]) return false;
        }
      return true;
    };
    // The walk stands in for the block's choice by the value it holds (as for a parameter).
    auto standIn = [&](Value& x) {
      x.symbolic = true;
      x.param = x.param || other.param;
      if (!x.paramSrc) x.paramSrc = other.paramSrc;
      x.block = x.block || other.block || c.block;
      x.alt = {};
      x.tag.clear();
      x.values = 0, x.hasHi = false, x.stepBound = 0;
    };
    if (uniformCond && uniformOver(cur) && uniformOver(other) && cur.isPtr == other.isPtr &&
        (!cur.isPtr || cur.base == other.base)) {
      standIn(cur);
      cur.same = true;
      continue;
    }
    // One or the other by a condition the whole block decides alike, each known per thread
    // (`if (tiled) idx = tileIndex(...); else idx = row * n + i;` on a parameter): the threads of a
    // warp all hold the one their block chose. When the two move alike from thread to thread they
    // differ by one value for the block, which the walk stands in for, as for a parameter;
    // otherwise the value is not known, but it does not come from memory either (no gather).
    auto perThread = [](const Value& x) { return x.known && !x.data && !x.opaque; };
    if (uniformCond && perThread(cur) && perThread(other) && cur.isPtr == other.isPtr &&
        (!cur.isPtr || cur.base == other.base)) {
      bool sameSteps = true;
      int first = -1;
      for (unsigned t = 0; t < N_ && sameSteps; ++t)
        if (saved[t]) {
          if (first < 0) first = static_cast<int>(t);
          else sameSteps = cur.v[t] - cur.v[static_cast<unsigned>(first)] == other.v[t] - other.v[static_cast<unsigned>(first)];
        }
      if (sameSteps) {
        standIn(cur);
        continue;
      }
      if (!cur.isPtr) {
        Value r = unknown();
        r.block = cur.block || other.block || c.block;
        cur = std::move(r);
        continue;
      }
    }
    // One or the other by a condition the whole warp decides alike, neither loaded from memory
    // though not known (`if (x0 == x1) x1 = x0 + 1;` over floorf/ceilf of a uniform float: darknet's
    // weight rotation, ninth stop check): still one value for every thread, not data from memory.
    if (uniformCond && !cur.isPtr && !other.isPtr && !cur.data && !other.data && !cur.loaded && !other.loaded) {
      Value r = unknown();
      r.same = uniformish(cur) && uniformish(other);
      r.block = cur.block || other.block || c.block;
      r.param = cur.param || other.param;
      cur = std::move(r);
      continue;
    }
    // One or the other, by a condition the model cannot decide: not known. A pointer keeps its base
    // when both paths agree on it (the offset is what is not known).
    Value r = unknown();
    r.data = true;
    r.block = cur.block || other.block;
    if (cur.isPtr && other.isPtr && cur.base == other.base) {
      r.isPtr = true, r.base = cur.base, r.baseName = cur.baseName, r.space = cur.space, r.pointee = cur.pointee;
      r.ptrVolatile = cur.ptrVolatile || other.ptrVolatile;
    } else if (cur.isPtr || other.isPtr) {
      continue;  // different arrays: the last path's (as before)
    } else {
      // A loaded key or a constant (the sentinel of `int col = -1; if (e < end) col = cols[e];`).
      auto keyOrConstant = [&](const Value& key, const Value& k) {
        if (!key.loaded || key.tag.size() != N_ || !k.known || k.symbolic || k.data || !uniformOver(k)) return false;
        r.keyTag = key.tag;
        for (unsigned t = 0; t < N_; ++t)
          if (saved[t]) {
            r.keyOr = k.v[t];
            break;
          }
        return true;
      };
      if (!keyOrConstant(cur, other)) keyOrConstant(other, cur);
    }
    cur = std::move(r);
  }
  for (unsigned t = 0; t < N_; ++t) active_[t] = (afterThen[t] || afterElse[t]) && saved[t];
  // Threads a condition over stand-in values sent out of the loop body (`if (w < 0 || w >= n)
  // continue;` with w from a uniform load): the statements after it were skipped on a guess.
  if (c.known && c.symbolic && !loops_.empty())
    for (unsigned t = 0; t < N_ && !loops_.back().symbolicSkip; ++t)
      if (saved[t] && !active_[t] && (loops_.back().continued[t] || loops_.back().broken[t]))
        loops_.back().symbolicSkip = true;
  if (!c.known) {
    // Both paths ran for every thread (but those known to fail). A thread both paths took out
    // (a return on each) has left; one that only one path took out may have: it goes on, and
    // the code after is guarded by this condition (its accesses are possible, not certain).
    bool maybe = false, byReturn = false, byJump = false;
    Frame& f = frames_.back();
    for (unsigned t = 0; t < N_; ++t) {
      if (!saved[t]) continue;
      const bool leftThen = tm[t] && !afterThen[t], leftElse = !afterElse[t];
      if (leftThen && leftElse) {
        active_[t] = 0;
        continue;
      }
      if (!leftThen && !leftElse) {
        active_[t] = 1;
        continue;
      }
      maybe = true;
      active_[t] = 1;
      if (alive_[t] != aliveBefore[t] || (!f.returned.empty() && f.returned[t] != retBefore[t])) {
        byReturn = true;
        alive_[t] = aliveBefore[t];
        if (!f.returned.empty()) {
          if (f.maybeReturned.empty()) f.maybeReturned.assign(N_, 0);
          f.maybeReturned[t] = 1;
          f.returned[t] = retBefore[t];
        }
      }
      if (!loops_.empty() && !brokenBefore.empty()) {
        auto& l = loops_.back();
        if (l.broken[t] != brokenBefore[t] || l.continued[t] != contBefore[t]) byJump = true;
        l.broken[t] = brokenBefore[t];
        l.continued[t] = contBefore[t];
      }
    }
    if (maybe) {
      if (byReturn) residual_.push_back({line, loops_.size(), frames_.size(), false});
      if (byJump || !byReturn) residual_.push_back({line, loops_.size(), frames_.size(), true});
    }
  }
}

}  // namespace gpuopt::model_detail
