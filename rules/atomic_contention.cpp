#include "rules/atomic_contention.h"

#include <clang/AST/ParentMapContext.h>
#include <fmt/format.h>

#include <functional>
#include <map>
#include <set>

#include "rules/cost.h"
#include "rules/host_util.h"
#include "analyzer/rule/rule_context.h"
#include "rules/rule_util.h"

namespace gpuopt {

namespace {
// The atomic's function name ("atomicAdd"), from the call the access was recorded at.
std::string atomicName(const Access& a) {
  auto* ce = llvm::dyn_cast_or_null<clang::CallExpr>(a.expr);
  auto* fd = ce ? ce->getDirectCallee() : nullptr;
  return fd ? fd->getNameAsString() : "atomic";
}

// nvcc 13 on sm_90 aggregates a 32-bit integer atomicAdd, Sub, Min, Max, And, Or or Xor on a
// warp-uniform address per warp (VOTEU.ANY, then UPOPC for a constant or REDUX for a per-lane
// value, and one leader REDG), and a 64-bit integer add of a constant (VOTEU + UPOPC); the scoped
// built-ins __nv_atomic_fetch_add/_max/_or (and, by the same lowering, _sub/_min/_and/_xor) alike,
// whatever the order or scope; atomicInc, atomicDec, atomicExch, a 64-bit add of a per-lane value
// and float atomics are not (one REDG/ATOMG per lane): all checked in SASS
// (scripts/sass_probes.cu; docs/measurements-data/device-rules-sass.txt and, for the scoped and
// 64-bit constant probes, sass-atomics-h200.txt). Data-indexed addresses are not aggregated.
bool aggregatedByNvcc(const Access& a, clang::ASTContext& ctx) {
  auto* ce = llvm::dyn_cast_or_null<clang::CallExpr>(a.expr);
  if (!ce || ce->getNumArgs() < 2) return false;
  std::string n = atomicName(a);
  static const char* kOps[] = {"Add", "Sub", "Min", "Max", "And", "Or", "Xor"};
  static const char* kScoped[] = {"add", "sub", "min", "max", "and", "or", "xor"};
  bool add = false, known = false;
  for (int i = 0; i < 7; ++i) {
    if (n == std::string("atomic") + kOps[i] || n == std::string("__nv_atomic_fetch_") + kScoped[i]) known = true, add = i == 0;
  }
  if (!known) return false;
  const clang::Expr* operand = ce->getArg(1)->IgnoreParenImpCasts();
  clang::QualType t = operand->getType();
  if (!t->isIntegerType()) return false;
  if (ctx.getTypeSize(t) <= 32) return true;
  // 64 bits: an add of one constant for every lane (a counter's `1ull`) only.
  return add && ctx.getTypeSize(t) == 64 && !operand->isValueDependent() && operand->isEvaluatable(ctx);
}

// The atomic's old value is used (`out[atomicAdd(counter, 1)] = x`: stream compaction, tickets):
// the serialisation is the algorithm, and nvcc aggregates such counters per warp too.
bool resultUsed(const Access& a, clang::ASTContext& ctx) {
  auto parents = ctx.getParents(*a.expr);
  if (parents.size() != 1) return false;
  if (const auto* p = parents[0].get<clang::Expr>()) {
    if (const auto* c = llvm::dyn_cast<clang::CStyleCastExpr>(p)) return !c->getType()->isVoidType();
    return true;
  }
  // Kept in a variable (`unsigned slot = atomicAdd(count, 1u); out[slot] = x;`) or returned.
  if (parents[0].get<clang::VarDecl>() || parents[0].get<clang::ReturnStmt>()) return true;
  return false;
}

// A min/max atomic behind a test of the value it updates (`if (cost < lane->min_cost)
// atomicMin(&lane->min_cost, cost)`: test and test-and-set): once the extreme settles, the test
// fails for nearly every thread and the atomic is not issued, so the block does not serialise on it
// (kaldi's decoder, wave 3). The test is an enclosing `if` condition that reads the atomic's
// address (the same expression, without its `&`).
bool filteredByRead(const Access& a, clang::ASTContext& ctx) {
  const auto* ce = llvm::dyn_cast_or_null<clang::CallExpr>(a.expr);
  if (!ce || ce->getNumArgs() < 2) return false;
  const std::string n = atomicName(a);
  if (n.find("Min") == std::string::npos && n.find("Max") == std::string::npos && n.find("min") == std::string::npos &&
      n.find("max") == std::string::npos)
    return false;
  const clang::Expr* addr = ce->getArg(0)->IgnoreParenImpCasts();
  const clang::Expr* target = nullptr;
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(addr); u && u->getOpcode() == clang::UO_AddrOf) target = u->getSubExpr();
  if (!target) return false;
  const clang::Stmt* child = ce;
  for (int depth = 0; depth < 8; ++depth) {
    auto parents = ctx.getParents(*child);
    if (parents.empty()) return false;
    const clang::Stmt* p = parents[0].get<clang::Stmt>();
    if (!p) return false;
    if (auto* i = llvm::dyn_cast<clang::IfStmt>(p); i && child != i->getCond()) {
      bool reads = false;
      std::function<void(const clang::Stmt*)> scan = [&](const clang::Stmt* s) {
        if (!s || reads) return;
        if (auto* e = llvm::dyn_cast<clang::Expr>(s); e && host::sameExpr(ctx, e, target)) reads = true;
        for (const clang::Stmt* c : s->children()) scan(c);
      };
      scan(i->getCond());
      if (reads) return true;
    }
    child = p;
  }
  return false;
}

// The number of elements of a fixed-size array the access is into, 0 if not one.
int64_t arrayElements(const Access& a) {
  const auto* vd = llvm::dyn_cast_or_null<clang::VarDecl>(a.base);
  if (!vd || !a.elemSize) return 0;
  if (auto* cat = vd->getASTContext().getAsConstantArrayType(vd->getType()))
    return static_cast<int64_t>(vd->getASTContext().getTypeSizeInChars(cat).getQuantity()) / a.elemSize;
  return 0;
}
}  // namespace

void AtomicContentionRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  const unsigned minLanes = static_cast<unsigned>(rc.option(kInfo, "min-lanes", 4));
  std::set<const clang::Expr*> done;
  for (const auto& a : m.accesses()) {
    if (!a.isAtomic || a.space != MemSpace::Global) continue;
    if (!rc.inLintedFile(a.expr->getBeginLoc()) || done.count(a.expr)) continue;
    if (resultUsed(a, m.ast())) continue;
    // Under a guard over stand-in values that no thread passed (`if (gtid == 0)`): the model let
    // every thread in, so how many threads share the address is not known.
    if (a.approxMask) continue;
    // Verification code (`if (t[i] != i) atomicAdd(nerr, 1)`): only a failed check runs it.
    if (a.failureGuard) continue;
    // Under a selection at most one thread passes (`if (atomicCAS(&flag, 0, 1) == 0)`, the first
    // thread to report: the NVIDIA blog's CAS error reporting, tenth stop check): nothing contends.
    if (!a.selectGuards.empty()) continue;
    if (filteredByRead(a, m.ast())) continue;
    std::string name = atomicName(a);
    std::string what = fmt::format("{} on '{}'", name, rc.text(a.expr));
    std::string msg, fix;
    // Lanes that share an address only through a parameter's stand-in (`x[out_w / stride]`, where
    // the stand-in 4096 puts every lane on one element; darknet's upsample backward, ninth stop
    // check, shares 2 or 4 lanes per address): how many share is the run-time value's, not said.
    if (a.known && !a.data && a.paramAddr && a.paramLanes) continue;
    if (a.known && !a.data) {
      // Lanes per address in each warp, and warps sharing one address.
      unsigned worstLanes = 0, activeWarps = 0, activeThreads = 0, warpsOnOne = 0;
      bool onePerWarp = true;  // every active warp's lanes on one address
      std::map<int64_t, std::set<unsigned>> warpsAt;
      for (unsigned w = 0; w < m.warps(); ++w) {
        auto lanes = warpLanes(a.mask, w);
        if (lanes.empty()) continue;
        ++activeWarps;
        activeThreads += static_cast<unsigned>(lanes.size());
        std::map<int64_t, unsigned> per;
        for (unsigned t : lanes) {
          ++per[a.addr[t]];
          warpsAt[a.addr[t]].insert(w);
        }
        for (auto& [ad, n] : per) worstLanes = std::max(worstLanes, n);
        onePerWarp = onePerWarp && per.size() == 1;
      }
      for (auto& [ad, ws] : warpsAt) warpsOnOne = std::max(warpsOnOne, static_cast<unsigned>(ws.size()));
      bool oneAddress = warpsAt.size() == 1;
      if (activeThreads <= 1) continue;  // one atomic per block: the fix itself
      if (oneAddress && activeWarps > 1 && worstLanes > 1 && aggregatedByNvcc(a, m.ast())) {
        // An address of the block's own (`smax[blockIdx.x]`): only the block's warps meet there
        // (precision sample s11: HeCBench fsm, all-pairs-distance).
        msg = fmt::format("{}: every thread of the block ({} threads in {} warps) updates one address; nvcc already "
                          "aggregates this per warp (one atomic per warp), so what remains is all {} warps of {} "
                          "serialising on that address",
                          what, activeThreads, activeWarps, activeWarps,
                          a.addrBlock ? "the block (each block has an address of its own)" : "every block of the grid");
      } else if (oneAddress && worstLanes > 1) {
        msg = fmt::format("{}: all {} active lanes of each warp{} update one address, one after the other{}", what,
                          worstLanes, activeWarps > 1 ? fmt::format(" and all {} warps of the block", activeWarps) : "",
                          aggregatedByNvcc(a, m.ast())
                              ? ""
                              : fmt::format(" (nvcc does not aggregate {} per warp: one atomic per lane on sm_90, "
                                            "checked in SASS; only 32-bit integer add, sub, min, max, and, or, xor "
                                            "and a 64-bit add of a constant are aggregated)", name));
      } else if (oneAddress && activeWarps > 1) {
        // One lane per warp under a condition the model cannot decide (a "last one out" ticket,
        // `if (atomicAdd(done, n) + n == total)`): how many warps get there is not known, and
        // such guards usually let one warp through per launch (cuda-samples cdpAdvancedQuicksort).
        if (!a.guards.empty()) continue;
        msg = fmt::format("{}: one lane of each of the {} warps of the block updates the same address; {}", what,
                          activeWarps,
                          a.addrBlock ? "the block's warps serialise on it (each block has an address of its own)"
                                      : "every warp of the grid serialises on it");
      } else if (worstLanes >= minLanes && onePerWarp && warpsOnOne <= 1 && aggregatedByNvcc(a, m.ast())) {
        // Each warp on an address of its own (`atomicOr(&bits[row / 32], flag << (row % 32))`):
        // nvcc makes it one atomic per warp, and no two warps meet (Learn-CUDA-Programming's
        // pivot packing, ninth stop check's last sample): nothing serialises.
        continue;
      } else if (worstLanes >= minLanes) {
        msg = fmt::format("{}: up to {} lanes of a warp update the same address ({} warps of the block share an "
                          "address); their atomics serialise", what, worstLanes, warpsOnOne);
      } else {
        continue;
      }
      fix = "reduce first: sum within the warp with __shfl_down_sync (or cooperative_groups::reduce), then across "
            "the block in shared memory, and issue one atomic per block";
    } else if (a.data) {
      int64_t addresses = a.dataValues;
      int64_t elems = arrayElements(a);
      if (elems > 0 && (addresses == 0 || elems < addresses)) addresses = elems;
      if (addresses == 0 || addresses > 32) continue;  // unknown or many bins: collisions are not predictable
      unsigned lanes = 0, warps = 0;
      for (unsigned w = 0; w < m.warps(); ++w)
        if (auto l = warpLanes(a.mask, w); !l.empty()) lanes = std::max<unsigned>(lanes, l.size()), ++warps;
      if (lanes < 2) continue;
      unsigned perAddr = static_cast<unsigned>((lanes + addresses - 1) / addresses);
      msg = fmt::format("{}: the index depends on data but has at most {} value{}, so {} lanes of a warp hit at most {} "
                        "address{} (at least {} lanes on one) and every warp of the grid updates the same {}; nvcc "
                        "does not aggregate data-indexed atomics",
                        what, addresses, addresses == 1 ? "" : "s", lanes, addresses, addresses == 1 ? "" : "es", perAddr,
                        addresses == 1 ? "address" : "few addresses");
      fix = "privatise the bins: a __shared__ copy per block updated with shared-memory atomics (or per-thread "
            "counts in registers), then one global atomic per bin per block";
    } else {
      continue;
    }
    done.insert(a.expr);
    msg += atContext(a.context);
    if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
    Diagnostic d = rc.make(kInfo, rc.span(a.expr), msg);
    d.fixHint = fix;
    addCallSiteNote(a, rc, d);
    setFrequencyImpact(m, a.expr, a.callSite, d);
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
