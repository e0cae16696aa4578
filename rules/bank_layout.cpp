#include "rules/bank_layout.h"

#include <clang/AST/Expr.h>
#include <clang/AST/TypeLoc.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "rules/rule_util.h"

namespace gpuopt {

unsigned sharedWavefronts(const std::vector<int64_t>& addr, unsigned elemSize, const llvm::SmallVectorImpl<unsigned>& lanes) {
  const unsigned phase = elemSize <= 4 ? 32 : elemSize == 8 ? 16 : 8;
  static thread_local std::vector<std::pair<unsigned, int64_t>> v;  // (bank, word)
  unsigned total = 0;
  for (size_t p0 = 0; p0 < lanes.size();) {
    const unsigned group = lanes[p0] % 32 / phase;
    v.clear();
    size_t p = p0;
    for (; p < lanes.size() && lanes[p] % 32 / phase == group; ++p) {
      int64_t w0 = floorDiv(addr[lanes[p]], 4), w1 = floorDiv(addr[lanes[p]] + std::max(1u, elemSize) - 1, 4);
      for (int64_t w = w0; w <= w1; ++w) v.push_back({static_cast<unsigned>(((w % 32) + 32) % 32), w});
    }
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    unsigned worst = 1;
    for (size_t i = 0; i < v.size();) {
      size_t j = i;
      while (j < v.size() && v[j].first == v[i].first) ++j;
      worst = std::max<unsigned>(worst, static_cast<unsigned>(j - i));
      i = j;
    }
    total += worst;
    p0 = p;
  }
  return total;
}

namespace {

// One place the array is used: a full subscript `a[i0]...[in]`, outermost index first.
struct Site {
  std::vector<const clang::Expr*> idx;
};

// Collects every use of `vd` under `s`; false when one is not a full subscript of `dims` indices
// (a pointer to the array or to a row, sizeof, an address taken): moving elements would change it.
bool collectSites(const clang::Stmt* s, const clang::VarDecl* vd, size_t dims, std::vector<Site>& out) {
  if (!s) return true;
  if (const auto* ase = llvm::dyn_cast<clang::ArraySubscriptExpr>(s)) {
    std::vector<const clang::Expr*> idx;
    const clang::Expr* e = ase;
    while (const auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
      idx.push_back(a->getIdx());
      e = a->getBase()->IgnoreParenImpCasts();
    }
    const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e);
    if (ref && ref->getDecl() == vd) {
      if (idx.size() != dims) return false;
      std::reverse(idx.begin(), idx.end());
      out.push_back({idx});
      for (const auto* i : idx)
        if (!collectSites(i, vd, dims, out)) return false;
      return true;
    }
  }
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(s))
    if (ref->getDecl() == vd) return false;
  // The address of an element (`&a[0][0]`): pointer arithmetic from it assumes today's layout.
  if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(s); u && u->getOpcode() == clang::UO_AddrOf) {
    const clang::Expr* e = u->getSubExpr()->IgnoreParenImpCasts();
    while (const auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) e = a->getBase()->IgnoreParenImpCasts();
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e); ref && ref->getDecl() == vd) return false;
  }
  for (const clang::Stmt* c : s->children())
    if (!collectSites(c, vd, dims, out)) return false;
  return true;
}

// The declaration's array shape: extents outermost first and the element size in bytes.
bool arrayShape(const clang::VarDecl* vd, clang::ASTContext& ctx, std::vector<uint64_t>& dims, uint64_t& elemBytes) {
  clang::QualType t = vd->getType();
  while (const auto* at = ctx.getAsConstantArrayType(t)) {
    dims.push_back(at->getSize().getZExtValue());
    t = at->getElementType();
  }
  if (dims.size() < 2 || t->isIncompleteType() || t->isDependentType()) return false;
  elemBytes = static_cast<uint64_t>(ctx.getTypeSizeInChars(t).getQuantity());
  for (auto d : dims)
    if (d == 0) return false;
  return elemBytes > 0;
}

// The inner dimension's size expression in the declaration (`[TILE]`): what padding edits.
std::optional<clang::SourceRange> innerSizeRange(const clang::VarDecl* vd) {
  clang::TypeLoc tl = vd->getTypeSourceInfo() ? vd->getTypeSourceInfo()->getTypeLoc() : clang::TypeLoc();
  auto arr = tl.getAs<clang::ConstantArrayTypeLoc>();
  if (!arr) return std::nullopt;
  while (auto next = arr.getElementLoc().getAs<clang::ConstantArrayTypeLoc>()) arr = next;
  if (!arr.getSizeExpr()) return std::nullopt;
  return arr.getSizeExpr()->getSourceRange();
}

