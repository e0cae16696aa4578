// Memory in the kernel model: reads and writes of global, shared and per-thread memory, the values
// kept per address for per-thread arrays and objects, and the Access records (see builder.h).
#include <clang/AST/RecordLayout.h>
#include <clang/Lex/Lexer.h>

#include "analyzer/model/builder.h"

#include <algorithm>

namespace gpuopt::model_detail {

// Per-thread arrays and objects (registers or local memory): an element at an address the same
// for every active thread keeps the value stored there, as a variable does (`float s[2]; s[0] =
// x; ... s[0]`); a store at an address that differs between threads or is not known forgets the
// whole array.
const int64_t* Builder::localAddress(const LVal& lv) const {
  if (!lv.ptr.base || !lv.ptr.known || varying(lv.ptr)) return nullptr;
  for (unsigned t = 0; t < N_; ++t)
    if (active_[t]) return &lv.ptr.v[t];
  return nullptr;
}

void Builder::storeLocal(const LVal& lv, const Value& v) {
  const int64_t* addr = localAddress(lv);
  if (!addr) {
    forgetLocal(lv.ptr.base);
    return;
  }
  // A store overlapping other elements of another size (a reinterpreted array) forgets them; one
  // inside a wider element (a float of a float4 stored whole) keeps the rest of it as parts of the
  // same size, numbered as readLocalPart reads them.
  std::vector<std::pair<int64_t, Value>> rest;
  for (auto it = localMem_.lower_bound({lv.ptr.base, INT64_MIN, 0}); it != localMem_.end() && std::get<0>(it->first) == lv.ptr.base;) {
    const int64_t wa = std::get<1>(it->first), ws = std::get<2>(it->first);
    if (!(wa < *addr + lv.size && *addr < wa + ws) || (wa == *addr && ws == lv.size)) {
      ++it;
      continue;
    }
    if (lv.size && wa <= *addr && *addr + lv.size <= wa + ws && ws % lv.size == 0 && (*addr - wa) % lv.size == 0 && ws / lv.size <= 64) {
      for (int64_t o = wa; o < wa + ws; o += lv.size) {
        if (o == *addr) continue;
        Value part = unknown();
        part.data = it->second.data;
        part.same = it->second.same;
        const uint64_t where = mix(0x50415254ull, static_cast<uint64_t>(o - wa) << 32 | lv.size);  // "PART"
        std::vector<uint64_t> tag(N_, 0);
        bool any = false;
        for (unsigned t = 0; t < N_; ++t)
          if (uint64_t n = laneNumber(it->second, t)) tag[t] = mix(where, n), any = true;
        if (any) part.tag = std::move(tag);
        rest.emplace_back(o, std::move(part));
      }
    }
    it = localMem_.erase(it);
  }
  for (auto& [o, part] : rest) localMem_[{lv.ptr.base, o, lv.size}] = std::move(part);
  Value& slot = localMem_[{lv.ptr.base, *addr, lv.size}];
  if (slot.v.size() != N_) slot = unknown();
  assignMasked(slot, v);
}

void Builder::forgetLocal(const clang::ValueDecl* base) {
  if (!base) return;
  auto it = localMem_.lower_bound({base, INT64_MIN, 0});
  while (it != localMem_.end() && std::get<0>(it->first) == base) it = localMem_.erase(it);
}

Value Builder::readMem(const LVal& lv) {
  recordAccess(lv, true, false, false, nullptr);
  if (lv.ptr.space == MemSpace::Local) {
    if (const int64_t* addr = localAddress(lv)) {
      auto it = localMem_.find({lv.ptr.base, *addr, lv.size});
      if (it != localMem_.end()) return it->second;
      return readLocalPart(lv, *addr);
    }
    return unknown();
  }
  if (lv.ptr.space == MemSpace::Unknown) return unknown();
  // Same address for every active thread: a uniform value (a representative symbol).
  if (lv.ptr.known && !varying(lv.ptr) && !lv.ptr.data) {
    // Unchanged since one unknown value was stored there (`dataScalars_`): loaded data or a bool
    // flag reads back as that value, the same for every thread and unknown (a flag set from an
    // atomic's ticket is not a symbol that is always true); any other integer nothing is known
    // about (an atomic's old value) keeps its stand-in, for addresses, but marked `opaque`, so a
    // condition on it is not decided.
    bool opaque = false;
    if (lv.ptr.base)
      for (unsigned t = 0; t < N_; ++t)
        if (active_[t]) {
          auto it = dataScalars_.find({lv.ptr.base, lv.ptr.v[t]});
          if (it == dataScalars_.end() || it->second.version != memVersion_[lv.ptr.base]) break;
          if (it->second.opaque) { opaque = true; break; }
          Value r = unknown();
          r.data = it->second.data;
          r.same = true;
          r.tag.assign(N_, mix(mix(reinterpret_cast<uintptr_t>(lv.ptr.base), it->second.version), static_cast<uint64_t>(lv.ptr.v[t])));
          r.blockMade = lv.ptr.space == MemSpace::Shared;
          return r;
        }
    // One stand-in per load expression and version of the memory it reads: a reload after a store
    // is another value.
    auto key = std::make_pair(lv.expr, lv.ptr.base ? memVersion_[lv.ptr.base] : uint64_t(0));
    auto it = uniformLoads_.find(key);
    int64_t rep = it != uniformLoads_.end() ? it->second : (uniformLoads_[key] = 1024 * static_cast<int64_t>(uniformLoads_.size() + 1));
    Value r = constant(rep);
    r.symbolic = true;
    r.param = true;
    r.paramSrc = lv.ptr.base;
    r.same = true;
    r.opaque = opaque;
    // Loaded from an address that moves with blockIdx (`in[blockIdx.x]`): another value in every
    // block, not known there (no alternatives).
    r.block = lv.ptr.block;
    r.blockMade = lv.ptr.space == MemSpace::Shared;
    return r;
  }
  // One address for every active thread though not known (a base offset by a size computed from
  // loaded values, `shared + cap`): one load instruction gives every lane the same value, whatever
  // the memory holds; numbered per load expression and memory version.
  if (!lv.ptr.known && lv.ptr.same) {
    Value r = unknown();
    r.data = true;
    r.same = true;
    r.block = lv.ptr.block;
    const uint64_t version = lv.ptr.base ? memVersion_[lv.ptr.base] : 0;
    r.tag.assign(N_, mix(mix(reinterpret_cast<uintptr_t>(lv.expr), version), 0x53414d45ull));  // "SAME"
    r.blockMade = lv.ptr.space == MemSpace::Shared;
    return r;
  }
  Value r = unknown();
  r.data = true;
  r.loaded = true;
  r.block = lv.ptr.block;  // loaded from a block's own address: differs between blocks
  // Neighbouring elements of a prefix sum of flags, read by neighbouring threads: values that
  // differ by 0 or 1 from one thread to the next.
  if (lv.ptr.known && lv.ptr.base && m_.prefixOfFlags_.count(lv.ptr.base)) {
    bool contiguous = true, pair = false;
    for (unsigned t = 0; t + 1 < N_ && contiguous; ++t)
      if (active_[t] && active_[t + 1] && (t + 1) % 32 != 0) {
        pair = true;
        contiguous = lv.ptr.v[t + 1] - lv.ptr.v[t] == static_cast<int64_t>(lv.size);
      }
    if (contiguous && pair) r.stepBound = 1;
  }
  // Loaded data is numbered by where it came from: two threads loading the same address of the
  // same memory version hold the same value.
  if (lv.ptr.known && lv.ptr.base) {
    uint64_t from = mix(reinterpret_cast<uintptr_t>(lv.ptr.base), memVersion_[lv.ptr.base]);
    r.tag.assign(N_, 0);
    for (unsigned t = 0; t < N_; ++t) r.tag[t] = mix(from, static_cast<uint64_t>(lv.ptr.v[t]));
  } else if (lv.ptr.base && lv.ptr.tag.size() == N_) {
    // ... and at a data-dependent address, by the address's number: threads whose addresses are
    // equal (computed alike from the same loads) load one value.
    uint64_t from = mix(mix(reinterpret_cast<uintptr_t>(lv.ptr.base), memVersion_[lv.ptr.base]), 0x4441544141ull);  // "DATAA"
    r.tag.assign(N_, 0);
    for (unsigned t = 0; t < N_; ++t)
      if (lv.ptr.tag[t]) r.tag[t] = mix(from, lv.ptr.tag[t]);
  }
  r.blockMade = lv.ptr.space == MemSpace::Shared;
  return r;
}

// A per-thread element not stored with this address and size: part of a wider slot (a float of a
// float4 stored whole), or a whole tiled by narrower slots (a struct stored member by member),
// numbered from theirs; a member of a kernel's struct parameter never written: its value.
Value Builder::readLocalPart(const LVal& lv, int64_t addr) {
  const auto* base = lv.ptr.base;
  std::vector<std::pair<int64_t, const Value*>> tiles;
  int64_t covered = addr;
  for (auto it = localMem_.lower_bound({base, INT64_MIN, 0}); it != localMem_.end() && std::get<0>(it->first) == base; ++it) {
    const int64_t a = std::get<1>(it->first), sz = std::get<2>(it->first);
    if (a <= addr && addr + lv.size <= a + sz) {  // inside one slot
      const Value& w = it->second;
      Value r = unknown();
      r.data = w.data;
      r.block = w.block;
      r.same = w.same;
      const uint64_t where = mix(0x50415254ull, static_cast<uint64_t>(addr - a) << 32 | lv.size);  // "PART"
      std::vector<uint64_t> tag(N_, 0);
      bool any = false;
      for (unsigned t = 0; t < N_; ++t)
        if (uint64_t n = laneNumber(w, t)) tag[t] = mix(where, n), any = true;
      if (any) r.tag = std::move(tag);
      return r;
    }
    if (a == covered && a + sz <= addr + static_cast<int64_t>(lv.size)) {
      tiles.emplace_back(a - addr, &it->second);
      covered = a + sz;
    }
  }
  if (!tiles.empty() && covered == addr + static_cast<int64_t>(lv.size)) {
    Value r = unknown();
    std::vector<const Value*> ops;
    r.same = true;
    for (auto& [off, v] : tiles) ops.push_back(v), r.data = r.data || v->data, r.block = r.block || v->block, r.same = r.same && uniformish(*v);
    number(r, mix(0x54494c45ull, tiles.size()), ops);  // "TILE"
    return r;
  }
  // A member of the kernel's struct parameter: the same for the whole grid.
  auto* pd = llvm::dyn_cast_or_null<clang::ParmVarDecl>(base);
  if (!pd || frames_.empty() || pd->getDeclContext() != frames_.front().fn || !lv.expr) return unknown();
  clang::QualType t = lv.expr->getType().getCanonicalType();
  Value r = unknown();
  if (t->isPointerType()) {
    r = constant(0);
    r.isPtr = true;
    // Each pointer member its own array (two members of one type may alias: as two pointer params).
    auto* me = llvm::dyn_cast<clang::MemberExpr>(strip(lv.expr));
    r.base = me ? me->getMemberDecl() : static_cast<const clang::ValueDecl*>(pd);
    r.baseName = text(lv.expr);
    r.space = MemSpace::Global;
    clang::QualType pt = t->getPointeeType();
    r.pointee = pt->isIncompleteType() || pt->isVoidType() ? 1 : ctx_.getTypeSizeInChars(pt).getQuantity();
    r.ptrVolatile = pt.isVolatileQualified();
  } else if (t->isIntegralOrEnumerationType()) {
    r = constant(kParamRep);
    r.symbolic = true;
    r.param = true;
    r.paramSrc = pd;
    normalize(r, t);
  } else if (t->isRealFloatingType()) {
    r.same = true;
    r.tag.assign(N_, mix(mix(0x5041524dull, reinterpret_cast<uintptr_t>(pd)), static_cast<uint64_t>(addr) << 16 | lv.size));
  } else {
    return r;
  }
  localMem_[{base, addr, lv.size}] = r;  // read again: the same value
  return r;
}

void Builder::recordAccess(const LVal& lv, bool read, bool write, bool atomic, const Value* stored) {
  if (!anyActive()) return;
  // Members of per-thread objects (registers): kept by storeLocal, not accesses rules look at.
  if (lv.ptr.space == MemSpace::Local)
    if (auto* vd = llvm::dyn_cast_or_null<clang::VarDecl>(lv.ptr.base); vd && vd->getType()->isRecordType()) return;
  Access a;
  a.expr = lv.expr;
  a.base = lv.ptr.base;
  a.baseName = lv.ptr.baseName;
  a.space = lv.ptr.space;
  a.isRead = read;
  a.isWrite = write;
  a.isAtomic = atomic;
  a.isVolatile = lv.isVolatile;
  a.elemSize = lv.size;
  a.mask = active_;
  a.addr = lv.ptr.v;
  a.known = lv.ptr.known;
  a.data = lv.ptr.data;
  a.symbolic = lv.ptr.symbolic;
  a.strideSym = lv.ptr.strideSym;
  a.strideVal = lv.ptr.strideVal;
  a.strideSrc = lv.ptr.strideSrc;
  a.addrBlock = lv.ptr.block;
  if (stored && stored->known) {
    a.stored = stored->v;
    a.storedKnown = true;
  }
  if (stored) a.storedSame = uniformish(*stored);
  if (stored) a.storedBlock = stored->block;
  if (stored && !stored->known && !stored->tag.empty()) a.storedTag = stored->tag;
  if (write && lv.ptr.base) {
    const uint64_t version = ++memVersion_[lv.ptr.base];  // later loads see another value
    // Loaded data, a flag (bool) computed from anything unknown (an atomic's ticket), or an
    // integer nothing is known about (no value number: an atomic's old value).
    const bool flag = lv.expr && lv.expr->getType()->isBooleanType();
    const bool integer = lv.expr && lv.expr->getType()->isIntegralOrEnumerationType();
    if (stored && !stored->known && !stored->isPtr && lv.ptr.known && !lv.ptr.data && !varying(lv.ptr)) {
      DataScalar d{version, stored->data, !(stored->data || flag) && integer && stored->tag.empty()};
      if (stored->data || flag || d.opaque)
        for (unsigned t = 0; t < N_; ++t)
          if (active_[t]) {
            dataScalars_[{lv.ptr.base, lv.ptr.v[t]}] = d;
            break;
          }
    }
  }
  a.epoch = epoch_;
  a.warpEpoch = warpEpoch_;
  a.seq = seq_++;
  a.context = context();
  a.function = frames_.back().fn;
  if (frames_.size() > 1) a.callSite = frames_[1].call;  // the kernel's own call that reached a helper
  a.guards = guards_;
  for (const Residual& r : residual_) a.guards.push_back(r.line);
  a.selectGuards = selectGuards_;
  a.warpSelectGuards = warpSelectGuards_;
  if (write) a.unchanged = unchangedStore_;
  a.inRuntimeLoop = runtimeLoops_ > 0;
  a.runtimeIter = runtimeIter_;
  a.laterIterLine = laterIterLine_;
  a.uniformArms = uniformArms_;
  a.outside = lv.outside;
  a.blockGuarded = blockGuards_ > 0;
  a.dataValues = lv.ptr.values;
  if (!a.known) a.addrTag = lv.ptr.tag, a.stepBound = lv.ptr.stepBound, a.addrBase = lv.ptr.affBase, a.addrOff = lv.ptr.affOff;
  a.paramAddr = lv.ptr.param;
  a.paramLanes = lv.ptr.paramLanes;
  a.launchArg = lv.ptr.launchArg;
  a.paramSrc = lv.ptr.paramSrc;
  a.failureGuard = failureGuards_ > 0;
  a.approxMask = approxMasks_ > 0;
  // How the address moves from block to block (global memory): from the address's values in
  // other blocks, when the threads doing this access are the same in every block.
  if (a.space == MemSpace::Global && a.known && !a.data && blockVariantDepth_ == 0 && !blockVariantAfter_ &&
      hasAlts(lv.ptr)) {
    a.stepX.assign(N_, 0);
    a.stepY.assign(N_, 0);
    a.blockLinear = true;
    if (lv.ptr.block)
      for (unsigned t = 0; t < N_ && a.blockLinear; ++t) {
        if (!a.mask[t]) continue;
        a.stepX[t] = lv.ptr.alt[0][t] - a.addr[t];
        a.stepY[t] = lv.ptr.alt[2][t] - a.addr[t];
        a.blockLinear = lv.ptr.alt[1][t] - lv.ptr.alt[0][t] == a.stepX[t];
      }
  }
  m_.accesses_.push_back(std::move(a));
}

}  // namespace gpuopt::model_detail
