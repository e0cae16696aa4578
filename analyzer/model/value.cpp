#include "analyzer/model/value.h"

#include <algorithm>
#include <functional>

namespace gpuopt {

std::string_view memSpaceName(MemSpace s) {
  switch (s) {
    case MemSpace::Global: return "global";
    case MemSpace::Shared: return "shared";
    case MemSpace::Local: return "local";
    case MemSpace::Constant: return "constant";
    default: return "unknown";
  }
}

bool LaneDomain::anyActive() const { return std::find(active_.begin(), active_.end(), 1) != active_.end(); }

Value LaneDomain::unknown() const {
  Value v;
  v.v.assign(N_, 0);
  return v;
}

Value LaneDomain::constant(int64_t c) const {
  Value v;
  v.v.assign(N_, c);
  v.known = true;
  return v;
}

namespace {
// Whether two active lanes hold different values of `x` (one entry per lane).
template <typename T>
bool differs(const std::vector<T>& x, const std::vector<uint8_t>& active) {
  // Early exit at the first difference: most varying values (thread indices) differ at once.
  bool first = true;
  T seen{};
  for (size_t t = 0; t < x.size() && t < active.size(); ++t) {
    if (!active[t]) continue;
    if (first) seen = x[t], first = false;
    else if (x[t] != seen) return true;
  }
  return false;
}
}  // namespace

bool LaneDomain::movesWithThread(const Value& v) const {
  if (v.known) return varying(v);
  if (v.affOff.size() != N_ || v.affBase.size() != N_) return false;
  return differs(v.affOff, active_);
}

bool LaneDomain::varying(const Value& v) const { return v.known && differs(v.v, active_); }

void LaneDomain::mergeFlags(Value& r, const Value& a, const Value& b) {
  r.data = a.data || b.data;
  r.symbolic = a.symbolic || b.symbolic;
  r.param = a.param || b.param;
  r.paramLanes = a.paramLanes || b.paramLanes;
  r.launchArg = a.launchArg || b.launchArg;
  r.paramSrc = a.paramSrc ? a.paramSrc : b.paramSrc;
  r.block = a.block || b.block;
  r.opaque = a.opaque || b.opaque;
  r.blockMade = a.blockMade || b.blockMade;
  r.strideSym = !a.strideSym.empty() ? a.strideSym : b.strideSym;
  r.strideSrc = !a.strideSym.empty() ? a.strideSrc : b.strideSrc;
  r.strideVal = !a.strideSym.empty() ? a.strideVal : b.strideVal;
}

bool LaneDomain::blockVariant(const Value& c) const {
  if (!c.known || !c.block) return false;
  if (!hasAlts(c)) return true;
  for (int k = 0; k < 3; ++k)
    for (unsigned t = 0; t < N_; ++t)
      if (active_[t] && (c.alt[k][t] != 0) != (c.v[t] != 0)) return true;
  return false;
}

void LaneDomain::assignMasked(Value& dst, const Value& src) const {
  if (dst.v.size() != N_) dst = unknown();
  bool anyInactive = std::find(active_.begin(), active_.end(), 0) != active_.end();
  if (!anyInactive) { dst = src; return; }
  // Other blocks' values first, while dst.v still holds the inactive threads' old values.
  if (dst.block || src.block) {
    if (hasAlts(dst) && hasAlts(src)) {
      std::array<std::vector<int64_t>, 3> na;
      for (int k = 0; k < 3; ++k) {
        na[k] = altOf(dst, k);
        const auto& s = altOf(src, k);
        for (unsigned t = 0; t < N_; ++t)
          if (active_[t]) na[k][t] = s[t];
      }
      dst.alt = std::move(na);
    } else {
      dst.alt = {};
    }
  }
  for (unsigned t = 0; t < N_; ++t)
    if (active_[t]) dst.v[t] = src.v[t];
  dst.known = src.known;
  dst.data = dst.data || src.data;
  dst.symbolic = dst.symbolic || src.symbolic;
  dst.param = dst.param || src.param;
  // Some threads keep their old value, the others take a stand-in's (`if (tid < 16) off = n;`):
  // how they differ depends on it.
  dst.paramLanes = dst.paramLanes || src.paramLanes ||
                   ((dst.param || src.param) && src.known && std::adjacent_find(dst.v.begin(), dst.v.end(), std::not_equal_to<>()) != dst.v.end());
  dst.launchArg = dst.launchArg || src.launchArg;
  if (src.paramSrc) dst.paramSrc = src.paramSrc;
  dst.block = dst.block || src.block;
  if (!src.strideSym.empty()) dst.strideSym = src.strideSym, dst.strideSrc = src.strideSrc, dst.strideVal = src.strideVal;
  dst.isPtr = src.isPtr;
  dst.base = src.base;
  dst.baseName = src.baseName;
  dst.space = src.space;
  dst.pointee = src.pointee;
  dst.ptrVolatile = src.ptrVolatile;
  dst.group = src.group;
  dst.same = false;  // threads may hold values from different assignments now
  dst.loaded = dst.loaded && src.loaded;
  dst.blockMade = dst.blockMade || src.blockMade;
  if (!src.tag.empty() || !dst.tag.empty()) {
    dst.tag.resize(N_, 0);
    for (unsigned t = 0; t < N_; ++t)
      if (active_[t]) dst.tag[t] = src.tag.empty() ? 0 : src.tag[t];
  }
  dst.values = 0;    // ... and the other threads' values are not bounded by the new one's range
  dst.stepBound = dst.stepBound == src.stepBound ? src.stepBound : 0;
  if (dst.hasHi && src.hasHi) dst.hi = std::max(dst.hi, src.hi);
  else dst.hasHi = false;
  dst.falseFor.clear();
  dst.keyTag.clear();
}

void LaneDomain::truncate(Value& v, unsigned w, bool sign) const {
  if (w >= 64 || w == 0) return;
  // Shift the low w bits to the top and back: sign- or zero-extends them, with no branch per
  // thread.
  const unsigned s = 64 - w;
  auto wrapAll = [&](std::vector<int64_t>& xs) {
    if (sign)
      for (auto& x : xs) x = static_cast<int64_t>(static_cast<uint64_t>(x) << s) >> s;
    else
      for (auto& x : xs) x = static_cast<int64_t>((static_cast<uint64_t>(x) << s) >> s);
  };
  wrapAll(v.v);
  if (v.block)
    for (auto& a : v.alt) wrapAll(a);
}

uint64_t LaneDomain::mix(uint64_t a, uint64_t b) {
  // splitmix64 of the pair: well spread, so unrelated computations do not collide in practice.
  uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + (a << 6) + (a >> 2));
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x ? x : 1;
}

