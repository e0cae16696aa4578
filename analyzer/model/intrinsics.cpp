// Intrinsics in the kernel model: barriers, cooperative-groups methods, warp votes, reductions
// over a group and shuffles: what each lane gets (see builder.h).
#include <clang/AST/RecordLayout.h>
#include <clang/Basic/SourceManager.h>

#include "analyzer/model/builder.h"

#include <algorithm>
#include <optional>

namespace gpuopt::model_detail {

void Builder::barrier(const clang::Expr* call, bool block, std::string name, bool grid) {
  if (!anyActive()) return;
  Barrier b;
  b.call = call;
  b.blockLevel = block;
  b.gridLevel = grid;
  b.name = std::move(name);
  b.active = active_;
  b.alive = alive_;
  b.seq = seq_++;
  b.context = context();
  m_.barriers_.push_back(std::move(b));
  if (block) {
    ++epoch_;
  } else {
    for (unsigned w = 0; w < warpEpoch_.size(); ++w)
      for (unsigned t = w * 32; t < std::min(N_, (w + 1) * 32); ++t)
        if (active_[t]) { ++warpEpoch_[w]; break; }
  }
}

// A cooperative-groups method (member or static) on a group of kind `gk` and type `t`.
Value Builder::groupMethod(GroupKind gk, clang::QualType t, const std::string& name, const clang::Expr* call, unsigned knownSize) {
  // The object's own size when the model followed it (a tile passed as a thread_group).
  if (knownSize && gk != GroupKind::Grid) gk = knownSize >= N_ ? GroupKind::Block : GroupKind::Warp;
  unsigned tile = gk == GroupKind::Warp ? (knownSize ? knownSize : tileSizeOf(t)) : 0;
  if (name == "sync") {
    barrier(call, gk != GroupKind::Warp, recordName(t) + "::sync()", gk == GroupKind::Grid);
    return unknown();
  }
  if (name.rfind("operator", 0) == 0) {  // conversion to another group type: the same threads
    Value g = unknown();
    g.group = gk == GroupKind::Warp ? tile : N_;
    return g;
  }
  if (name == "thread_rank") {
    Value v = constant(0);
    for (unsigned th = 0; th < N_; ++th) v.v[th] = gk == GroupKind::Warp ? th % tile : th;
    if (gk == GroupKind::Grid) {
      // The rank in the grid: (blockIdx.x + gridDim.x * blockIdx.y) * threads per block + rank in the block.
      Value bx = blockIndex(0), by = blockIndex(1);
      auto rank = [&](int64_t x, int64_t y, unsigned th) { return (x + gridRep(0) * y) * static_cast<int64_t>(N_) + th; };
      for (unsigned th = 0; th < N_; ++th) v.v[th] = rank(bx.v[th], by.v[th], th);
      // Its values in other blocks only when the block indices carry theirs (block steps are off
      // for an assumed block shape: there are none, and indexing them crashed).
      if (hasAlts(bx) && hasAlts(by))
        for (int k = 0; k < 3; ++k) {
          v.alt[k].resize(N_);
          const auto &ax = altOf(bx, k), &ay = altOf(by, k);
          for (unsigned th = 0; th < N_; ++th) v.alt[k][th] = rank(ax[th], ay[th], th);
        }
      v.symbolic = v.block = true;
    }
    return v;
  }
  if (name == "size" || name == "num_threads")
    return constant(gk == GroupKind::Warp ? tile : gk == GroupKind::Block ? N_ : kParamRep);
  if (name == "meta_group_rank") {
    Value v = constant(0);
    for (unsigned th = 0; th < N_; ++th) v.v[th] = th / std::max(1u, tile);
    return v;
  }
  if (name == "meta_group_size") return constant((N_ + tile - 1) / std::max(1u, tile));
  if (name.rfind("shfl", 0) == 0 || name == "ballot" || name == "any" || name == "all" || name.rfind("match", 0) == 0) {
    barrier(call, false, name);
    return unknown();  // exchanged between lanes: not known, but not a memory load either
  }
  return unknown();
}

// A warp vote (__ballot_sync, __any_sync, __all_sync): the same for every lane of a warp, made
// from the predicates of the warp's active lanes. Known when they are; else numbered from their
// numbers, so warps whose lanes vote the same values (every block's warp 0 over the same input)
// hold equal results.
Value Builder::voted(const std::string& name, const Value& pred) const {
  Value r = unknown();
  r.data = pred.data;
  r.symbolic = pred.symbolic;
  r.param = pred.param;
  r.paramLanes = pred.param;
  r.block = pred.block;  // another vote in another block (no alternatives: not known there)
  const bool ballot = name == "__ballot_sync", any = name == "__any_sync";
  if (pred.known && !pred.block) {
    r.known = true;
    for (unsigned w = 0; w * 32 < N_; ++w) {
      int64_t bits = 0;
      bool anyTrue = false, allTrue = true;
      for (unsigned l = 0; l < 32 && w * 32 + l < N_; ++l)
        if (active_[w * 32 + l]) {
          const bool p = pred.v[w * 32 + l] != 0;
          bits |= static_cast<int64_t>(p) << l;
          anyTrue = anyTrue || p;
          allTrue = allTrue && p;
        }
      const int64_t res = ballot ? bits : any ? anyTrue : allTrue;
      for (unsigned l = 0; l < 32 && w * 32 + l < N_; ++l) r.v[w * 32 + l] = res;
    }
    return r;
  }
  const uint64_t what = mix(0x564f5445ull, std::hash<std::string>{}(name));  // "VOTE"
  std::vector<uint64_t> tag(N_, 0);
  bool some = false;
  for (unsigned w = 0; w * 32 < N_; ++w) {
    uint64_t n = what;
    bool ok = true;
    for (unsigned l = 0; l < 32 && w * 32 + l < N_ && ok; ++l) {
      const unsigned t = w * 32 + l;
      if (!active_[t]) {
        n = mix(n, 0x494e41435449ull + l);  // "INACTI": which lanes vote is part of the result
        continue;
      }
      const uint64_t x = laneNumber(pred, t);
      ok = x != 0;
      n = mix(n, x);
    }
    // Predicates with no number: still one result for every lane of the warp (a vote is), a
    // number of its own per call and warp, taken to differ between blocks.
    if (!ok) {
      n = mix(mix(what, 0x46524553480000ull + seq_), w);  // "FRESH": this call, this warp
      r.block = true;
    }
    for (unsigned l = 0; l < 32 && w * 32 + l < N_; ++l)
      if (active_[w * 32 + l]) tag[w * 32 + l] = n, some = true;
  }
  if (some) r.tag = std::move(tag);
  return r;
}

// A reduction over a group of `size` consecutive threads (cooperative_groups::reduce over a tile,
// __reduce_add_sync over a warp): one value for every thread of a group. Numbered from the
// operands' numbers of the group's active threads; when some have none, still one value within
// the group (a number of its own, per call and group), then taken to differ between blocks.
Value Builder::groupReduced(const clang::Expr* call, const Value& v, unsigned size) const {
  Value r = unknown();
  r.data = v.data;
  r.block = v.block;
  if (size == 0 || size > N_) size = 32;
  const uint64_t what = mix(0x524544ull, reinterpret_cast<uintptr_t>(call));  // "RED"
  r.tag.assign(N_, 0);
  for (unsigned g0 = 0; g0 < N_; g0 += size) {
    uint64_t n = what;
    bool numbered = true;
    for (unsigned t = g0; t < g0 + size && t < N_; ++t) {
      if (!active_[t]) { n = mix(n, 0x494e41435449ull + (t - g0)); continue; }
      const uint64_t x = laneNumber(v, t);
      numbered = numbered && x != 0;
      n = mix(n, x);
    }
    if (!numbered) {
      n = mix(mix(what, 0x46524553480000ull + seq_), g0);  // "FRESH": this call, this group
      r.block = true;  // not derived from values known to agree between blocks
    }
    for (unsigned t = g0; t < g0 + size && t < N_; ++t)
      if (active_[t]) r.tag[t] = n;
  }
  return r;
}

// A warp shuffle's result: not known (exchanged between lanes, not a memory load), but numbered
// from the source lane's value, so a full xor butterfly leaves every lane with one number.
// A shuffle's segment width: 32 when not given, the argument when it is one power of two of at
// most 32 for every active thread, 0 (not known) otherwise.
int64_t Builder::shuffleWidth(const Value* w) const {
  if (!w) return 32;
  if (!w->known || varying(*w)) return 0;
  int64_t width = 32;
  for (unsigned t = 0; t < N_; ++t)
    if (active_[t]) { width = w->v[t]; break; }
  return width <= 0 || width > 32 || (width & (width - 1)) ? 0 : width;
}

// __shfl_sync(mask, val, src) from a source lane the model does not know but that is one lane for
// the whole segment (`src = __ffs(__ballot_sync(...)) - 1`, the warp's next lane with work: SlabHash's
// warp-cooperative insert): every lane of the segment gets the same value, numbered by the selector
// and the segment's values (the same shuffle of the same values gives the same number), or, for
// values with no number, a number of this call per segment, taken to differ between blocks.
Value Builder::shuffledFromUnknownLane(const Value& val, const Value& sel, const Value* widthArg, const clang::Expr* call) const {
  Value r = unknown();
  r.data = val.data || sel.data, r.block = val.block || sel.block;
  const int64_t width = shuffleWidth(widthArg);
  if (width == 0) return r;
  std::vector<uint64_t> tag(N_, 0);
  bool any = false;
  for (unsigned first = 0; first < N_; first += static_cast<unsigned>(width)) {
    // The selector: one number for every active lane of the segment.
    uint64_t s = 0;
    bool one = true, fresh = false;
    for (unsigned t = first; t < first + width && t < N_ && one; ++t) {
      if (!active_[t]) continue;
      const uint64_t x = laneNumber(sel, t);
      one = x != 0 && (s == 0 || x == s);
      s = x;
    }
    if (!one || s == 0) continue;
    uint64_t n = mix(0x5348464c53454cull, s);  // "SHFLSEL"
    for (unsigned t = first; t < first + width && t < N_; ++t) {
      if (!active_[t]) continue;
      const uint64_t x = laneNumber(val, t);
      if (x == 0) fresh = true;
      n = mix(n, x);
    }
    if (fresh) n = mix(mix(mix(0x5348464c46ull, reinterpret_cast<uintptr_t>(call)), seq_), first);  // "SHFLF"
    for (unsigned t = first; t < first + width && t < N_; ++t)
      if (active_[t]) tag[t] = n, any = true;
  }
  if (any) {
    r.tag = std::move(tag);
    r.block = true;  // another segment's choice in another block
  }
  return r;
}

Value Builder::shuffled(const std::string& name, const std::vector<Value>& v, const clang::Expr* call) const {
  Value r = unknown();
  for (const auto& a : v) r.data = r.data || a.data, r.block = r.block || a.block;
  const bool xorS = name == "__shfl_xor_sync", down = name == "__shfl_down_sync", up = name == "__shfl_up_sync",
             idx = name == "__shfl_sync";
  if (!(xorS || down || up || idx) || v.size() < 3) return r;
  const Value &val = v[1], &sel = v[2];
  if (!sel.known) return idx ? shuffledFromUnknownLane(val, sel, v.size() >= 4 ? &v[3] : nullptr, call) : r;
  // A broadcast (__shfl_sync from one lane for the whole warp) of a value with no number (lane
  // 0's `allocator.allocate()`, an atomic's old value): still one value for every lane of the
  // segment, a number of its own per call and source lane, taken to differ between blocks
  // (HeCBench btree: every lane stores the root id lane 0 allocated).
  const bool unnumbered = val.tag.empty() && !(val.known && !val.isPtr);
  if (unnumbered && !(idx && call)) return r;
  const int64_t width = shuffleWidth(v.size() >= 4 ? &v[3] : nullptr);
  if (width == 0) return r;
  std::vector<uint64_t> tag(N_, 0);
  bool any = false;
  for (unsigned t = 0; t < N_; ++t) {
    if (!active_[t]) continue;
    const int64_t lane = t % 32, seg = lane / width * width, s = sel.v[t];
    int64_t src = lane;
    if (xorS) src = (lane ^ s) < seg + width && (lane ^ s) >= seg ? (lane ^ s) : lane;
    else if (down) src = lane - seg + s < width ? lane + s : lane;
    else if (up) src = lane - seg >= s ? lane - s : lane;
    else src = seg + ((s % width) + width) % width;
    const unsigned from = static_cast<unsigned>(t - lane + src);
    if (from >= N_ || !active_[from]) continue;  // an inactive source lane: undefined
    tag[t] = unnumbered ? mix(mix(mix(0x4243415354ull, reinterpret_cast<uintptr_t>(call)), seq_), from)  // "BCAST"
                        : laneNumber(val, from);  // the source lane's value itself
    any = true;
  }
  if (any) r.tag = std::move(tag);
  if (any && unnumbered) r.block = true;
  return r;
}

}  // namespace gpuopt::model_detail
