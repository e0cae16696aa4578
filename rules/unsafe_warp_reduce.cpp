#include "rules/unsafe_warp_reduce.h"

#include <clang/AST/Expr.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <fmt/format.h>

#include <map>
#include <set>

#include "analyzer/rule/rule_context.h"
#include "rules/rule_util.h"

namespace gpuopt {

namespace {
// Whether the statement that stores through `w` computes the value from the array it stores to:
// `v[i] += v[i + 16]`, `s[t] = x = x + s[t + 8]` (a reduction's step), against a table staged from
// elsewhere, `v[i] = v0[i]` (qsim's gate matrices copied into shared memory), which is an
// exchange of values between lanes, not a reduction.
struct RefersTo : clang::RecursiveASTVisitor<RefersTo> {
  const clang::ValueDecl* target;
  const std::set<const clang::Expr*>* sameArray = nullptr;  // the model's accesses of it (through aliases too)
  bool found = false;
  bool VisitExpr(clang::Expr* e) {
    found = found || (sameArray && sameArray->count(e));
    return !found;
  }
  bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
    found = found || e->getDecl() == target;
    return !found;
  }
  bool VisitMemberExpr(clang::MemberExpr* e) {
    found = found || e->getMemberDecl() == target;
    return !found;
  }
};
// `readsOf`: per array, the model's reads of it (through aliases too), built once per kernel.
using ReadsOf = std::map<const clang::ValueDecl*, std::set<const clang::Expr*>>;
bool storesFromItself(const Access& w, const KernelModel& m, ReadsOf& readsOf) {
  if (!w.isWrite || !w.base) return false;
  if (readsOf.empty())
    for (const auto& a : m.accesses())
      if (a.isRead && a.base) readsOf[a.base].insert(a.expr);
  auto refersToArray = [&](const clang::Expr* e) {
    RefersTo v;
    v.target = w.base;
    v.sameArray = &readsOf[w.base];
    v.TraverseStmt(const_cast<clang::Expr*>(e));
    return v.found;
  };
  clang::ASTContext& ctx = m.ast();
  const clang::Expr* child = w.expr;
  for (int depth = 0; depth < 6; ++depth) {
    auto parents = ctx.getParents(*child);
    if (parents.empty()) return false;
    if (parents[0].get<clang::CompoundAssignOperator>()) return true;
    if (const auto* bo = parents[0].get<clang::BinaryOperator>(); bo && bo->isAssignmentOp()) return refersToArray(bo->getRHS());
    if (const auto* op = parents[0].get<clang::CXXOperatorCallExpr>(); op && op->isAssignmentOp()) {
      if (op->getOperator() != clang::OO_Equal) return true;  // += on a class type
      return op->getNumArgs() > 1 && refersToArray(op->getArg(1));
    }
    const auto* e = parents[0].get<clang::Expr>();
    if (!e) return false;
    child = e;
  }
  return false;
}
}  // namespace

void UnsafeWarpReduceRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  // One finding per warp-synchronous region: the function the accesses are in, within one barrier interval.
  struct Group {
    const KernelModel::Race* first = nullptr;
    unsigned races = 0;
    bool allVolatile = true;
    bool anyVolatile = false;
    bool syncwarp = false;
    bool global = false;
    bool allPossible = true;  // every race of the region is under a data guard: a warning
    bool anyRead = false;     // some race reads what another lane writes (else write-write only)
    bool reduction = false;   // some racing store computes its value from the same array
    std::string syncName;     // the warp-level sync between the array's accesses (a vote, a __syncwarp())
  };
  std::map<std::pair<const clang::FunctionDecl*, unsigned>, Group> groups;
  ReadsOf readsOf;
  std::vector<std::pair<const clang::FunctionDecl*, unsigned>> order;
  // Accesses that also race across warps are missing-syncthreads' (a __syncthreads() fixes both).
  std::set<const clang::Expr*> blockLevel;
  for (const auto& r : m.sharedRaces())
    if (!r.warpSynchronous) blockLevel.insert(r.second->expr);
  for (const auto& r : m.globalRaces())
    if (!warpExchange(r)) blockLevel.insert(r.second->expr);
  // Lanes of one warp exchanging values through global memory (lanes 0-31 write a key, lane 0
  // reads it: HeCBench chacha20) need the same __syncwarp(); only races the model decides, as
  // global-memory-race reports them (no data guard, no address from a parameter's stand-in).
  std::vector<std::pair<const KernelModel::Race*, bool>> races;
  for (const auto& r : m.sharedRaces()) races.push_back({&r, false});
  for (const auto& r : m.globalRaces())
    if (warpExchange(r) && !r.possible && !r.first->paramAddr && !r.second->paramAddr && !r.first->approxMask && !r.second->approxMask)
      races.push_back({&r, true});
  for (const auto& [rp, global] : races) {
    const auto& r = *rp;
    if (!r.warpSynchronous || blockLevel.count(r.second->expr)) continue;
    auto key = std::make_pair(r.second->function, r.second->epoch * 2 + (global ? 1 : 0));
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    Group& g = it->second;
    g.global = global;
    g.allPossible = g.allPossible && r.possible;
    // Shown with a decided race when there is one, then the earliest.
    if (!g.first || (g.first->possible && !r.possible) ||
        (g.first->possible == r.possible && r.second->seq < g.first->second->seq))
      g.first = &r;
    ++g.races;
    g.anyRead = g.anyRead || r.first->isRead || r.second->isRead;
    g.allVolatile = g.allVolatile && r.first->isVolatile && r.second->isVolatile;
    g.anyVolatile = g.anyVolatile || r.first->isVolatile || r.second->isVolatile;
    g.reduction = g.reduction || storesFromItself(*r.first, m, readsOf) || storesFromItself(*r.second, m, readsOf);
    // A warp-level sync between accesses of the racing array itself (a __syncwarp() per step):
    // not a shuffle somewhere else in the function (qsim's WarpReduce after the loop).
    unsigned w = r.t2 / 32;
    unsigned lo = r.second->seq, hi = r.second->seq;
    for (const auto& a : m.accesses())
      if (a.function == r.second->function && a.epoch == r.second->epoch && a.base == r.second->base &&
          a.warpEpoch[w] != r.second->warpEpoch[w]) {
        g.syncwarp = true;
        lo = std::min(lo, a.seq), hi = std::max(hi, a.seq);
      }
    if (g.syncwarp && g.syncName.empty())
      for (const auto& b : m.barriers())
        if (!b.blockLevel && b.seq > lo && b.seq < hi) {
          g.syncName = b.name;
          break;
        }
  }
  for (const auto& key : order) {
    const Group& g = groups[key];
    const auto& r = *g.first;
    const Access& a = *r.first;
    const Access& b = *r.second;
    if (!rc.inLintedFile(b.expr->getBeginLoc())) continue;
    std::string pair = fmt::format("lane {} {} {} while lane {} {} it", r.t2 % 32, b.isWrite ? "writes" : "reads",
                                   elementName(b, r.byteAddr), r.t1 % 32, a.isWrite ? "writes" : "reads");
    std::string msg;
    std::string buffer = !b.baseName.empty() ? b.baseName : rc.text(b.expr);
    if (g.global)
      msg = fmt::format("unsafe warp-synchronous exchange through global '{}': lanes of one warp read or overwrite "
                        "each other's values with no __syncwarp() between, relying on the warp running in lockstep, "
                        "which is not guaranteed since Volta's independent thread scheduling ({})",
                        buffer, pair);
    else if (!g.anyRead)  // lanes only overwrite each other: no reduction reads a result
      msg = fmt::format("unsafe warp-synchronous writes to shared '{}': lanes of one warp write the same words with no "
                        "__syncwarp() between, so which value stays depends on the order the lanes run in, which is not "
                        "fixed since Volta's independent thread scheduling ({})",
                        buffer, pair);
    else if (g.syncwarp && !g.allVolatile)  // a __syncwarp() per step, none between a step's read and write
      msg = fmt::format("unsafe warp-synchronous {} on shared '{}': {} ends each step, but within "
                        "a step lanes read words that other lanes write, with no __syncwarp() between the read and "
                        "the write; the lanes are not in lockstep since Volta's independent thread scheduling, so a "
                        "read may see the word before or after its update ({})",
                        g.reduction ? "reduction" : "exchange", buffer,
                        g.syncName.empty() || g.syncName.rfind("__syncwarp", 0) == 0
                            ? std::string("a __syncwarp()")
                            : fmt::format("a warp-level sync ('{}')", g.syncName),
                        pair);
    else if (!g.allVolatile && g.anyVolatile)
      msg = fmt::format("unsafe warp-synchronous reduction on shared '{}': some of the racing accesses are volatile "
                        "and some are not, and there is no __syncwarp(): the plain ones may stay in registers, and "
                        "lockstep is not guaranteed since Volta's independent thread scheduling ({})",
                        buffer, pair);
    else if (!g.reduction && !g.anyVolatile && !g.syncwarp)  // values staged by some lanes, read by others
      msg = fmt::format("unsafe warp-synchronous exchange through shared '{}': lanes read words that other lanes of "
                        "the warp write, with no __syncwarp() between the write and the read, relying on the warp "
                        "running in lockstep, which is not guaranteed since Volta's independent thread scheduling "
                        "({})",
                        buffer, pair);
    else if (!g.allVolatile)
      msg = fmt::format("unsafe warp-synchronous reduction on shared '{}': lanes read each other's results with no "
                        "__syncwarp() and no volatile, so the compiler may keep values in registers and the result "
                        "is wrong ({})",
                        buffer, pair);
    else if (g.syncwarp)
      msg = fmt::format("unsafe warp-synchronous reduction on shared '{}': __syncwarp() is there but a step still reads "
                        "and writes the same words without one in between ({})",
                        buffer, pair);
    else
      msg = fmt::format("unsafe warp-synchronous reduction on shared '{}': 'volatile' alone relies on the warp running "
                        "in lockstep, which is not guaranteed since Volta's independent thread scheduling ({})",
                        buffer, pair);
    if (g.allPossible) msg = "possible " + msg + possibleGuardsText(a, b);
    msg += atContext(b.context);
    Diagnostic d = rc.make(kInfo, rc.span(b.expr), msg);
    d.shapeKey = raceShapeKey(g.global ? "global" : "shared", g.allPossible, a, b);
    if (g.allPossible) d.severity = Severity::Warning;  // as missing-syncthreads' possible races
    d.notes.push_back({rc.span(a.expr), fmt::format("lane {} {} {} here", r.t1 % 32, a.isWrite ? "writes" : "reads",
                                                    elementName(a, r.firstByteAddr))});
    addCallSiteNote(b, rc, d);
    if (!g.global && !g.anyRead) {  // the demo is a reduction's reads: not this pattern's figure
      d.measuredTag = "not measured for lanes that only overwrite each other; the demo, a reduction's plain-pointer "
                      "tail, gave wrong sums in 20 of 20 runs on H100; see --demo unsafe-warp-reduce";
      d.fixHint = "let one lane write each word (or write the lanes' values to distinct words), or __syncwarp() between "
                  "the writes so their order is fixed";
    } else if (!g.global && !g.reduction && !g.anyVolatile) {
      d.measuredTag = "not measured for values staged by some lanes and read by others; the demo, a reduction's "
                      "plain-pointer tail, gave wrong sums in 20 of 20 runs on H100; see --demo unsafe-warp-reduce";
      d.fixHint = "put __syncwarp() between the lanes' writes and the reads of them (and another before the words are "
                  "written again while lanes may still read them), or pass the values with __shfl_sync";
    } else d.fixHint = g.global ? "put __syncwarp() between the lanes' writes and the reads that depend on them (or pass the "
                           "values with __shfl_sync)"
                         : "reduce the last warp with __shfl_down_sync (no shared memory), or read into a register, "
                           "__syncwarp(), write, __syncwarp() at every step";
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
