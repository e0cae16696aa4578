#include "analyzer/model/races.h"

#include "analyzer/model/builder.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>

#include <algorithm>
#include <array>
#include <climits>
#include <set>

namespace gpuopt {

namespace {
// Two accesses in different arms of one walk of an if that every thread of the block decides
// alike (Access::uniformArms): never both in one block.
bool exclusiveArms(const Access& a, const Access& b) {
  for (const auto& [walk, arm] : a.uniformArms)
    for (const auto& [w2, arm2] : b.uniformArms)
      if (walk == w2 && arm != arm2) return true;
  return false;
}
}  // namespace

std::vector<Race> findRaces(const std::vector<Access>& accesses, MemSpace space, const std::vector<unsigned>* sameWork) {
  std::vector<Race> races;
  auto warpOnly = [&](const Access* a) {
    int w = -1;
    for (unsigned t = 0; t < a->mask.size(); ++t)
      if (a->mask[t]) {
        if (w < 0) w = static_cast<int>(t / 32);
        else if (static_cast<int>(t / 32) != w) return -1;
      }
    return w;
  };
  // One flat entry per (thread, unit) touched, the unit being the smallest access size of the
  // interval: threads that write neighbouring bytes of one word (a char or short array) do not
  // race. Sorted by unit, then program order.
  struct Entry {
    const void* base;
    int64_t byte;
    unsigned seq;
    unsigned thread;
    const Access* acc;
  };
  // The value thread t stores, as a value number (value.h): a known value or a numbered one.
  auto storedValue = [](const Access* a, unsigned t, int64_t& v) {
    uint64_t n = 0;
    if (a->storedKnown) n = LaneDomain::mix(0x4b4e4f574eull, static_cast<uint64_t>(a->stored[t]));
    else if (!a->storedTag.empty()) n = a->storedTag[t];
    v = static_cast<int64_t>(n);
    return n != 0;
  };
  std::set<std::pair<const clang::Expr*, const clang::Expr*>> seen, seenWarp;
  std::vector<Entry> entries;
  llvm::SmallPtrSet<const void*, 8> written;
  // Memory the kernel only ever stores to under a selection by key (Access::selectGuards): the
  // one selected thread stores it once, and nothing did before.
  std::map<const void*, bool> onlySelected;
  for (const Access& a : accesses)
    if (a.space == space && a.isWrite && a.base) {
      auto [it, added] = onlySelected.try_emplace(a.base, true);
      it->second = it->second && !a.isRead && !a.selectGuards.empty();
    }
  size_t i = 0;
  while (i < accesses.size()) {
    unsigned epoch = accesses[i].epoch;
    entries.clear();
    // The unit of comparison: the smallest access of the interval (4 bytes for float/int code, so
    // as cheap as words; 1 for char arrays).
    size_t end = i;
    int64_t unit = 4;
    for (; end < accesses.size() && accesses[end].epoch == epoch; ++end)
      if (accesses[end].space == space && accesses[end].elemSize > 0)
        unit = std::min<int64_t>(unit, accesses[end].elemSize);
    // Only memory some thread writes (non-atomically, at a known address) in the interval can race:
    // reads of anything else are skipped before the per-thread entries are made.
    written.clear();
    for (size_t k = i; k < end; ++k) {
      const Access& a = accesses[k];
      if (a.space == space && a.isWrite && a.known && !a.data && a.base && !a.isAtomic && !a.approxMask) written.insert(a.base);
    }
    // Not under a mask the model guessed (`if (threadIdx.x == n)` for a parameter n walked with
    // every thread: one thread runs it, not all).
    for (; i < end; ++i) {
      const Access& a = accesses[i];
      if (a.space != space || !a.known || a.data || !a.base || a.isAtomic || a.approxMask || !written.count(a.base)) continue;
      for (unsigned t = 0; t < a.mask.size(); ++t) {
        // A thread whose index is past its array's bound touches no element of it (Access::outside).
        if (!a.mask[t] || (!a.outside.empty() && a.outside[t])) continue;
        int64_t first = floorDiv(a.addr[t], unit), last = floorDiv(a.addr[t] + std::max(1u, a.elemSize) - 1, unit);
        for (int64_t u = first; u <= last; ++u) entries.push_back({a.base, u, a.seq, t, &a});
      }
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) {
      if (x.base != y.base) return x.base < y.base;
      if (x.byte != y.byte) return x.byte < y.byte;
      if (x.seq != y.seq) return x.seq < y.seq;
      return x.thread < y.thread;
    });
    std::vector<const Entry*> writers, readers;
    std::set<unsigned> wroteSame;  // threads that stored the location's one value so far
    for (size_t g = 0; g < entries.size();) {
      size_t h = g;
      while (h < entries.size() && entries[h].base == entries[g].base && entries[h].byte == entries[g].byte) ++h;
      writers.clear();
      readers.clear();
      wroteSame.clear();
      // Every thread touching this element in the interval is in one warp (each warp scans its own
      // slice of a buffer): a race here is between lanes of that warp only, warp-synchronous.
      bool oneWarp = true;
      for (size_t k = g + 1; k < h && oneWarp; ++k) oneWarp = entries[k].thread / 32 == entries[g].thread / 32;
      // Does every write of this byte in the interval store one value (known, or the same for all)?
      bool oneValue = true, haveValue = false;
      int64_t value = 0;
      const Access* sameAcc = nullptr;
      for (size_t k = g; k < h && oneValue; ++k) {
        const Access* a = entries[k].acc;
        if (!a->isWrite) continue;
        int64_t v;
        if (a->isRead) oneValue = false;  // a read-modify-write (+=) changes it
        else if (storedValue(a, entries[k].thread, v)) {
          if (haveValue && v != value) oneValue = false;
          value = v, haveValue = true;
        } else if (a->storedSame && (!sameAcc || sameAcc == a)) {
          sameAcc = a;
        } else {
          oneValue = false;
        }
      }
      if (haveValue && sameAcc) oneValue = false;
      for (size_t k = g; k < h; ++k) {
        const Entry& e = entries[k];
        const Access* a = e.acc;
        auto conflict = [&](const std::vector<const Entry*>& others) {
          for (const Entry* o : others) {
            if (o->thread == e.thread) continue;
            if (exclusiveArms(*a, *o->acc)) continue;  // arms of one if the whole block decides alike
            if (sameWork && (*sameWork)[o->thread] == (*sameWork)[e.thread]) continue;  // rows repeating one another
            bool sameWarp = o->thread / 32 == e.thread / 32;
            if (sameWarp && o->acc->warpEpoch[e.thread / 32] != a->warpEpoch[e.thread / 32]) continue;  // __syncwarp between
            // Two stores under one selection guard (`if (rowIdx[e] == pivot) piv = val[e];`,
            // HeCBench slu): made by the one thread whose key matches, when the keys are distinct
            // (an index array's are); the rule's Limits say so.
            if (a->isWrite && o->acc->isWrite && !a->isRead && !o->acc->isRead &&
                std::find_first_of(a->selectGuards.begin(), a->selectGuards.end(), o->acc->selectGuards.begin(),
                                   o->acc->selectGuards.end()) != a->selectGuards.end())
              continue;
            // The same within a warp for a selection by one value per warp (`if (cols[e] == row)
            // s[warp] = v;`, a row per warp): one lane of the warp stores.
            if (sameWarp && a->isWrite && o->acc->isWrite && !a->isRead && !o->acc->isRead &&
                std::find_first_of(a->warpSelectGuards.begin(), a->warpSelectGuards.end(),
                                   o->acc->warpSelectGuards.begin(),
                                   o->acc->warpSelectGuards.end()) != a->warpSelectGuards.end())
              continue;
            // A read and a store that writes back the value its thread read (`buf[i] += 0` by the
            // threads past a tree sum's active half): the read sees one value either way.
            auto unchanged = [](const Access* x, unsigned t) { return t < x->unchanged.size() && x->unchanged[t]; };
            if ((a->isWrite && !o->acc->isWrite && unchanged(a, e.thread)) ||
                (o->acc->isWrite && !a->isWrite && unchanged(o->acc, o->thread)))
              continue;
            // A read before the store, in program order, of memory only ever stored to by a
            // selection: the store is made once, so if it came after the read the read saw memory
            // nothing had written. The program reads what it selected after selecting it (slu:
            // `if (ridx == col) s = v;` in one iteration, `s` read in the one before).
            if (a->isWrite && !a->isRead && !o->acc->isWrite && !a->selectGuards.empty() && onlySelected[a->base])
              continue;
            // Every thread storing the same value (a shared scalar set by all): benign.
            if (oneValue && o->acc->isWrite && a->isWrite && !a->isRead && !o->acc->isRead) continue;
            // Reading back the value this thread stored itself, when every store is that value.
            if (oneValue && !a->isWrite && wroteSame.count(e.thread)) continue;
            // A warp-level pair does not stand for the pair of expressions: another element may
            // still race across warps (kept apart from the block-level ones).
            // Only an ordering race (the lanes exchanging values, or one store that must land
            // before another: a warp scan over its own slice), under a data guard too (a possible
            // one: lane `ridx == col` sets the warp's slot, the others read it: HeCBench slu); lanes of
            // one warp storing different values into one element in one store lose all but one,
            // whatever the syncs.
            const bool oneStore = a->expr == o->acc->expr && a->isWrite && !a->isRead;
            const bool warpLevel = sameWarp && oneWarp && !oneStore;
            if (!(warpLevel ? seenWarp : seen).insert({o->acc->expr, a->expr}).second) return;
            Race r;
            r.first = o->acc;
            r.second = a;
            r.t1 = o->thread;
            r.t2 = e.thread;
            r.byteAddr = a->addr[e.thread];
            r.firstByteAddr = o->acc->addr[o->thread];
            r.sameWarp = sameWarp;
            r.standIn = o->acc->paramAddr || a->paramAddr;
            r.possible = !o->acc->guards.empty() || !a->guards.empty() || r.standIn;
            int w1 = warpOnly(o->acc), w2 = warpOnly(a);
            r.warpSynchronous = warpLevel || (sameWarp && w1 >= 0 && w1 == w2);
            races.push_back(r);
            return;
          }
        };
        conflict(writers);
        if (a->isWrite) conflict(readers);
        if (a->isWrite && oneValue) wroteSame.insert(e.thread);
        // Keep a few entries per byte (and one per further warp): enough to find a partner thread.
        auto keep = [&](std::vector<const Entry*>& dst) {
          if (dst.size() < 4 || (dst.size() < 64 && dst.back()->thread / 32 != e.thread / 32)) dst.push_back(&e);
        };
        if (a->isWrite) keep(writers);
        if (a->isRead) keep(readers);
      }
      g = h;
    }
  }
  return races;
}

