#include "rules/dynamic_local_array.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "analyzer/rule/rule_context.h"
#include "rules/cost.h"
#include "rules/rule_util.h"

namespace gpuopt {

namespace {
// The addresses each run-time loop iteration takes at an expression: per expression and array,
// the first active lane's address of each of its records, by the iteration of the innermost
// run-time loop around it (built once per kernel: a fully unrolled tile loop has thousands of
// records). Per array: a helper's `*p = v` stores into one array inside a run-time loop and into
// another after it; those are two uses, each at fixed elements, not one index that moves.
using PerIteration = std::map<unsigned, std::vector<int64_t>>;
using ExprOfArray = std::pair<const clang::Expr*, const clang::ValueDecl*>;
std::map<ExprOfArray, PerIteration> addressesPerIteration(const KernelModel& m) {
  std::map<ExprOfArray, PerIteration> out;
  for (const auto& b : m.accesses()) {
    // Records outside every run-time loop (a residue step after the main loop, through the same
    // helper) are not an iteration of one: they say nothing of how the loop moves the index.
    if (b.space != MemSpace::Local || !b.known || !b.inRuntimeLoop) continue;
    for (unsigned t = 0; t < b.mask.size(); ++t)
      if (b.mask[t]) { out[{b.expr, b.base}][b.runtimeIter].push_back(b.addr[t]); break; }
  }
  return out;
}

// Whether the addresses an expression takes differ between the iterations of the innermost
// run-time loop around it (compared as the sequence of addresses in each iteration).
bool movesWithRuntimeLoop(const PerIteration& perIter) {
  if (perIter.size() < 2) {
    // One iteration walked: it moves with the run-time loop unless its addresses there repeat
    // an unrolled inner loop's (several addresses in the one iteration).
    return perIter.empty() || perIter.begin()->second.size() < 2;
  }
  for (const auto& [it, seq] : perIter)
    if (seq != perIter.begin()->second) return true;
  return false;
}

// Why an index is not a compile-time constant after unrolling, or "" when it is one.
// Whether an expression takes more than one address over all its records and lanes.
struct Distinct {
  int64_t first = 0;
  bool have = false, many = false;
  void add(int64_t v) {
    if (!have) first = v, have = true;
    else if (v != first) many = true;
  }
};

// Whether an index expression is a compile-time constant once the loops with constant trip
// counts around it are unrolled: constants, the counters of such loops (`for (int i = 0; i < 4;
// ++i)`), and arithmetic of those.
bool fixedIndex(const clang::Expr* e, clang::ASTContext& ctx) {
  e = e->IgnoreParenImpCasts();
  if (e->isValueDependent()) return false;
  clang::Expr::EvalResult r;
  if (e->EvaluateAsInt(r, ctx)) return true;
  if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e); b && !b->isAssignmentOp())
    return fixedIndex(b->getLHS(), ctx) && fixedIndex(b->getRHS(), ctx);
  auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e);
  auto* v = d ? llvm::dyn_cast<clang::VarDecl>(d->getDecl()) : nullptr;
  if (!v) return false;
  for (auto ps = ctx.getParents(*v); !ps.empty();) {
    const clang::Stmt* s = ps[0].get<clang::Stmt>();
    if (!s) return false;
    if (llvm::isa<clang::DeclStmt>(s)) {
      ps = ctx.getParents(*s);
      continue;
    }
    auto* fs = llvm::dyn_cast<clang::ForStmt>(s);
    if (!fs || !fs->getCond()) return false;
    auto* c = llvm::dyn_cast<clang::BinaryOperator>(fs->getCond()->IgnoreParenImpCasts());
    if (!c || !c->isComparisonOp()) return false;
    const clang::Expr* bound = c->getRHS()->IgnoreParenImpCasts();
    return !bound->isValueDependent() && bound->EvaluateAsInt(r, ctx);
  }
  return false;
}

// How many elements an access's run-time indices can reach: the product of the extents of the
// dimensions not indexed by a fixed index (`RA[s][i][k]` with i and k unrolled counters: 2 of its
// 32 elements, one register of two for nvcc); nothing when the access is not a subscript chain of
// a declared array.
std::optional<int64_t> reachableElements(const clang::Expr* e, clang::ASTContext& ctx) {
  int64_t r = 1;
  const clang::Expr* cur = e->IgnoreParenImpCasts();
  bool any = false;
  while (true) {
    if (auto* as = llvm::dyn_cast<clang::ArraySubscriptExpr>(cur)) {
      const clang::Expr* base = as->getBase()->IgnoreParenImpCasts();
      const auto* cat = ctx.getAsConstantArrayType(base->getType());
      const bool fixed = fixedIndex(as->getIdx(), ctx);
      // A helper's array parameter (`T c[2][4][8][8]` is a pointer to `T[4][8][8]`): its first
      // extent is not in the type, which matters only when that index is not fixed.
      if (!cat && !(fixed && base->getType()->isPointerType())) return std::nullopt;
      if (!fixed) r *= static_cast<int64_t>(cat->getSize().getZExtValue());
      cur = base, any = true;
      continue;
    }
    // A member of an element (`c[k % 2][k % 4].x[k % 8]`): the element's subscripts count too.
    if (auto* me = llvm::dyn_cast<clang::MemberExpr>(cur); me && !me->isArrow() && any) {
      cur = me->getBase()->IgnoreParenImpCasts();
      continue;
    }
    break;
  }
  if (!any || !llvm::isa<clang::DeclRefExpr, clang::MemberExpr>(cur)) return std::nullopt;
  return r;
}