uint64_t LaneDomain::laneNumber(const Value& v, unsigned t) {
  if (v.known && !v.isPtr) return mix(0x4b4e4f574eull, static_cast<uint64_t>(v.v[t]));  // "KNOWN"
  return v.tag.empty() ? 0 : v.tag[t];
}

bool LaneDomain::affineAt(const Value& v, unsigned t, uint64_t& base, int64_t& off) {
  if (v.known) return false;
  if (!v.affBase.empty()) {
    base = v.affBase[t], off = v.affOff[t];
    return base != 0;
  }
  if (v.tag.empty() || !v.tag[t]) return false;
  base = v.tag[t], off = 0;
  return true;
}

void LaneDomain::number(Value& r, uint64_t what, llvm::ArrayRef<const Value*> operands, bool commutative) const {
  r.affBase.clear();
  r.affOff.clear();
  // Made from a value another block holds differently: so is this one (value numbers are made in
  // one block; equal numbers in two blocks mean equal values only without blockIdx in them).
  for (const Value* o : operands) r.block = r.block || o->block;
  // No thread has a number when an operand has none for any thread (most values: skip the loop).
  for (const Value* o : operands)
    if (!(o->known && !o->isPtr) && o->tag.empty()) {
      r.tag.clear();
      return;
    }
  // Thread t's number, 0 when an operand has none there.
  const bool ordered = commutative && operands.size() == 2;
  auto numberAt = [&](unsigned t) -> uint64_t {
    uint64_t h = what;
    if (ordered) {
      uint64_t x = laneNumber(*operands[0], t), y = laneNumber(*operands[1], t);
      return x && y ? mix(mix(h, std::min(x, y)), std::max(x, y)) : 0;
    }
    for (const Value* o : operands) {
      uint64_t n = laneNumber(*o, t);
      if (!n) return 0;
      h = mix(h, n);
    }
    return h;
  };
  // Operands the same in every thread (constants, uniform values): one number for all threads.
  bool uniform = true;
  for (const Value* o : operands) uniform = uniform && o->known && !o->isPtr && !varying(*o);
  if (uniform) {
    unsigned t0 = 0;
    while (t0 < N_ && !active_[t0]) ++t0;
    r.tag.assign(N_, numberAt(t0 == N_ ? 0 : t0));
    return;
  }
  std::vector<uint64_t> tag(N_, 0);
  bool any = false;
  for (unsigned t = 0; t < N_; ++t) {
    tag[t] = numberAt(t);
    any = any || tag[t];
  }
  if (any) r.tag = std::move(tag);
  else r.tag.clear();
}