// Whether evaluating `s` twice could differ from once (an assignment, ++/--, a call); the reads of
// threadIdx/blockIdx (properties whose getters Clang calls) are plain reads.
bool mayWrite(const clang::Stmt* s) {
  if (!s) return false;
  if (const auto* p = llvm::dyn_cast<clang::PseudoObjectExpr>(s)) return mayWrite(p->getSyntacticForm());
  if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(s); u && u->isIncrementDecrementOp()) return true;
  if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(s); b && b->isAssignmentOp()) return true;
  if (llvm::isa<clang::CallExpr>(s)) return true;
  for (const clang::Stmt* c : s->children())
    if (mayWrite(c)) return true;
  return false;
}

bool simpleText(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
}
std::string paren(const std::string& s) { return simpleText(s) ? s : "(" + s + ")"; }

struct LayoutCosts {
  uint64_t total = 0;
  std::vector<uint64_t> perAccess;
};

}  // namespace

LayoutChange chooseSharedLayout(const KernelModel& m, const clang::VarDecl* vd, RuleContext& rc) {
  LayoutChange out;
  clang::ASTContext& ctx = m.ast();
  std::vector<uint64_t> dims;
  uint64_t S = 0;
  // A __shared__ array of this kernel itself (a file-scope one is shared with other kernels).
  if (!vd || !vd->isLocalVarDecl() || !arrayShape(vd, ctx, dims, S)) return out;
  const uint64_t C = dims.back();
  uint64_t elements = 1;
  for (auto d : dims) elements *= d;
  const uint64_t rows = elements / C;
  std::vector<Site> sites;
  if (!m.kernel()->getBody() || !collectSites(m.kernel()->getBody(), vd, dims.size(), sites) || sites.empty()) {
    out.hint = fmt::format("'{}' is also used other than as '{}[...]...[...]' (a pointer to it or to a row): no "
                           "layout change is offered, as moving its elements would change what that use reads",
                           vd->getName().str(), vd->getName().str());
    return out;
  }
  std::vector<const Access*> accesses;
  for (const auto& a : m.accesses()) {
    if (a.base != vd || a.space != MemSpace::Shared) continue;
    if (!a.known || a.data || !a.strideSym.empty()) return out;  // an address the model does not know
    accesses.push_back(&a);
  }
  if (accesses.empty()) return out;
  const int64_t rowBytes = static_cast<int64_t>(C * S);
  // The cost of every access under a layout (`move`: old byte address -> new), or nullopt when an
  // address falls outside the array (the model's values are then not a layout's to judge).
  auto costs = [&](auto move) -> std::optional<LayoutCosts> {
    LayoutCosts c;
    std::vector<int64_t> moved;
    for (const Access* a : accesses) {
      moved.assign(a->addr.size(), 0);
      uint64_t sum = 0;
      for (unsigned w = 0; w < m.warps(); ++w) {
        auto lanes = warpLanes(a->mask, w);
        if (lanes.empty()) continue;
        for (unsigned t : lanes) {
          int64_t addr = a->addr[t];
          if (addr < 0 || addr >= static_cast<int64_t>(elements * S)) return std::nullopt;
          int64_t i = addr / rowBytes, rem = addr % rowBytes;
          moved[t] = move(i, rem / static_cast<int64_t>(S), rem % static_cast<int64_t>(S));
        }
        sum += sharedWavefronts(moved, a->elemSize, lanes);
      }
      c.perAccess.push_back(sum);
      c.total += sum;
    }
    return c;
  };
  const int64_t s = static_cast<int64_t>(S);
  auto now = costs([&](int64_t i, int64_t j, int64_t r) { return i * rowBytes + j * s + r; });
  if (!now) return out;
  out.before = out.after = now->total;
  auto better = [&](const LayoutCosts& c) {
    for (size_t k = 0; k < c.perAccess.size(); ++k)
      if (c.perAccess[k] > now->perAccess[k]) return false;  // never make one access worse
    return c.total < out.after;
  };
  const std::string name = vd->getName().str();
  // Padding: up to one bank period (128 bytes) of extra row length, within the 48 KiB a block may
  // declare statically (when the array fitted before).
  auto dimRange = innerSizeRange(vd);
  // (The size may be a macro, `[TILE]`: its name in the declaration is what is edited. A
  // declaration a macro expands to is not edited.)
  const bool dimEditable = dimRange && !vd->getLocation().isMacroID() && rc.inLintedFile(vd->getLocation());
  for (uint64_t P = 1; dimEditable && P * S < 128; ++P) {
    if (rows * (C + P) * S > 48 * 1024 && elements * S <= 48 * 1024) break;
    const int64_t padded = static_cast<int64_t>((C + P) * S);
    auto c = costs([&](int64_t i, int64_t j, int64_t r) { return i * padded + j * s + r; });
    if (c && better(*c)) out.kind = LayoutChange::Kind::Pad, out.pad = static_cast<unsigned>(P), out.after = c->total;
  }
  // The XOR swizzle: 2-D, a power-of-two inner extent, every use rewritable in this file.
  bool swizzleOk = dims.size() == 2 && (C & (C - 1)) == 0 && C > 1 && dimEditable;
  for (const auto& site : sites)
    for (const auto* e : site.idx)
      swizzleOk = swizzleOk && !mayWrite(e) && !e->getBeginLoc().isMacroID() && !e->getEndLoc().isMacroID() && rc.inLintedFile(e->getBeginLoc()) &&
                  rc.span(e).endLine == rc.span(e).begin.line;
  if (swizzleOk) {
    auto c = costs([&](int64_t i, int64_t j, int64_t r) { return i * rowBytes + (j ^ (i % static_cast<int64_t>(C))) * s + r; });
    if (c && better(*c)) out.kind = LayoutChange::Kind::Swizzle, out.pad = 0, out.after = c->total;
  }
  // The kernel's global traffic, to say when the replays saved are unlikely to matter: one 32-byte
  // DRAM sector takes about as long as 2.5 shared-memory wavefronts of an SM (H100 SXM: 3.35 TB/s
  // over 132 SMs at 1.98 GHz is 12.8 bytes per SM and cycle; shared memory serves one wavefront per
  // cycle). The two overlap, so removing replays that take at most half the global accesses' time
  // hardly shows: the gain is called small then.
  for (const auto& a : m.accesses()) {
    if (a.space != MemSpace::Global || !a.known || a.data) continue;
    for (unsigned w = 0; w < m.warps(); ++w) {
      auto lanes = warpLanes(a.mask, w);
      std::vector<int64_t> sectors;
      for (unsigned t : lanes)
        for (int64_t x = floorDiv(a.addr[t], 32); x <= floorDiv(a.addr[t] + std::max(1u, a.elemSize) - 1, 32); ++x)
          sectors.push_back(x);
      std::sort(sectors.begin(), sectors.end());
      out.globalSectors += static_cast<uint64_t>(std::unique(sectors.begin(), sectors.end()) - sectors.begin());
    }
  }
  const uint64_t saved = out.before - out.after;
  const uint64_t globalAsWavefronts = out.globalSectors * 5 / 2;
  out.smallGain = out.kind != LayoutChange::Kind::None && 2 * saved <= globalAsWavefronts;
  const std::string count = fmt::format("{} shared-memory wavefronts per block instead of {} over its {} access{}",
                                        out.after, out.before, accesses.size(), accesses.size() == 1 ? "" : "es");
  const std::string small = out.smallGain
                                ? fmt::format("; the gain is likely small: the kernel's global accesses ({} sectors per "
                                              "block, about {} wavefronts' time on an H100) outweigh the {} saved",
                                              out.globalSectors, globalAsWavefronts, saved)
                                : std::string();
  if (out.kind == LayoutChange::Kind::Pad) {
    std::string old = rc.text(*dimRange);
    out.hint = fmt::format("pad the inner dimension of '{}' by {} element{} ('[{} + {}]'): {}, no access worse{}", name,
                           out.pad, out.pad == 1 ? "" : "s", old, out.pad, count, small);
    FixIt fx;
    fx.span = rc.span(*dimRange);
    fx.replacement = fmt::format("{} + {}", old, out.pad);
    out.edits.push_back(std::move(fx));
  } else if (out.kind == LayoutChange::Kind::Swizzle) {
    std::string cText = rc.text(*dimRange);
    out.hint = fmt::format("no padding of '{}' helps without making another access worse; XOR-swizzle its columns "
                           "(every '{}[i][j]' becomes '{}[i][j ^ (i % {})]'): {}{}",
                           name, name, name, cText, count, small);
    for (const auto& site : sites) {
      FixIt fx;
      fx.span = rc.span(site.idx[1]);
      fx.replacement = fmt::format("{} ^ ({} % {})", paren(rc.text(site.idx[1])), paren(rc.text(site.idx[0])), paren(cText));
      out.edits.push_back(std::move(fx));
    }
  } else if (out.before > 0) {
    out.hint = fmt::format("neither padding '{}' nor swizzling its columns lowers its conflicts without making another "
                           "access worse: change the index so that the lanes of a warp spread over all 32 banks",
                           name);
  }
  return out;
}

}  // namespace gpuopt