std::string runTimeIndex(const Access& a, const Distinct& addressesOfExpr, const PerIteration& perIter) {
  if (a.data || (!a.known && !a.symbolic)) return "it depends on data";
  if (a.symbolic || a.launchArg) return "it depends on a kernel parameter or blockIdx";
  if (!a.known) return "it is not known";
  int64_t first = 0;
  bool have = false;
  for (unsigned t = 0; t < a.mask.size(); ++t) {
    if (!a.mask[t]) continue;
    if (have && a.addr[t] != first) return "it differs between threads (it depends on threadIdx)";
    first = a.addr[t], have = true;
  }
  // A loop with a run-time trip count is not unrolled: an index that moves with it is a variable.
  // One that takes the same addresses in every iteration of it moves only with loops inside it
  // that have a constant trip count (unrolled: constant indices).
  if (a.inRuntimeLoop && addressesOfExpr.many && movesWithRuntimeLoop(perIter))
    return "it moves with a loop whose trip count is known only at run time";
  return "";
}
}  // namespace

void DynamicLocalArrayRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  std::map<ExprOfArray, Distinct> addrs;
  for (const auto& a : m.accesses()) {
    if (a.space != MemSpace::Local || !a.known || a.symbolic || a.launchArg) continue;
    Distinct& d = addrs[{a.expr, a.base}];
    for (unsigned t = 0; t < a.mask.size() && !d.many; ++t)
      if (a.mask[t]) d.add(a.addr[t]);
  }
  struct Use {
    const Access* write = nullptr;  // the first write with a run-time index
    const Access* read = nullptr;   // the first read with one
    std::string why, readWhy;
    unsigned dynamicReads = 0, writes = 0;
    int64_t writeReach = 0, readReach = 0;  // the most elements a run-time index reaches (-1: all)
  };
  std::map<const clang::ValueDecl*, Use> uses;
  std::vector<const clang::ValueDecl*> order;
  const auto perIter = addressesPerIteration(m);
  static const PerIteration none;
  for (const auto& a : m.accesses()) {
    if (a.space != MemSpace::Local || !a.base) continue;
    auto pi = perIter.find({a.expr, a.base});
    std::string why = runTimeIndex(a, addrs[{a.expr, a.base}], pi == perIter.end() ? none : pi->second);
    auto [it, fresh] = uses.try_emplace(a.base);
    if (fresh) order.push_back(a.base);
    if (a.isWrite) ++it->second.writes;
    if (why.empty()) continue;
    const auto r = reachableElements(a.expr, m.ast());
    int64_t& reach = a.isWrite ? it->second.writeReach : it->second.readReach;
    if (!r) reach = -1;
    else if (reach >= 0) reach = std::max(reach, *r);
    if (a.isWrite && !it->second.write) it->second.write = &a, it->second.why = why;
    if (!a.isWrite && !it->second.read) it->second.read = &a, it->second.readWhy = why;
    if (!a.isWrite) ++it->second.dynamicReads;
  }
  // What nvcc 13 does on sm_90 (docs/measurements-data/device-rules-sass.txt): a 32-element array
  // written with a data index and a 64-element array read with one went to local memory (LDL/STL);
  // a 4-element array written and a 16-element array read with run-time indices stayed in
  // registers (selects and predicated moves). Sizes in between were not checked: not reported.
  const int64_t minWritten = static_cast<int64_t>(rc.option(kInfo, "min-written-elements", 32));
  const int64_t minRead = static_cast<int64_t>(rc.option(kInfo, "min-read-elements", 64));
  for (const auto* base : order) {
    const Use& u = uses[base];
    const auto* vd = llvm::dyn_cast<clang::VarDecl>(base);
    auto& ctx = m.ast();
    int64_t bytes = vd && !vd->getType()->isIncompleteType() ? ctx.getTypeSizeInChars(vd->getType()).getQuantity() : 0;
    const Access* at = u.write ? u.write : u.read;
    if (!at) continue;
    int64_t elems = at->elemSize ? bytes / at->elemSize : 0;
    // Counted by what the run-time indices reach: a double buffer toggled by `s ^= 1` (`RA[s][i][k]`
    // with i, k unrolled) chooses one register of two, which nvcc does with selects (ptxas -v: no
    // stack frame for cuda_hgemm's mmaAsyncStage2Kernel, 2 of 32 elements reached).
    auto reached = [&](int64_t reach) { return reach < 0 ? elems : std::min(reach, elems); };
    bool written = u.write && reached(u.writeReach) >= minWritten;
    bool read = !written && u.read && reached(u.readReach) >= minRead;
    if (!written && !read) continue;
    const Access& a = written ? *u.write : *u.read;
    if (!rc.inLintedFile(a.expr->getBeginLoc())) continue;
    std::string msg = fmt::format(
        "per-thread array '{}' ({} elements, {} bytes per thread) is {} with an index the compiler cannot resolve "
        "('{}': {}), so it cannot live in registers: nvcc places it in local memory (off-chip, cached in L1), and "
        "every access becomes a load or store (LDL/STL) instead of a register operation",
        a.baseName, elems, bytes, written ? "written" : "read", rc.text(a.expr), written ? u.why : u.readWhy);
    msg += atContext(a.context);
    if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
    Diagnostic d = rc.make(kInfo, rc.span(a.expr), msg);
    if (vd) d.notes.push_back({rc.span(vd), fmt::format("'{}' declared here", a.baseName)});
    d.fixHint = "index it only with constants after unrolling (#pragma unroll over a fixed trip count, comparisons "
                "instead of indexing), or keep the table in shared memory (one slice per thread or per warp), or "
                "exchange values between lanes with warp shuffles";
    addCallSiteNote(a, rc, d);
    setFrequencyImpact(m, a.expr, a.callSite, d);
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