namespace {
[[gnu::always_inline]] inline bool applyOne(clang::BinaryOperatorKind op, int64_t x, int64_t y, bool isUnsigned, bool compareUnsigned, int64_t& z) {
  using BO = clang::BinaryOperatorKind;
  switch (op) {
    case BO::BO_Add: z = static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)); break;
    case BO::BO_Sub: z = static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y)); break;
    case BO::BO_Mul: z = static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)); break;
    case BO::BO_Div: z = y == 0 ? 0 : isUnsigned ? static_cast<int64_t>(static_cast<uint64_t>(x) / static_cast<uint64_t>(y)) : x / y; break;
    case BO::BO_Rem: z = y == 0 ? 0 : isUnsigned ? static_cast<int64_t>(static_cast<uint64_t>(x) % static_cast<uint64_t>(y)) : x % y; break;
    case BO::BO_Shl: z = (y < 0 || y > 63) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(x) << y); break;
    case BO::BO_Shr: z = (y < 0 || y > 63) ? 0 : (isUnsigned ? static_cast<int64_t>(static_cast<uint64_t>(x) >> y) : x >> y); break;
    case BO::BO_And: z = x & y; break;
    case BO::BO_Or: z = x | y; break;
    case BO::BO_Xor: z = x ^ y; break;
    case BO::BO_LT: z = compareUnsigned ? (uint64_t)x < (uint64_t)y : x < y; break;
    case BO::BO_GT: z = compareUnsigned ? (uint64_t)x > (uint64_t)y : x > y; break;
    case BO::BO_LE: z = compareUnsigned ? (uint64_t)x <= (uint64_t)y : x <= y; break;
    case BO::BO_GE: z = compareUnsigned ? (uint64_t)x >= (uint64_t)y : x >= y; break;
    case BO::BO_EQ: z = x == y; break;
    case BO::BO_NE: z = x != y; break;
    case BO::BO_LAnd: z = x && y; break;
    case BO::BO_LOr: z = x || y; break;
    default: return false;
  }
  return true;
}
}  // namespace

namespace {
// `op` over n threads with the operator fixed at compile time, so the loop has no switch inside
// and the compiler can vectorise it (this is the model's hottest loop).
template <clang::BinaryOperatorKind Op>
void applyLoop(const int64_t* x, const int64_t* y, int64_t* z, unsigned n, bool isUnsigned, bool compareUnsigned) {
  for (unsigned t = 0; t < n; ++t) applyOne(Op, x[t], y[t], isUnsigned, compareUnsigned, z[t]);
}

bool applyAll(clang::BinaryOperatorKind op, const int64_t* x, const int64_t* y, int64_t* z, unsigned n,
              bool isUnsigned, bool compareUnsigned) {
  using BO = clang::BinaryOperatorKind;
  switch (op) {
#define GPUOPT_OP(K) \
  case BO::K: applyLoop<BO::K>(x, y, z, n, isUnsigned, compareUnsigned); return true;
    GPUOPT_OP(BO_Add) GPUOPT_OP(BO_Sub) GPUOPT_OP(BO_Mul) GPUOPT_OP(BO_Div) GPUOPT_OP(BO_Rem)
    GPUOPT_OP(BO_Shl) GPUOPT_OP(BO_Shr) GPUOPT_OP(BO_And) GPUOPT_OP(BO_Or) GPUOPT_OP(BO_Xor)
    GPUOPT_OP(BO_LT) GPUOPT_OP(BO_GT) GPUOPT_OP(BO_LE) GPUOPT_OP(BO_GE) GPUOPT_OP(BO_EQ)
    GPUOPT_OP(BO_NE) GPUOPT_OP(BO_LAnd) GPUOPT_OP(BO_LOr)
#undef GPUOPT_OP
    default: return false;
  }
}
}  // namespace

bool LaneDomain::apply(clang::BinaryOperatorKind op, const Value& a, const Value& b, bool isUnsigned,
                       bool compareUnsigned, Value& r) const {
  if (!applyAll(op, a.v.data(), b.v.data(), r.v.data(), N_, isUnsigned, compareUnsigned)) {
    r.known = false;
    return false;
  }
  r.alt = {};
  if (a.block || b.block) {
    r.block = true;
    if (hasAlts(a) && hasAlts(b))
      for (int k = 0; k < 3; ++k) {
        const auto &x = altOf(a, k), &y = altOf(b, k);
        r.alt[k].resize(N_);
        applyAll(op, x.data(), y.data(), r.alt[k].data(), N_, isUnsigned, compareUnsigned);
      }
  }
  return true;
}

}  // namespace gpuopt
