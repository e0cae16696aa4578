#include "rules/bank_conflict.h"

#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/TypeLoc.h>
#include <clang/Lex/Lexer.h>
#include <fmt/format.h>

#include <map>
#include <set>

#include "rules/cost.h"
#include "analyzer/rule/rule_context.h"
#include "rules/bank_layout.h"
#include "rules/impact.h"
#include "rules/rule_util.h"

namespace gpuopt {

namespace {
struct Conflict {
  const Access* a = nullptr;
  unsigned ways = 1, bank = 0;
  std::vector<unsigned> lanes;  // lanes hitting the worst bank at distinct words
  int64_t rowStrideWords = 0;   // word distance between colliding lanes
};

// Degree of the worst bank conflict of one warp's access (flat arrays: this runs for every access
// of every warp).
Conflict conflictOf(const Access& a, llvm::ArrayRef<unsigned> lanes) {
  Conflict best;
  best.a = &a;
  unsigned phase = a.elemSize <= 4 ? 32 : a.elemSize == 8 ? 16 : 8;  // lanes served per shared-memory wavefront
  struct BW {
    unsigned bank;
    int64_t word;
    unsigned lane;
  };
  static thread_local std::vector<BW> v;  // reused: this runs for every access of every warp
  for (size_t p0 = 0; p0 < lanes.size();) {
    unsigned group = lanes[p0] % 32 / phase;
    v.clear();
    size_t p = p0;
    for (; p < lanes.size() && lanes[p] % 32 / phase == group; ++p) {
      unsigned t = lanes[p];
      int64_t w0 = floorDiv(a.addr[t], 4), w1 = floorDiv(a.addr[t] + a.elemSize - 1, 4);
      for (int64_t w = w0; w <= w1; ++w) v.push_back({static_cast<unsigned>(((w % 32) + 32) % 32), w, t % 32});
    }
    std::sort(v.begin(), v.end(), [](const BW& x, const BW& y) {
      return x.bank != y.bank ? x.bank < y.bank : x.word != y.word ? x.word < y.word : x.lane < y.lane;
    });
    for (size_t i = 0; i < v.size();) {
      size_t j = i;
      unsigned distinct = 0;
      for (; j < v.size() && v[j].bank == v[i].bank; ++j)
        if (j == i || v[j].word != v[j - 1].word) ++distinct;
      if (distinct > best.ways) {
        best.ways = distinct;
        best.bank = v[i].bank;
        best.lanes.clear();
        for (size_t k = i; k < j; ++k)
          if (k == i || v[k].word != v[k - 1].word) best.lanes.push_back(v[k].lane);
        std::sort(best.lanes.begin(), best.lanes.end());
        best.rowStrideWords = distinct >= 2 ? v[i + 1 < j ? i + 1 : i].word - v[i].word : 0;
        for (size_t k = i + 1; k < j; ++k)
          if (v[k].word != v[i].word) { best.rowStrideWords = v[k].word - v[i].word; break; }
      }
      i = j;
    }
    p0 = p;
  }
  return best;
}


// Padding sized for 16 banks: an index term `x >> 4` (GPU Gems' CONFLICT_FREE_OFFSET with
// LOG_NUM_BANKS 4, written for the 16 banks of GPUs before Fermi) in the subscript or in what was
// assigned to a variable of it in the same function. Returns how the code spells it (the macro
// that expands to it, or the shift itself), or "".
struct ShiftBy4Finder : clang::RecursiveASTVisitor<ShiftBy4Finder> {
  clang::ASTContext& ctx;
  const clang::BinaryOperator* found = nullptr;
  explicit ShiftBy4Finder(clang::ASTContext& c) : ctx(c) {}
  bool VisitBinaryOperator(clang::BinaryOperator* b) {
    if (b->getOpcode() != clang::BO_Shr || b->getLHS()->isValueDependent() || b->getRHS()->isValueDependent()) return true;
    clang::Expr::EvalResult r;
    if (!b->getRHS()->EvaluateAsInt(r, ctx) || r.Val.getInt() != 4) return true;
    if (b->getLHS()->EvaluateAsInt(r, ctx)) return true;  // a constant shifted: not a padding term
    found = b;
    return false;
  }
};

const clang::BinaryOperator* shiftBy4In(clang::ASTContext& ctx, const clang::Stmt* s) {
  if (!s) return nullptr;
  ShiftBy4Finder f(ctx);
  f.TraverseStmt(const_cast<clang::Stmt*>(s));
  return f.found;
}

std::string sixteenBankPadding(clang::ASTContext& ctx, const clang::Expr* access) {
  const auto* sub = llvm::dyn_cast<clang::ArraySubscriptExpr>(access->IgnoreParenImpCasts());
  if (!sub) return "";
  const clang::Expr* index = sub->getIdx();
  const clang::BinaryOperator* shift = shiftBy4In(ctx, index);
  if (!shift) {
    // Variables of the index and what the function assigns to them (`ai += OFFSET(ai)`).
    std::set<const clang::VarDecl*> vars;
    struct Refs : clang::RecursiveASTVisitor<Refs> {
      std::set<const clang::VarDecl*>* out;
      bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
        if (auto* v = llvm::dyn_cast<clang::VarDecl>(e->getDecl())) out->insert(v);
        return true;
      }
    } refs;
    refs.out = &vars;
    refs.TraverseStmt(const_cast<clang::Expr*>(index));
    const clang::FunctionDecl* fn = nullptr;
    for (clang::DynTypedNodeList ps = ctx.getParents(*access); !ps.empty() && !fn;) {
      if ((fn = ps[0].get<clang::FunctionDecl>())) break;
      if (const auto* st = ps[0].get<clang::Stmt>()) ps = ctx.getParents(*st);
      else if (const auto* d = ps[0].get<clang::Decl>()) ps = ctx.getParents(*d);
      else break;
    }
    if (!fn || !fn->hasBody()) return "";
    struct Sets : clang::RecursiveASTVisitor<Sets> {
      clang::ASTContext* ctx;
      const std::set<const clang::VarDecl*>* vars;
      const clang::BinaryOperator* found = nullptr;
      bool VisitBinaryOperator(clang::BinaryOperator* b) {
        if (!b->isAssignmentOp()) return true;
        auto* lhs = llvm::dyn_cast<clang::DeclRefExpr>(b->getLHS()->IgnoreParenImpCasts());
        if (lhs && vars->count(llvm::dyn_cast<clang::VarDecl>(lhs->getDecl()))) found = shiftBy4In(*ctx, b->getRHS());
        return !found;
      }
      bool VisitVarDecl(clang::VarDecl* v) {
        if (vars->count(v) && v->getInit()) found = shiftBy4In(*ctx, v->getInit());
        return !found;
      }
    } sets;
    sets.ctx = &ctx;
    sets.vars = &vars;
    sets.TraverseStmt(fn->getBody());
    shift = sets.found;
  }
  if (!shift) return "";
  const auto& sm = ctx.getSourceManager();
  clang::SourceLocation loc = shift->getBeginLoc();
  std::string macro;
  while (loc.isMacroID()) {
    // The outermost macro the shift comes from (CONFLICT_FREE_OFFSET, not LOG_NUM_BANKS).
    if (sm.isMacroArgExpansion(loc)) { loc = sm.getImmediateSpellingLoc(loc); continue; }
    macro = clang::Lexer::getImmediateMacroName(loc, sm, ctx.getLangOpts()).str();
    loc = sm.getImmediateMacroCallerLoc(loc);
  }
  return macro.empty() ? std::string("a '>> 4' padding term") : "'" + macro + "' (a '>> 4' padding term)";
}
}  // namespace

void BankConflictRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  const unsigned minWays = static_cast<unsigned>(rc.option(kInfo, "min-ways", 2));
  const unsigned warnWays = static_cast<unsigned>(rc.option(kInfo, "warn-ways", 3));
  std::map<const clang::Expr*, Conflict> worst;
  std::map<const clang::VarDecl*, LayoutChange> layouts;
  std::vector<const clang::Expr*> order;
  for (const auto& a : m.accesses()) {
    if (a.space != MemSpace::Shared || !a.known || a.data || !a.strideSym.empty() || a.isAtomic) continue;
    // An address that depends on a value known only at run time (a seed hashed into the index, a
    // size scaling the lane): the banks the lanes hit are those of the stand-in value, not known.
    // Unless the value is only an offset every lane shares (`S = &sram[3 * Bc * d]; S[Bc * tx + y]`)
    // and the access is of whole words: the offset moves every lane's bank alike, so how many
    // lanes meet in one bank is the code's, whichever bank that is.
    if (a.elemSize == 0 || a.elemSize > 16) continue;
    if (a.paramAddr && (a.paramLanes || a.elemSize < 4)) continue;
    if (!rc.inLintedFile(a.expr->getBeginLoc())) continue;
    // All fields of a record of at most 16 bytes written or read together (v.x, v.y, v.z, v.w):
    // the compiler emits one vector access, served in conflict-free quarter- or half-warp phases.
    int64_t recStride = 0;
    if (recordCoverage(m, a, &recStride) >= 1.0 && recStride <= 16) continue;
    for (unsigned w = 0; w < m.warps(); ++w) {
      auto lanes = warpLanes(a.mask, w);
      if (lanes.size() < 2) continue;
      Conflict c = conflictOf(a, lanes);
      auto it = worst.find(a.expr);
      if (it == worst.end()) {
        order.push_back(a.expr);
        worst[a.expr] = c;
      } else if (c.ways > it->second.ways) {
        it->second = c;
      }
    }
  }
  for (const auto* e : order) {
    const Conflict& c = worst[e];
    if (c.ways < minWays) continue;
    const Access& a = *c.a;
    // Under an offset known only at run time the bank is not known, only that the lanes share one.
    const std::string bank = a.paramAddr ? std::string("one bank") : fmt::format("bank {}", c.bank);
    std::string msg = fmt::format("{}-way bank conflict on shared {} '{}': {} of a warp hit {} at {} different "
                                  "addresses, so the access is replayed {} times",
                                  c.ways, accessKind(a), rc.text(a.expr), laneList(c.lanes), bank, c.ways, c.ways);
    if (a.paramAddr)
      msg += fmt::format(" (the array offset depends on {}, known only at run time; it moves every lane's bank alike)",
                         a.paramSrc ? "'" + a.paramSrc->getNameAsString() + "'" : std::string("a value"));
    msg += atContext(a.context);
    if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
    Diagnostic d = rc.make(kInfo, rc.span(e), msg);
    d.measuredTag = bankConflictImpact(c.ways);  // the factor measured for this n, not the 32-way one
    d.predicted = {{"ways", c.ways}, {"store", a.isWrite && !a.isRead ? 1 : 0}};
    // The fix: a layout of the array judged over all its accesses (rules/bank_layout.h).
    addLineInventory(m, a, a.isWrite && !a.isRead, rc, d.predicted);
    const auto* vd = llvm::dyn_cast_or_null<clang::VarDecl>(a.base);
    auto lit = layouts.find(vd);
    if (lit == layouts.end()) lit = layouts.emplace(vd, chooseSharedLayout(m, vd, rc)).first;
    const LayoutChange& layout = lit->second;
    if (vd && rc.inLintedFile(vd->getLocation()) && !layout.hint.empty())
      d.notes.push_back({rc.span(vd), fmt::format("'{}' declared here", vd->getName().str())});
    // A vector access (8 or 16 bytes per lane) needs its alignment: an odd word stride would break
    // it, and padding that suits it may not suit the array's other readers (a padded tile's
    // fragment loads): a swizzle of the chunks keeps both (cuda_hgemm's wmma_padding, fourth stop
    // check).
    const std::string generic =
        a.elemSize >= 8
            ? fmt::format("the access moves {0} bytes per lane, so an odd word stride would break its alignment: "
                          "swizzle the {0}-byte chunks (XOR a chunk's index within its 128-byte line with bits "
                          "of its row index, as CUTLASS's swizzled layouts do) so that the lanes of each phase "
                          "spread over all 32 banks, or pad each row by a multiple of {0} bytes that keeps the "
                          "array's other accesses conflict-free",
                          a.elemSize)
            : "make consecutive lanes access consecutive 4-byte words (sequential addressing), or use an odd stride / "
              "padding so that the lanes spread over all 32 banks";
    // Inline PTX (ldmatrix's row addresses, cp.async's destination) takes the array's address: no
    // layout edit is offered, but the generic fix is the one that applies.
    d.fixHint = !layout.hint.empty() && (a.instruction.empty() || layout.kind != LayoutChange::Kind::None) ? layout.hint : generic;
    d.fixIts = layout.edits;
    // Padding written for the lectures' era: today's 32 banks need one pad word per 32 elements.
    if (std::string pad = sixteenBankPadding(m.ast(), e); !pad.empty()) {
      d.message += fmt::format("; the index is padded with {}, one pad word per 16 elements: sized for the 16 "
                               "banks of GPUs before Fermi, while today's GPUs have 32 banks", pad);
      d.fixHint = "pad for 32 banks: shift by 5 instead of 4 (LOG_NUM_BANKS 5: one pad word per 32 elements, half "
                  "the padding)";
      d.fixIts.clear();
    }
    addCallSiteNote(a, rc, d);
    setFrequencyImpact(m, a.expr, a.callSite, d);
    // What the conflict wastes: (n-1) of every n wavefronts of the access are replays, so a 2-way
    // conflict outside the hot loop is a note, the same conflict in the hottest code a warning.
    const double replays = (c.ways - 1.0) / c.ways;
    d.impact *= replays;
    d.impactText += fmt::format("; {}% of its wavefronts are replays", static_cast<int>(replays * 100 + 0.5));
    // The kernel's global accesses take longer than the replays the fix removes (bank_layout.cpp:
    // a DRAM sector is about 2.5 wavefronts' time on an H100) and overlap them: the time saved is
    // at most the replays' share of that.
    if (layout.smallGain && layout.globalSectors > 0) {
      const double saved = static_cast<double>(layout.before - layout.after);
      const double global = static_cast<double>(layout.globalSectors) * 2.5;
      d.impact *= std::min(1.0, saved / global);
      d.impactText += fmt::format("; the kernel's global accesses (about {:.0f} wavefronts' time per block) outweigh the "
                                  "{:.0f} replays the fix saves", global, saved);
    }
    // A conflict of fewer than `warn-ways` ways (default 3: a 2-way conflict, one replay per request)
    // is a note: judged on real code, never worth a change on its own (docs/rules/bank-conflict.md).
    if (c.ways < warnWays && d.severity != Severity::Note) {
      d.severity = Severity::Note;
      d.impactText += fmt::format("; a {}-way conflict (a note below {}-way: option warn-ways)", c.ways, warnWays);
    }
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