std::vector<CrossBlockRace> findCrossBlockRaces(const std::vector<Access>& accesses,
                                                const std::vector<Barrier>& barriers, MemSpace space, const unsigned grid[3],
                                                bool blockBlind) {
  // Block offsets compared: 0..2 in x, 0..1 in y, fewer when the launch's grid is that small (a
  // grid of 2 blocks has no block b + 2; one of 1 no other block along that axis).
  const int xs = grid && grid[0] ? static_cast<int>(std::min(3u, grid[0])) : 3;
  const int yMax = grid && grid[1] ? static_cast<int>(std::min(2u, grid[1])) : 2;
  std::vector<CrossBlockRace> races;
  // Grid-wide syncs split the kernel into intervals; program order decides which an access is in.
  std::vector<unsigned> gridSyncs;
  for (const auto& b : barriers)
    if (b.gridLevel) gridSyncs.push_back(b.seq);
  auto interval = [&](unsigned seq) {
    return static_cast<unsigned>(std::lower_bound(gridSyncs.begin(), gridSyncs.end(), seq) - gridSyncs.begin());
  };
  bool moveY = false;
  for (const auto& a : accesses)
    if (a.space == space && a.blockLinear)
      for (size_t t = 0; t < a.stepY.size() && !moveY; ++t) moveY = a.mask[t] && a.stepY[t] != 0;
  const int ys = moveY ? yMax : 1;
  struct Entry {
    const void* base;
    unsigned interval;
    int64_t unit;
    unsigned seq;
    int blk;  // x offset + 3 * y offset
    unsigned thread;
    const Access* acc;
  };
  // Only accesses at addresses the model decides: known, not data, not through a parameter's
  // stand-in value (a pitch), under a mask some representative thread decides (Access::approxMask).
  auto decided = [](const Access& a) {
    return a.known && !a.data && a.base && !a.isAtomic && !a.paramAddr && !a.approxMask;
  };
  // Only memory some thread writes can race: reads of anything else make no entries.
  llvm::SmallPtrSet<const void*, 8> written;
  for (const auto& a : accesses)
    if (a.space == space && a.blockLinear && a.isWrite && decided(a)) written.insert(a.base);
  if (written.empty()) return races;
  // Prefilter by address ranges: a base where no access's bytes in one block overlap any access's
  // (one of them a write) in another block cannot race between blocks, and needs no per-thread
  // entries (the common `out[blockIdx.x * blockDim.x + threadIdx.x] = ...`).
  {
    struct Range {
      const Access* a;
      bool nonMoving = false;                // some thread's address is the same in every block
      std::array<std::pair<int64_t, int64_t>, 6> r;  // [lo, hi) at block offset x + 3 * y
    };
    llvm::DenseMap<const void*, std::vector<Range>> byBase;
    for (const auto& a : accesses) {
      if (a.space != space || !a.blockLinear || !decided(a) || !written.count(a.base))
        continue;
      Range rg;
      rg.a = &a;
      for (auto& x : rg.r) x = {INT64_MAX, INT64_MIN};
      bool any = false;
      for (unsigned t = 0; t < a.mask.size(); ++t) {
        if (!a.mask[t]) continue;
        any = true;
        rg.nonMoving = rg.nonMoving || (a.stepX[t] == 0 && a.stepY[t] == 0);
        for (int y = 0; y < ys; ++y)
          for (int x = 0; x < xs; ++x) {
            int64_t lo = a.addr[t] + x * a.stepX[t] + y * a.stepY[t];
            auto& r = rg.r[x + 3 * y];
            r.first = std::min(r.first, lo);
            r.second = std::max(r.second, lo + static_cast<int64_t>(std::max(1u, a.elemSize)));
          }
      }
      if (any) byBase[a.base].push_back(rg);
    }
    for (auto& [base, ranges] : byBase) {
      bool overlap = ranges.size() > 64;  // many accesses: let the exact query decide
      for (size_t i = 0; i < ranges.size() && !overlap; ++i)
        for (size_t j = i; j < ranges.size() && !overlap; ++j) {
          const Range &p = ranges[i], &q = ranges[j];
          if (!p.a->isWrite && !q.a->isWrite) continue;
          for (int o1 = 0; o1 < 3 * ys && !overlap; ++o1)
            for (int o2 = 0; o2 < 3 * ys && !overlap; ++o2) {
              if (o1 % 3 >= xs || o2 % 3 >= xs) continue;
              if (o1 == o2 && !p.nonMoving && !q.nonMoving) continue;  // the same block
              overlap = p.r[o1].first < q.r[o2].second && q.r[o2].first < p.r[o1].second;
            }
        }
      if (!overlap) written.erase(base);
    }
    if (written.empty()) return races;
  }
  int64_t unit = 4;
  for (const auto& a : accesses)
    if (a.space == space && a.blockLinear && a.elemSize > 0) unit = std::min<int64_t>(unit, a.elemSize);
  // Reused between kernels: no fresh allocation (and page faults) per kernel.
  static thread_local std::vector<Entry> entries;
  entries.clear();
  for (const auto& a : accesses) {
    if (a.space != space || !a.blockLinear || !decided(a) || !written.count(a.base))
      continue;
    unsigned iv = interval(a.seq);
    for (unsigned t = 0; t < a.mask.size(); ++t) {
      if (!a.mask[t] || (!a.outside.empty() && a.outside[t])) continue;
      bool moves = a.stepX[t] != 0 || a.stepY[t] != 0;
      // An address every block touches, under `if (blockIdx.x == 0)`: only some blocks do.
      if (!moves && a.blockGuarded) continue;
      // Neighbours only along a dimension the address moves in: one that does not move with
      // blockIdx.y (or .x) is often launched with one block in that dimension (backprop's
      // dim3(1, n) grid), so the same address there is not taken for another block's.
      const int nx = a.stepX[t] != 0 ? xs : 1, ny = a.stepY[t] != 0 ? ys : 1;
      for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x) {
          int64_t addr = a.addr[t] + x * a.stepX[t] + y * a.stepY[t];
          int64_t first = floorDiv(addr, unit), last = floorDiv(addr + std::max(1u, a.elemSize) - 1, unit);
          for (int64_t u = first; u <= last; ++u) entries.push_back({a.base, iv, u, a.seq, x + 3 * y, t, &a});
        }
    }
  }
  // Sorted by (base, interval, unit), then as made (program order, thread, block offset): small
  // keys are sorted, not the entries.
  struct Key {
    int64_t unit;
    uint32_t group;  // (base, interval), numbered in their sorted order
    uint32_t idx;
  };
  static thread_local std::vector<Key> keys;
  keys.clear();
  keys.reserve(entries.size());
  {
    // The few distinct (base, interval) pairs, numbered in sorted order.
    std::vector<std::pair<const void*, unsigned>> groups;
    for (const auto& e : entries)
      if (groups.empty() || groups.back() != std::make_pair(e.base, e.interval)) groups.push_back({e.base, e.interval});
    std::sort(groups.begin(), groups.end());
    groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
    uint32_t g = 0;
    for (uint32_t i = 0; i < entries.size(); ++i) {
      auto key = std::make_pair(entries[i].base, entries[i].interval);
      if (groups[g] != key) g = static_cast<uint32_t>(std::lower_bound(groups.begin(), groups.end(), key) - groups.begin());
      keys.push_back({entries[i].unit, g, i});
    }
  }
  std::sort(keys.begin(), keys.end(), [](const Key& p, const Key& q) {
    if (p.group != q.group) return p.group < q.group;
    if (p.unit != q.unit) return p.unit < q.unit;
    return p.idx < q.idx;
  });
  // Loaded values are the same in every block when nothing the kernel loads from global memory is
  // written by it (by any block) and shared memory only ever holds values that do not depend on
  // blockIdx: then two blocks' threads with equal value numbers (Access::storedTag) store equal
  // values (every block computing one block-wide scan of the same input and storing it).
  bool loadsCarry = true;
  {
    llvm::SmallPtrSet<const void*, 8> globalWritten, globalRead;
    for (const auto& a : accesses) {
      if (a.space == MemSpace::Local) continue;
      if (a.space == MemSpace::Shared) {
        if (a.isWrite && (a.storedBlock || a.isAtomic)) loadsCarry = false;
        continue;
      }
      if (!a.base) { loadsCarry = false; continue; }  // memory the model cannot name
      if (a.isWrite) globalWritten.insert(a.base);
      if (a.isRead) globalRead.insert(a.base);
    }
    for (const void* b : globalRead)
      if (globalWritten.count(b)) loadsCarry = false;
  }
  std::set<std::pair<const clang::Expr*, const clang::Expr*>> seen;
  auto moves = [](const Entry& e) { return e.acc->stepX[e.thread] != 0 || e.acc->stepY[e.thread] != 0; };
  auto at = [&](size_t k) -> const Entry& { return entries[keys[k].idx]; };
  // Pairs that need a later iteration of a loop with a run-time trip count (Access::laterIterLine)
  // come second and are possible: the pair of the same expressions within first iterations, when
  // there is one, is the one reported.
  for (int pass = 0; pass < 2; ++pass)
  for (size_t g = 0; g < keys.size();) {
    size_t h = g;
    while (h < keys.size() && keys[h].group == keys[g].group && keys[h].unit == keys[g].unit) ++h;
    // Every write of this unit stores one value that does not depend on blockIdx: benign. A
    // known value, or one numbered from loads when those carry across blocks (loadsCarry; else
    // a load's number assumes no other thread wrote the memory, which is what another block may
    // do).
    bool oneValue = true, haveValue = false, anyWrite = false;
    uint64_t value = 0;
    for (size_t k = g; k < h; ++k) {
      const Access* a = at(k).acc;
      if (!a->isWrite) continue;
      anyWrite = true;
      uint64_t v = 0;
      if (a->isRead) { oneValue = false; break; }
      if (a->storedBlock) { oneValue = false; break; }  // a value that differs between blocks
      if (a->storedKnown) v = LaneDomain::mix(0x4b4e4f574eull, static_cast<uint64_t>(a->stored[at(k).thread]));
      else if (loadsCarry && !a->storedTag.empty()) v = a->storedTag[at(k).thread];
      // A kernel that computes the same in every block (HeCBench blockScan: every block scans the
      // same tile and thread 0 stores the aggregate a CUB scan returned through a reference):
      // thread t of every block stores one value at this store; two stores or two threads are
      // still two values (their order differs from block to block).
      else if (loadsCarry && blockBlind) v = LaneDomain::mix(reinterpret_cast<uintptr_t>(a), at(k).thread);
      if (!v || (haveValue && v != value)) { oneValue = false; break; }
      value = v, haveValue = true;
    }
    if (anyWrite && !oneValue)
      for (size_t i = g; i < h; ++i)
        for (size_t j = i; j < h; ++j) {
          const Entry &p = at(i), &q = at(j);
          // A store to an address that does not move with blockIdx: the same thread of every block.
          if (i == j && (moves(p) || !p.acc->isWrite)) continue;
          if (!p.acc->isWrite && !q.acc->isWrite) continue;
          bool indep = !moves(p) && !moves(q);
          // Two entries from different blocks; an address that does not move is in every block,
          // so it meets any entry, even one of the same block offset, from another block.
          if (p.blk == q.blk && !indep && moves(p) && moves(q)) continue;
          // Two addresses that move with blockIdx at different rates (`u[ind * 514 + 513]` and
          // `u[512 * 514 + ind]`) meet at one block pair only, which is the representative
          // blocks' own: with the grid known, that pair must be in it (HeCBench lid-driven-cavity:
          // block 3 of 4 would meet a block 4 that is not launched).
          if (grid && !indep && moves(p) && moves(q)) {
            const bool dx = p.acc->stepX[p.thread] != q.acc->stepX[q.thread];
            const bool dy = p.acc->stepY[p.thread] != q.acc->stepY[q.thread];
            auto inGrid = [&](const Entry& e) {
              return (!dx || !grid[0] || model_detail::kBlockIdxRep + e.blk % 3 < static_cast<int64_t>(grid[0])) &&
                     (!dy || !grid[1] || model_detail::kBlockIdxRep + e.blk / 3 < static_cast<int64_t>(grid[1]));
            };
            if (!inGrid(p) || !inGrid(q)) continue;
          }
          const Access* w = p.acc->isWrite ? p.acc : q.acc;
          const Access* o = w == p.acc ? q.acc : p.acc;
          const unsigned later = w->laterIterLine ? w->laterIterLine : o->laterIterLine;
          if ((later != 0) != (pass == 1)) continue;
          if (!seen.insert({w->expr, o->expr}).second) continue;
          CrossBlockRace r;
          const Entry& we = w == p.acc ? p : q;
          const Entry& oe = w == p.acc ? q : p;
          r.first = w;
          r.second = o;
          r.t1 = we.thread, r.t2 = oe.thread;
          r.b1 = we.blk % 3, r.by1 = we.blk / 3;
          r.b2 = oe.blk % 3, r.by2 = oe.blk / 3;
          if (r.b1 == r.b2 && r.by1 == r.by2) r.b2 = r.b1 + 1;  // a fixed address: any other block
          r.byteAddr = w->addr[we.thread] + r.b1 * w->stepX[we.thread] + r.by1 * w->stepY[we.thread];
          r.blockIndependent = indep;
          r.laterIterLine = later;
          r.possible = !w->guards.empty() || !o->guards.empty() || later;
          races.push_back(r);
        }
    g = h;
  }
  return races;
}

}  // namespace gpuopt
