#include "rules/uncoalesced_access.h"

#include <clang/AST/RecordLayout.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <map>
#include <set>

#include "rules/cost.h"
#include "analyzer/rule/rule_context.h"
#include "rules/host_util.h"
#include "rules/impact.h"
#include "rules/rule_util.h"

namespace gpuopt {

namespace {
// The most 32-byte sectors one element of a gather can touch: element k of an array whose start is
// sector-aligned (as cudaMalloc's are) begins at k * size bytes, a multiple of gcd(size, 32) into
// its sector, so a 12-byte vec3 can straddle two sectors and a 32-byte record never does.
unsigned sectorsPerElement(const Access& a) {
  const unsigned size = a.elemSize;
  const unsigned g = std::gcd(size, 32u);
  return (32 - g + size - 1) / 32 + 1;
}
}  // namespace

namespace {

struct Cost {
  const Access* a = nullptr;
  unsigned sectors = 0, ideal = 0, lanes = 0, warp = 0;
  unsigned distinct = 0;  // random accesses: lanes at addresses that may differ
  uint64_t tableBytes = 0;  // random accesses: the size of the array they index, when known
  bool random = false;
  bool oneBase = false;  // not known, but a known distance from one value for every lane (Access::addrOff)
  double ratio = 1.0;  // ideal / sectors (reported)
  double judged = 1.0; // what the threshold applies to (a partial warp is judged as a full one)
};
// Whether `s` reads gridDim, directly or through the initializers of the local variables it
// names (a few levels: `const int grid_stride = gridDim.x * blockDim.x * inc;`).
bool mentionsGridDim(const clang::Stmt* s, int depth) {
  if (!s || depth > 3) return false;
  // `gridDim.x`: a property of the builtin variable (its base is what names it).
  if (const auto* po = llvm::dyn_cast<clang::PseudoObjectExpr>(s)) return mentionsGridDim(po->getSyntacticForm(), depth);
  if (const auto* mp = llvm::dyn_cast<clang::MSPropertyRefExpr>(s)) return mentionsGridDim(mp->getBaseExpr(), depth);
  if (const auto* ov = llvm::dyn_cast<clang::OpaqueValueExpr>(s)) return mentionsGridDim(ov->getSourceExpr(), depth);
  if (const auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(s)) {
    if (dre->getDecl()->getName() == "gridDim") return true;
    if (const auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl()); vd && vd->isLocalVarDecl() && vd->getInit())
      return mentionsGridDim(vd->getInit(), depth + 1);
    return false;
  }
  for (const clang::Stmt* c : s->children())
    if (mentionsGridDim(c, depth)) return true;
  return false;
}

// A stride scaled by a parameter's stand-in (4096): `k * 'sym' + e` elements, or k bytes per
// 'sym' when the parameter scales a byte offset. Text of the distance and its unit.
struct SymbolicDistance {
  bool bytes = false;
  // No whole multiple of the symbol's stand-in in the distance (`row * 2 * n / (2 * n - 1)`: the
  // quotient of two stand-ins, xfaster's relShiftBd): it depends on the symbol some other way, and
  // the walk's figure is no form to print ("'seq_len * seq_len' + 8194 bytes").
  bool other = false;
  int64_t factor = 1, extra = 0;  // factor * sym + extra (elements, or bytes when `bytes`)
  std::string text(const std::string& sym) const {
    if (other) return fmt::format("a distance that depends on '{}'", sym);
    std::string s = factor == 1 ? fmt::format("'{}'", sym) : fmt::format("{} * '{}'", factor, sym);
    if (extra) s += fmt::format(" {} {}", extra > 0 ? "+" : "-", std::abs(extra));
    return s;
  }
};

// `symValue`: the symbol's own stand-in value (a parameter's 4096; 4096 * 4096 for a local made of
// two, `kernel_area = size * size`, which was printed as "4096 * 'kernel_area'": darknet's weight
// kernels, ninth stop check).
SymbolicDistance symbolicDistance(int64_t strideBytes, unsigned elemSize, int64_t symValue = 4096) {
  SymbolicDistance d;
  if (symValue <= 0) symValue = 4096;
  const int64_t q = static_cast<int64_t>(std::llround(static_cast<double>(strideBytes) / static_cast<double>(symValue)));
  const int64_t r = strideBytes - q * symValue;
  if (q == 0) {
    d.other = true;
  } else if (q % elemSize == 0 && r % elemSize == 0) {
    d.factor = q / elemSize, d.extra = r / elemSize;
  } else {
    d.bytes = true, d.factor = q == 0 ? 1 : q, d.extra = r;
  }
  return d;
}
// The index divides or takes a remainder by something other than a constant, itself or through
// the initializers of the locals it names (`r = idx / cols, col = idx % cols`): its threads wrap
// from row to row at a run-time width, so the grid covers the rows' neighbours too (a transpose by
// index), whatever the model's stand-in for the width gave.
bool wrapsAtRunTime(const clang::ASTContext& ctx, const clang::Stmt* s, int depth = 0) {
  if (!s || depth > 6) return false;
  if (const auto* bo = llvm::dyn_cast<clang::BinaryOperator>(s)) {
    const auto op = bo->getOpcode();
    if ((op == clang::BO_Div || op == clang::BO_Rem || op == clang::BO_DivAssign || op == clang::BO_RemAssign) &&
        !bo->getRHS()->isValueDependent() && !bo->getRHS()->isIntegerConstantExpr(ctx))
      return true;
  }
  if (const auto* dr = llvm::dyn_cast<clang::DeclRefExpr>(s))
    if (const auto* vd = llvm::dyn_cast<clang::VarDecl>(dr->getDecl()); vd && vd->isLocalVarDecl() && vd->getInit())
      return wrapsAtRunTime(ctx, vd->getInit(), depth + 1);
  for (const clang::Stmt* c : s->children())
    if (wrapsAtRunTime(ctx, c, depth)) return true;
  return false;
}

// The access's addresses over the whole grid lie on one strided line: thread t of a 1-D block at
// the first one's address plus S * t (|S| at least a sector), the next block S * threads further
// on, no other block axis moving it. No thread of the grid touches the elements between them (a
// column of a row-major array: a halo, a matrix's one column), so no tile can be staged through
// shared memory to coalesce it: only the layout can.
bool oneStridedLine(const KernelModel& m, const Access& a) {
  if (!a.known || !a.blockLinear || m.threads() != m.blockX() || a.addr.size() < m.threads()) return false;
  if (wrapsAtRunTime(m.ast(), a.expr)) return false;
  std::optional<unsigned> t0;
  int64_t S = 0;
  for (unsigned t = 0; t < m.threads(); ++t) {
    if (t >= a.mask.size() || !a.mask[t]) continue;
    if (!t0) {
      t0 = t;
      continue;
    }
    const int64_t d = a.addr[t] - a.addr[*t0];
    const int64_t n = static_cast<int64_t>(t - *t0);
    if (!S) {
      if (d % n) return false;
      S = d / n;
      if (std::abs(S) < 32) return false;
    }
    if (d != S * n) return false;
  }
  if (!t0 || !S) return false;
  for (unsigned t = 0; t < m.threads(); ++t) {
    if (t >= a.mask.size() || !a.mask[t]) continue;
    if (t < a.stepX.size() && a.stepX[t] != S * static_cast<int64_t>(m.threads())) return false;
    if (t < a.stepY.size() && a.stepY[t] != 0) return false;
  }
  return true;
}
// An access at one element per thread along threadIdx.x with nothing else moving it: not in a
// loop (of its function or around the call that reached it), the same address for threads that
// differ only in threadIdx.y/z, and no move with blockIdx.y (its steps, or, where the walk kept
// none, a kernel that never reads blockIdx.y or blockIdx.z).
bool oneElementPerThread(const KernelModel& m, const Access& a) {
  auto& ctx = m.ast();
  // In a loop, only a grid-stride loop (one loop, a `for` whose step is made from gridDim:
  // `i += gridDim.x * blockDim.x * inc`, kaldi's _vec_transform_reduce): each thread still touches
  // one element per iteration, the whole grid's span further on. A loop along the row
  // (`a[i * ld + j]`) is what threadIdx.x could index instead.
  auto noLoopButGridStride = [&](const clang::Stmt* s) {
    const clang::Stmt* loop = host::enclosingLoop(ctx, s);
    if (!loop) return true;
    const auto* f = llvm::dyn_cast<clang::ForStmt>(loop);
    return f && f->getInc() && !host::enclosingLoop(ctx, loop) && mentionsGridDim(f->getInc(), 0);
  };
  // Reached through a helper: no loop in the helper (one around the access that is not the one
  // around the call), and around the call in the kernel at most the grid-stride loop (the load
  // of `op.transform(v[i])` with a reference parameter is made in the call).
  if (a.callSite) {
    const clang::Stmt* inner = host::enclosingLoop(ctx, a.expr);
    if (inner && inner != host::enclosingLoop(ctx, a.callSite)) return false;
    if (!noLoopButGridStride(a.callSite)) return false;
  } else if (!noLoopButGridStride(a.expr)) {
    return false;
  }
  // The thread walks a run next to this element in a loop elsewhere (`float m = b[0]; for (i = 1;
  // i < width; ++i) ... b[i]`, held-out wave 4: marian's pooling): another access to the same array
  // at a fixed distance, less than the lanes' stride, for every lane.
  {
    auto lanes = warpLanes(a.mask, 0);
    for (unsigned w = 1; w < m.warps() && lanes.size() < 2; ++w) lanes = warpLanes(a.mask, w);
    if (lanes.size() >= 2 && a.known) {
      const int64_t laneStride = std::abs(a.addr[lanes[1]] - a.addr[lanes[0]]);
      for (const auto& b : m.accesses()) {
        if (&b == &a || b.expr == a.expr || b.base != a.base || !b.known || b.addr.size() != a.addr.size()) continue;
        if (!host::enclosingLoop(ctx, b.expr)) continue;
        bool all = true;
        int64_t d = 0;
        for (size_t k = 0; k < lanes.size() && all; ++k) {
          unsigned t = lanes[k];
          if (!b.mask[t]) all = false;
          else if (k == 0) d = b.addr[t] - a.addr[t];
          else all = b.addr[t] - a.addr[t] == d;
        }
        if (all && d != 0 && std::abs(d) < laneStride) return false;
      }
    }
  }
  // No move with blockIdx.y/z: the kernel does not read them, or the address's steps say so. A
  // blockIdx.y read only in the block's linear place in a 2-D grid (`(blockIdx.x + blockIdx.y *
  // gridDim.x) * blockDim.x + threadIdx.x`, darknet's cuda_gridsize launches, ninth stop check)
  // moves the address the way blockIdx.x does, along the same stride.
  const bool linearY = m.blockAxisLinearOnly(1) && (!m.usesBlockAxis(2) || m.blockAxisLinearOnly(2));
  const bool steps = a.stepY.size() == a.addr.size();
  if (!steps && !linearY && (m.usesBlockAxis(1) || m.usesBlockAxis(2))) return false;
  std::map<unsigned, int64_t> byX;
  for (unsigned t = 0; t < a.addr.size(); ++t) {
    if (!a.mask[t]) continue;
    if (steps && !linearY && a.stepY[t] != 0) return false;
    auto [it, fresh] = byX.emplace(m.tx(t), a.addr[t]);
    if (!fresh && it->second != a.addr[t]) return false;
  }
  return true;
}
}  // namespace

void UncoalescedAccessRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  const double maxEfficiency = rc.option(kInfo, "max-efficiency", 0.5);  // flag at or below
  const unsigned minLanes = static_cast<unsigned>(rc.option(kInfo, "min-lanes", 4));
  // Gathers and scatters through an index loaded from memory whose spread the code does not give
  // (`a[idx[i]]`): how many sectors a warp touches is the data's. Judged on held-out code they were
  // mostly not what the data does (tenth and eleventh stop checks: 12 of 33 such notes real, 4
  // strictly right: region maps, cell-sorted particles, compacted batches give neighbouring lanes
  // the same or nearby entries), so they are said only when asked (`data-dependent: 1`).
  const bool dataDependent = rc.option(kInfo, "data-dependent", 0) != 0;
  dumpCostIfAsked(m, rc);  // bench/impact_rank.py's per-line estimates (GPUOPT_COST_DUMP)
  // One finding per source expression: the load and the store of `a[i] += v` are one place.
  std::map<const clang::Expr*, Cost> worst;
  std::vector<const clang::Expr*> order;
  std::map<const clang::Expr*, std::pair<bool, bool>> readWrite;  // the expression's accesses: loaded, stored
  // Accesses the compiler removes: a load of what the same thread stored just before (the value is
  // still in a register) and a store the same thread overwrites just after, with nothing between
  // that could read or write the word another way (`b[i] = 0; b[i] ^= x; b[i] = swab(b[i]);`
  // compiles to one store per word: ccminer's luffa output, seventh stop check, PTX read by the
  // judge). An expression all of whose accesses are removed is not judged.
  const std::vector<Access>& all = m.accesses();
  auto sameWords = [&](const Access& x, const Access& y) {
    if (x.base != y.base || x.elemSize != y.elemSize || !x.known || !y.known || x.epoch != y.epoch) return false;
    bool any = false;
    for (unsigned t = 0; t < m.threads(); ++t) {
      if (!x.mask[t]) continue;
      if (!y.mask[t] || x.addr[t] != y.addr[t]) return false;
      any = true;
    }
    return any;
  };
  auto plainGlobal = [](const Access& x) { return x.space == MemSpace::Global && !x.isAtomic && !x.isVolatile; };
  std::vector<bool> elided(all.size(), false);
  constexpr size_t kWindow = 64;
  for (size_t i = 0; i < all.size(); ++i) {
    const Access& a = all[i];
    if (!plainGlobal(a) || !a.known) continue;
    if (a.isRead && !a.isWrite) {
      // Back to the store it reads, through nothing but other plain accesses of other words.
      for (size_t j = i; j-- > 0 && i - j <= kWindow;) {
        const Access& w = all[j];
        if (w.space != MemSpace::Global) continue;
        if (!plainGlobal(w)) break;
        if (w.isWrite && sameWords(w, a)) {
          elided[i] = true;
          break;
        }
        if (w.isWrite) break;  // another store: it may alias
      }
    } else if (a.isWrite && !a.isRead) {
      // Forward to a store of the same words, through reads of them by the same thread only.
      for (size_t j = i + 1; j < all.size() && j - i <= kWindow; ++j) {
        const Access& w = all[j];
        if (w.space != MemSpace::Global) continue;
        if (!plainGlobal(w)) break;
        if (w.isWrite && !w.isRead && sameWords(a, w)) {
          elided[i] = true;
          break;
        }
        if (w.isRead && !sameWords(a, w)) break;  // a read of other words: it may alias
        if (w.isWrite) break;
      }
    }
  }
  std::map<const clang::Expr*, std::pair<unsigned, unsigned>> elidedOf;  // expression -> (elided, all)
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].space == MemSpace::Global) {
      auto& e = elidedOf[all[i].expr];
      e.first += elided[i] ? 1 : 0;
      ++e.second;
    }
  for (const auto& a : m.accesses()) {
    if (a.space != MemSpace::Global || a.isAtomic || a.elemSize == 0) continue;
    if (!rc.inLintedFile(a.expr->getBeginLoc())) continue;
    if (!a.known && !a.data) continue;
    if (auto e = elidedOf.find(a.expr); e != elidedOf.end() && e->second.first == e->second.second) continue;
    // Under a selection by a distinct key (`if (cols[e] == row)`): at most one lane of a warp
    // performs it, one sector (held-out wave 3: AMGX's greedy selector).
    if (!a.selectGuards.empty() || !a.warpSelectGuards.empty()) continue;
    auto& rw = readWrite[a.expr];
    rw.first = rw.first || a.isRead;
    rw.second = rw.second || a.isWrite;
    if (recordCoverage(m, a, nullptr, /*acrossIterations=*/true) * 2 > 1.0) continue;  // more than half of each record is used
    for (unsigned w = 0; w < m.warps(); ++w) {
      auto lanes = warpLanes(a.mask, w);
      if (lanes.size() < minLanes) continue;
      Cost c;
      c.a = &a;
      c.lanes = static_cast<unsigned>(lanes.size());
      c.warp = w;
      c.ideal = static_cast<unsigned>((lanes.size() * a.elemSize + 31) / 32);
      // A partial warp (one side of a branch) is judged against what a full warp's contiguous
      // access would touch: the other lanes' sectors are usually fetched by the other path.
      unsigned fullWarpIdeal = static_cast<unsigned>((32 * a.elemSize + 31) / 32);
      if (!a.known) {
        c.random = true;
        // Lanes whose addresses the model numbers equal touch one address (an index loaded once
        // per warp); every other lane may touch its own.
        unsigned distinct = static_cast<unsigned>(lanes.size());
        if (!a.addrTag.empty()) {
          llvm::SmallVector<uint64_t, 32> tags;
          unsigned untagged = 0;
          for (unsigned t : lanes)
            if (a.addrTag[t]) tags.push_back(a.addrTag[t]);
            else ++untagged;
          llvm::sort(tags);
          distinct = untagged + static_cast<unsigned>(std::unique(tags.begin(), tags.end()) - tags.begin());
        }
        if (distinct < minLanes) continue;  // a few addresses per warp: little to gain
        // An index of 8 bits (`LUT[regions[i]]` with a byte region map: mumax's per-region
        // parameter tables, tenth stop check): the table has at most 256 entries, here at most
        // 4 KiB, which stays in L1; at worst the gather costs L1 replays, and the usual such map
        // (regions, classes, labels) gives neighbouring lanes the same entry. Nothing to gain
        // that the code can count on: not said.
        if (const auto* ase = llvm::dyn_cast<clang::ArraySubscriptExpr>(a.expr->IgnoreParenImpCasts())) {
          const clang::QualType it = ase->getIdx()->IgnoreParenImpCasts()->getType();
          if (it->isIntegerType() && !it->isDependentType() && m.ast().getTypeSize(it) <= 8 && 256 * a.elemSize <= 4096)
            continue;
        }
        c.distinct = distinct;
        c.ideal = static_cast<unsigned>((distinct * a.elemSize + 31) / 32);
        // Each lane's element may start anywhere its alignment allows: a 12-byte vec3 (4-byte
        // aligned) can straddle two sectors, so a gather of them touches up to 2 per lane, not 1
        // (sixth stop check: gsplat's vec3 gathers).
        c.sectors = static_cast<unsigned>(distinct * sectorsPerElement(a));
        // A gather cannot touch more sectors than the array it indexes has (a 16-entry lookup
        // table is two sectors, all in L1 after the first warp): a fixed-size array, or a buffer
        // every launch allocates with a compile-time size.
        uint64_t bytes = m.allocatedBytes(a.base);
        if (const auto* vd = llvm::dyn_cast_or_null<clang::VarDecl>(a.base); vd && vd->getType()->isConstantArrayType())
          bytes = m.ast().getTypeSizeInChars(vd->getType()).getQuantity();
        if (bytes) {
          c.sectors = std::min<unsigned>(c.sectors, static_cast<unsigned>((bytes + 31) / 32 + 1));
          c.tableBytes = bytes;
        }
        // Addresses a known distance from a few loaded values (`table[token * width + col]`, the
        // token one per row and the lanes along the row): each group of lanes with one base touches
        // the sectors its distances span (assuming the base sector-aligned, as for a known address;
        // a misaligned one costs a sector more per group).
        if (a.addrBase.size() == lanes.size() || a.addrBase.size() == m.threads()) {
          std::map<uint64_t, llvm::SmallVector<int64_t, 32>> groups;
          bool all = true;
          for (unsigned t : lanes) {
            if (t >= a.addrBase.size() || !a.addrBase[t]) {
              all = false;
              break;
            }
            groups[a.addrBase[t]].push_back(a.addrOff[t]);
          }
          if (all) {
            unsigned grouped = 0;
            for (auto& [b, offs] : groups) {
              // A group of one address (each lane its own loaded base): one element wherever its
              // alignment puts it, as for any gather.
              if (std::all_of(offs.begin(), offs.end(), [&](int64_t o) { return o == offs[0]; })) {
                grouped += sectorsPerElement(a);
                continue;
              }
              int64_t lo = *std::min_element(offs.begin(), offs.end());
              llvm::SmallVector<int64_t, 64> sec;
              for (int64_t o : offs)
                for (int64_t s = floorDiv(o - lo, 32); s <= floorDiv(o - lo + a.elemSize - 1, 32); ++s) sec.push_back(s);
              llvm::sort(sec);
              grouped += static_cast<unsigned>(std::unique(sec.begin(), sec.end()) - sec.begin());
            }
            c.sectors = std::min(c.sectors, grouped);
            // One base for the whole warp (`rows[base + lane * 32]`, base loaded once per warp):
            // the lanes' distances are known, so the access is judged by its stride, not as a gather.
            if (groups.size() == 1) c.random = false, c.oneBase = true;
          }
        }
        // Addresses that move at most stepBound bytes from lane to lane (output positions from a
        // prefix sum of flags: stream compaction) span at most (lanes - 1) * stepBound + size bytes.
        if (a.stepBound > 0) {
          uint64_t span = (lanes.size() - 1) * static_cast<uint64_t>(a.stepBound) + a.elemSize;
          c.sectors = std::min<unsigned>(c.sectors, static_cast<unsigned>((span + 31) / 32 + 1));
        }
      } else {
        llvm::SmallVector<int64_t, 64> sec;
        for (unsigned t : lanes)
          for (int64_t s = floorDiv(a.addr[t], 32); s <= floorDiv(a.addr[t] + a.elemSize - 1, 32); ++s) sec.push_back(s);
        llvm::sort(sec);
        c.sectors = static_cast<unsigned>(std::unique(sec.begin(), sec.end()) - sec.begin());
        // Neighbouring lanes at neighbouring elements: coalesced, at most one sector more than
        // the bytes need when the start is not sector-aligned (misalignment alone is not reported:
        // it depends on run-time offsets and costs one sector, see the rule's doc).
        // (Also in reverse, `a[n - 1 - lane]`: the sectors a warp touches do not depend on the order.)
        bool contiguous = lanes.size() >= 2, reversed = lanes.size() >= 2;
        for (size_t i = 1; i < lanes.size() && (contiguous || reversed); ++i) {
          const int64_t step = static_cast<int64_t>((lanes[i] - lanes[i - 1]) * a.elemSize);
          contiguous = contiguous && a.addr[lanes[i]] - a.addr[lanes[i - 1]] == step;
          reversed = reversed && a.addr[lanes[i]] - a.addr[lanes[i - 1]] == -step;
        }
        contiguous = contiguous || reversed;
        if (contiguous && c.sectors <= (lanes.size() * a.elemSize + 31) / 32 + 1) continue;
      }
      c.ratio = c.sectors ? static_cast<double>(c.ideal) / c.sectors : 1.0;
      c.judged = c.random ? c.ratio : std::min(1.0, static_cast<double>(std::max(c.ideal, fullWarpIdeal)) / c.sectors);
      const clang::Expr* key = a.expr;
      auto it = worst.find(key);
      if (it == worst.end()) {
        order.push_back(key);
        worst[key] = c;
      } else if (c.judged < it->second.judged) {
        it->second = c;
      }
    }
  }
  for (const auto& key : order) {
    const Cost& c = worst[key];
    // Only what is really wasteful: a gather of whole 32-byte records, or one into a table of a few
    // sectors, is as efficient as a contiguous access.
    if (c.judged > maxEfficiency + 1e-9) continue;
    const Access& a = *c.a;
    if (c.random && a.stepBound <= 0 && !dataDependent) continue;
    auto [loaded, stored] = readWrite[key];
    std::string kind = loaded && stored ? "load/store" : stored ? "store" : "load";
    if (!a.instruction.empty()) kind += " (inline PTX '" + a.instruction + "')";
    bool storeOnly = stored && !loaded;
    std::string what = rc.text(a.expr);
    std::string msg;
    std::string fix;
    bool inherent = false;
    bool widening = false;  // lanes ever further apart (set below)
    if (c.random && a.stepBound > 0) {
      // Positions from a prefix sum or a rank among voters, spread by a factor.
      msg = fmt::format("data-dependent global {} '{}': neighbouring lanes' positions differ by 0 to {} elements (a "
                        "rank or prefix sum, scaled), so a warp touches up to {} sectors for {} useful ({:.1f}% efficiency)",
                        kind, what, a.stepBound / std::max<int64_t>(1, a.elemSize), c.sectors, c.ideal, 100.0 * c.ratio);
      fix = "store the selected elements next to each other (the rank itself as the index), or stage them in shared "
            "memory and write them out contiguously";
    } else if (c.random) {
      msg = fmt::format("data-dependent (random) global {} '{}': the index comes from memory, so lanes of a warp "
                        "touch unrelated addresses, up to {} sectors for {} useful ({:.1f}% efficiency)",
                        kind, what, c.sectors, c.ideal, 100.0 * c.ratio);
      fix = storeOnly ? "make neighbouring threads write neighbouring elements (sort or bucket the values by "
                        "destination first), or stage them in shared memory and write each destination's run out "
                        "together"
                      : "make neighbouring threads read neighbouring elements (sort or bucket the indices), or gather "
                        "through shared memory; read-only gathers can go through __ldg";
      // A table that fits in L1 (64 KiB measured flat on the H100): no DRAM traffic, but replays.
      if (c.tableBytes && c.tableBytes <= 65536) {
        msg += fmt::format("; the table is {} bytes and stays in L1, so the cost is L1 replays, not DRAM traffic "
                           "(measured on H100: 1.7x a contiguous read, against 6.1x for a 256 MiB table)",
                           c.tableBytes);
        fix = "copy the table into shared memory once per block (a gather from shared memory costs bank conflicts "
              "only), or sort the indices";
      }
    } else {
      auto lanes = warpLanes(a.mask, c.warp);
      auto addrOf = [&](unsigned t) { return c.oneBase ? a.addrOff[t] : a.addr[t]; };
      // Constant distance between adjacent threads of the same block row?
      bool constStride = false, first = true;
      int64_t stride = 0;
      for (size_t i = 1; i < lanes.size(); ++i) {
        if (m.ty(lanes[i]) != m.ty(lanes[i - 1]) || m.tz(lanes[i]) != m.tz(lanes[i - 1])) continue;
        int64_t d = (addrOf(lanes[i]) - addrOf(lanes[i - 1])) / static_cast<int64_t>(lanes[i] - lanes[i - 1]);
        if (first) stride = d, constStride = true, first = false;
        else if (d != stride) constStride = false;
      }
      // Lanes ever further apart (`((i + 1) * (i + 2)) / 2 - 1`, the diagonal of a packed
      // triangle): the index grows faster than the thread index, in one direction.
      widening = !constStride && !first && lanes.size() >= 3;
      {
        int64_t prev = 0;
        bool any = false;
        for (size_t i = 1; i < lanes.size() && widening; ++i) {
          if (m.ty(lanes[i]) != m.ty(lanes[i - 1]) || m.tz(lanes[i]) != m.tz(lanes[i - 1])) continue;
          int64_t d = addrOf(lanes[i]) - addrOf(lanes[i - 1]);
          if (d <= 0 || (any && d < prev)) widening = false;
          prev = d, any = true;
        }
      }
      // Lanes in groups of g at consecutive elements, the groups apart (an mma C fragment's store:
      // lanes 4r..4r+3 write one row's 16 bytes, rows 'N' apart): said as groups, not as if every
      // pair of adjacent threads were that far apart (LeetCUDA hgemm, fifth stop check).
      // The lanes of a group may also step by a constant wider than the element (a warp tile's
      // result store: lanes 4r..4r+3 each write their own 8-float strip of row r; SGEMM
      // warptiling, held-out SGEMM_CUDA): groups of lanes `inStep` bytes apart.
      unsigned group = 0;
      int64_t groupStep = 0;
      int64_t inStep = static_cast<int64_t>(a.elemSize);
      if (!constStride && lanes.size() >= 4) {
        if (lanes[1] == lanes[0] + 1 && m.ty(lanes[1]) == m.ty(lanes[0]) && m.tz(lanes[1]) == m.tz(lanes[0])) {
          const int64_t d = addrOf(lanes[1]) - addrOf(lanes[0]);
          if (d > static_cast<int64_t>(a.elemSize) && d < 4096) inStep = d;
        }
        unsigned run = 1;
        bool ok = true;
        for (size_t i = 1; i <= lanes.size() && ok; ++i) {
          const bool next = i < lanes.size() && lanes[i] == lanes[i - 1] + 1 && m.ty(lanes[i]) == m.ty(lanes[i - 1]) &&
                            m.tz(lanes[i]) == m.tz(lanes[i - 1]) && addrOf(lanes[i]) - addrOf(lanes[i - 1]) == inStep;
          if (next) { ++run; continue; }
          if (!group) group = run;
          else if (run != group) ok = false;
          run = 1;
        }
        if (!ok || group < 2 || group >= lanes.size()) group = 0;
        if (group) {
          groupStep = addrOf(lanes[group]) - addrOf(lanes[0]);
          for (size_t i = 2 * group; i < lanes.size() && group; i += group)
            if (addrOf(lanes[i]) - addrOf(lanes[i - group]) != groupStep) group = 0;
        }
      }
      std::string pattern;
      // The parameter's stand-in (4096) scales the index in elements (`a[i * ld]`, `a[i * ld + i]`)
      // or in bytes (a byte stride held in a struct: `(char*)a.data + i * a.strides`, NVIDIA warp's
      // array_t).
      bool symbolicStride = !a.strideSym.empty() && (!constStride || std::abs(stride) >= 4096);
      // A stride made from gridDim where the launch's grid is known only at run time: the walk's
      // stand-in grid is not a figure to print ("256 elements apart" for `lane * gridDim.x * 4`).
      // Said per block of the grid, possible, with the smallest grid the sector count holds for.
      int64_t gridStandIn = 0, perBlock = 0;
      if (!symbolicStride && constStride && stride != 0 && a.strideSym.rfind("gridDim.", 0) == 0 && a.strideSym.size() > 8) {
        const int axis = a.strideSym[8] - 'x';
        gridStandIn = axis >= 0 && axis < 3 ? m.gridStandIn(axis) : 0;
        if (gridStandIn > 0 && stride % (gridStandIn * static_cast<int64_t>(a.elemSize)) == 0)
          perBlock = std::abs(stride) / (gridStandIn * static_cast<int64_t>(a.elemSize));
        else
          gridStandIn = 0;
      }
      SymbolicDistance sd;
      if (symbolicStride && constStride) sd = symbolicDistance(stride, a.elemSize, a.strideVal);
      const bool strided = group && inStep != static_cast<int64_t>(a.elemSize);
      std::string groups;
      // Distances in the declared element (the float of a float array read as float4) where the
      // access is not inline PTX: the unit the code's own strides count in.
      const int64_t declared = a.instruction.empty() ? declaredElementSize(a) : 0;
      const unsigned unit = declared > 0 ? static_cast<unsigned>(declared) : a.elemSize;
      if (strided && inStep % unit == 0)
        groups = fmt::format("groups of {} adjacent threads {} elements apart{}, ", group, inStep / unit,
                             unit == a.elemSize ? std::string() : fmt::format(" ({}-byte accesses)", a.elemSize));
      else if (strided)
        groups = fmt::format("groups of {} adjacent threads {} bytes apart for {}-byte accesses, ", group, inStep, a.elemSize);
      else if (group)
        groups = fmt::format("groups of {} adjacent threads access {} contiguous bytes, ", group, group * a.elemSize);
      if (group && symbolicStride && !constStride) {
        const SymbolicDistance gd = symbolicDistance(groupStep, unit, a.strideVal);
        pattern = gd.other ? fmt::format("{}the groups {} apart", groups, gd.text(a.strideSym))
                           : fmt::format("{}the groups {} {} apart", groups, gd.text(a.strideSym), gd.bytes ? "bytes" : "elements");
      }
      else if (group && !a.strideSym.empty())
        pattern = fmt::format("{}each group a step of '{}' from the last", groups, a.strideSym);
      else if (group)
        pattern = fmt::format("{}the groups {} bytes apart", groups, groupStep);
      else if (gridStandIn > 0)
        pattern = perBlock == 1 ? fmt::format("adjacent threads are '{}' elements apart", a.strideSym)
                                : fmt::format("adjacent threads are {} x '{}' elements apart", perBlock, a.strideSym);
      else if (symbolicStride && constStride) pattern = sd.other ? fmt::format("adjacent threads are {} apart", sd.text(a.strideSym))
                                                                       : fmt::format("adjacent threads are {} {} apart", sd.text(a.strideSym), sd.bytes ? "bytes" : "elements");
      else if (symbolicStride) pattern = fmt::format("adjacent threads are '{}' elements apart", a.strideSym);
      else if (constStride && stride % a.elemSize == 0 && a.instruction.empty() && declaredElementSize(a) == a.elemSize) pattern = fmt::format("adjacent threads are {} elements apart", stride / a.elemSize);
      else if (constStride) pattern = fmt::format("adjacent threads are {} bytes apart for {}-byte accesses", stride, a.elemSize);
      else if (widening) pattern = "adjacent threads are ever further apart (the index grows faster than the thread index)";
      else pattern = "the lanes' addresses are scattered";
      // Contiguous along x, but the block narrower than a warp: each warp covers several rows, each
      // a few bytes of its own sectors (jetson-utils' 8x8 image kernels on 1- and 3-byte pixels,
      // tenth stop check). The cause is the block's width, not the index.
      unsigned rowsPerWarp = 0;
      if (constStride && !symbolicStride && gridStandIn == 0 && !group && lanes.size() >= 2 &&
          stride == static_cast<int64_t>(a.elemSize) && m.blockX() < 32 && m.ty(lanes.front()) != m.ty(lanes.back()))
        rowsPerWarp = static_cast<unsigned>(m.ty(lanes.back()) - m.ty(lanes.front())) + 1;
      // Where each row's few bytes start in their sector is the block's (and the row length's)
      // business: rows of 24 bytes touch 1 or 2 sectors each. The count is said as the range over
      // every start the element's alignment allows, the walk's own block being one of them
      // (jetson-utils' uchar3 kernels: "8 sectors" was the worst of 4 to 8).
      unsigned fewest = c.sectors, most = c.sectors;
      if (rowsPerWarp > 1) {
        pattern = fmt::format("adjacent threads are 1 element apart, but the block is {0} threads wide, so a warp covers "
                              "{1} rows of {0} elements ({2} bytes each)", m.blockX(), rowsPerWarp, m.blockX() * a.elemSize);
        const unsigned align = (a.elemSize & (a.elemSize - 1)) == 0 ? std::min(a.elemSize, 32u) : 1u;
        for (unsigned shift = 0; shift < 32; shift += align) {
          llvm::SmallVector<int64_t, 64> sec;
          for (unsigned t : lanes)
            for (int64_t s = floorDiv(a.addr[t] + shift, 32); s <= floorDiv(a.addr[t] + shift + a.elemSize - 1, 32); ++s)
              sec.push_back(s);
          llvm::sort(sec);
          const unsigned n = static_cast<unsigned>(std::unique(sec.begin(), sec.end()) - sec.begin());
          fewest = std::min(fewest, n), most = std::max(most, n);
        }
      }
      if (c.oneBase) pattern += " from a base known only at run time";
      // A stride that is a run-time value (a parameter's stand-in): the figure holds for the value
      // assumed, so the finding is possible, with its assumption (precision sample s5: ggml im2col's
      // 'stride_x', an element stride that is 1 for contiguous inputs).
      const std::string touches =
          fewest == most ? fmt::format("{} sectors for {} useful ({:.1f}% efficiency)", c.sectors, c.ideal, 100.0 * c.ratio)
                         : fmt::format("{} to {} sectors for {} useful ({:.1f}% to {:.1f}% efficiency, by where its rows "
                                       "start in their sectors)",
                                       fewest, most, c.ideal, 100.0 * c.ideal / most, 100.0 * c.ideal / fewest);
      msg = fmt::format("{}uncoalesced global {} '{}': a warp touches {}; {}",
                        symbolicStride || gridStandIn > 0 ? "possible " : "", kind, what, touches, pattern);
      if (gridStandIn > 0) {
        // Lanes a sector or more apart from this grid size on (each lane its own sector).
        const int64_t atLeast = std::max<int64_t>(1, (32 + perBlock * a.elemSize - 1) / (perBlock * a.elemSize));
        msg += fmt::format(" (counted for '{}' >= {}; the launch's grid is known only at run time)", a.strideSym, atLeast);
      }
      bool member = llvm::isa<clang::MemberExpr>(a.expr->IgnoreParenImpCasts());
      if (member && constStride && stride > static_cast<int64_t>(a.elemSize))
        fix = "use a structure of arrays (one array per field), or load whole elements with a vector type";
      else if (strided)
        fix = fmt::format("interleave the lanes along the row (lane l of a group takes the {2}-byte pieces l, l + {0}, "
                          "... of the row rather than a strip of its own, so that one access of the group covers "
                          "contiguous bytes){1}",
                          group, a.elemSize < 16 ? ", or widen each lane's access to 16 bytes of its strip (a float4 "
                                                   "or int4 load or store)" : "", a.elemSize);
      else if (group)
        fix = fmt::format("let each group of lanes cover whole 32-byte sectors (more lanes or wider accesses along the "
                          "contiguous dimension, {} bytes per group today), or stage the tile through shared memory and "
                          "write it out in full rows", group * a.elemSize);
      else if (rowsPerWarp > 1) {
        const unsigned threads = m.blockX() * m.blockY();
        fix = fmt::format("make the block at least 32 threads wide along x{}, so that each warp covers {} contiguous "
                          "bytes of one row",
                          threads % 32 == 0 ? fmt::format(" (dim3(32, {}) keeps its {} threads)", threads / 32, threads) : "",
                          32 * a.elemSize);
      } else
        fix = "let threadIdx.x index the contiguous dimension (swap the index roles), or load tiles coalesced into "
              "shared memory and read them transposed there (corner turning)";
      if (symbolicStride) {
        const bool plain = !group && (!constStride || (sd.factor == 1 && sd.extra == 0));
        if (plain && sd.bytes)
          msg += fmt::format(" (counted for '{0}' >= {1}, a value known only at run time; for '{0}' = {2}, the "
                             "element size, the access is coalesced)", a.strideSym, 8 * a.elemSize, a.elemSize);
        else if (plain)
          msg += fmt::format(" (counted for '{0}' >= 8, a value known only at run time; for '{0}' = 1 the access is "
                             "coalesced)", a.strideSym);
        else
          msg += fmt::format(" (counted for '{}' >= 8, a value known only at run time)", a.strideSym);
        // One element per thread along a run-time stride, with nothing else to give the lanes: no
        // loop moves the address and only threadIdx.x does (a column, a diagonal, a BLAS-style
        // strided vector; held-out wave 3: kaldi's _set_diag, _copy_col_from_mat_df,
        // _cublas_copy_kaldi). No thread order coalesces it in this kernel: what costs is the
        // callers' stride or the data's layout, which the code here does not give. A note.
        if (constStride && oneElementPerThread(m, a)) {
          // A stride read from an array of strides (`stride[K]`, `bstride_[j]`): a generic N-d
          // tensor view's indexer, `(i % shape[K]) * stride[K] + ...`, whose lane-adjacent stride
          // is the view's innermost one, 1 for every contiguous tensor. Nothing in the kernel
          // says otherwise, so nothing is said (held-out wave 4: marian's functional::View and
          // gSelect/gInsert, 4 of 4 such notes coalesced at the real launches; a named stride such
          // as 'outCols' or 'ld' is a layout's dimension and stays a note).
          if (a.strideSym.find('[') != std::string::npos) continue;
          // The same for a stride every launch passes from a tensor view (`time.stride(0)`, a
          // 1-D tensor's or a column's stride, 1 when contiguous and 0 when broadcast): the binding
          // layer decides it (sixth stop check: gsplat's pose kernels, 7 of 7 such notes coalesced
          // at the real launches, the tensors made contiguous before the launch).
          if (m.viewStride(a.strideSrc)) continue;
          // A transpose: the kernel's other side (the load of what is stored here, or the store
          // of what is loaded) runs along the threads. No order of the threads coalesces both in
          // global memory; a tile staged in shared memory does (LeetCUDA's mat_transpose, fifth
          // stop check).
          const Access* other = nullptr;
          for (const auto& b : m.accesses()) {
            if (&b == &a || b.space != MemSpace::Global || !b.known || b.data || b.base == a.base || b.isWrite == a.isWrite ||
                b.isAtomic || b.elemSize == 0)
              continue;
            auto bl = warpLanes(b.mask, c.warp);
            bool contiguous = bl.size() >= 2;
            for (size_t k = 1; k < bl.size() && contiguous; ++k)
              contiguous = b.addr[bl[k]] - b.addr[bl[k - 1]] == static_cast<int64_t>(b.elemSize) * (bl[k] - bl[k - 1]);
            if (contiguous) {
              other = &b;
              break;
            }
          }
          if (other && oneStridedLine(m, a)) {
            msg += fmt::format("; each thread touches one element along that stride, and the grid's threads together "
                               "touch one line of it (one element per row: a column), while its {} '{}' runs along "
                               "the threads; no other thread touches the elements between, so there is no tile to "
                               "stage through shared memory and no thread order coalesces it",
                               other->isWrite ? "store" : "load", rc.text(other->expr));
            fix = "if this runs on a hot path, keep the column's elements next to each other in memory (a buffer of "
                  "their own, as a halo kept apart from the block, or a layout whose rows are these elements); a "
                  "shared-memory tile does not help a single column";
          } else if (other) {
            msg += fmt::format("; each thread touches one element along that stride, while its {} '{}' runs along the "
                               "threads: a transpose, which no thread order coalesces on both sides in global memory",
                               other->isWrite ? "store" : "load", rc.text(other->expr));
            fix = "stage a tile through shared memory: read it coalesced, __syncthreads(), then write it out along the "
                  "other dimension (corner turning, as a tiled transpose does), padding the tile by one element "
                  "against bank conflicts";
          } else {
            msg += "; each thread touches one element along that stride and nothing else here moves along a row "
                   "(no loop along it, no other thread axis), so no thread order coalesces it in this kernel";
            fix = "if callers pass a stride above 1 on a hot path, keep these elements contiguous (their own vector, "
                  "or a transposed copy); for a stride of 1 nothing is lost";
          }
          inherent = true;
        }
      }
    }
    // Each thread walking its own run of elements in a loop (`x[tid * bsize + m]`, AMGX's block
    // vectors): the same expression one element on in another walked iteration, for every lane.
    // The later iterations were thought to find the first one's sectors in L1; on the H200 they do
    // not (docs/measurements-data/own-run-h200.txt: L1 hit rate 21% at 8 doubles per thread, 2% at
    // 16, DRAM reads 1.4x and 8.4x the useful bytes).
    if (!c.random && !inherent && a.known) {
      auto lanes = warpLanes(a.mask, c.warp);
      bool ownRun = false;
      for (const auto& b : m.accesses()) {
        if (&b == &a || b.expr != a.expr || !b.known || ownRun) continue;
        ownRun = !lanes.empty();
        for (unsigned t : lanes)
          if (!b.mask[t] || b.addr[t] - a.addr[t] != static_cast<int64_t>(a.elemSize)) {
            ownRun = false;
            break;
          }
      }
      if (ownRun && storeOnly) {
        // Stores are not merged in L1 (they write through to L2): each iteration's store is its
        // own request of scattered sectors (seventh stop check: ccminer's per-thread hash outputs,
        // where the load-side wording and a "vector load" fix did not fit).
        msg += "; each thread writes its own run of elements in the loop, one element per iteration, and each "
               "iteration's store is a request of its own to as many sectors (stores are not combined in L1; the "
               "measured load-side cost of such runs: 1.18x to 9.86x for 16 to 128 bytes per thread on H200)";
        fix = "let the lanes write the runs together: in iteration m, thread t writes element base + m * blockDim.x + "
              "t of its block's blockDim.x * run elements, or write a short run with one vector store (uint4, "
              "float4)";
      } else if (ownRun) {
        msg += "; each thread walks its own run of elements in the loop, and its later iterations do not find these "
               "sectors in L1 (measured on H200: runs of 16, 32, 64 and 128 bytes per thread cost 1.18x, 1.79x, "
               "2.91x and 9.86x the same loop with the lanes along the run)";
        fix = "let the lanes walk the runs together: in iteration m, thread t takes element base + m * blockDim.x + t "
              "of its block's blockDim.x * run elements (measured 1.00x), or load a short run with one vector load";
      }
    }
    // The same with a layout that spreads one element per thread wider and wider (the diagonal
    // of a packed triangle: held-out wave 3, kaldi's _set_diag_packed): what costs is the layout.
    if (widening && !inherent && a.strideSym.empty() && oneElementPerThread(m, a)) {
      msg += "; each thread touches one element and the layout (not the thread order) spreads them: nothing else "
             "here moves along a row, so no thread order coalesces it in this kernel";
      fix = "if this runs hot, keep these elements contiguous (their own vector, updated with the matrix); "
            "otherwise nothing is lost";
      inherent = true;
    }
    msg += atContext(a.context);
    if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
    // How far apart a gather's lanes land is data the code does not give (sorted indices touch few
    // sectors, random ones many): a possible cost, said as a note, never a warning.
    if (c.random && a.stepBound > 0) msg += "; possible: the figure assumes most lanes are selected";
    else if (c.random) msg += "; possible: the figure assumes the indices in memory are scattered";
    Diagnostic d = rc.make(kInfo, rc.span(a.expr), msg);
    if (c.random || inherent) d.severity = Severity::Note;
    d.measuredTag = uncoalescedImpact(c.random, c.sectors, c.ideal, c.tableBytes);
    d.predicted = {{"sectors", c.sectors}, {"usefulSectors", c.ideal}, {"store", storeOnly ? 1 : 0},
                   {"random", c.random ? 1 : 0}};
    addLineInventory(m, a, storeOnly, rc, d.predicted);
    d.fixHint = fix;
    addCallSiteNote(a, rc, d);
    setTrafficImpact(m, a, d);
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
