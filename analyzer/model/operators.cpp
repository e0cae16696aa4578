// Operators of the kernel model: arithmetic per lane with its value numbers, the bounds that
// comparisons put on unknown integers, binary, unary, assignment and conditional operators (see
// builder.h).
#include <clang/AST/RecordLayout.h>
#include <clang/Lex/Lexer.h>

#include "analyzer/model/builder.h"

#include <algorithm>

namespace gpuopt::model_detail {

// Upper bounds of unknown integers and the threads a comparison with one is known to fail. Only
// constants count (not the stand-in values of parameters and uniform loads).
void Builder::boundUnknown(clang::BinaryOperatorKind op, const Value& a, const Value& b, Value& r) const {
  using BO = clang::BinaryOperatorKind;
  auto constOf = [&](const Value& x, int64_t& c) {
    if (!x.known || x.symbolic || x.isPtr || varying(x)) return false;
    for (unsigned t = 0; t < N_; ++t)
      if (active_[t]) { c = x.v[t]; return true; }
    return false;
  };
  const int64_t kMax = int64_t(1) << 40;
  int64_t c = 0;
  if (op == BO::BO_Mul) {
    if (a.hasHi && a.hi >= 0 && constOf(b, c) && c >= 0 && c < kMax && a.hi < kMax) r.hasHi = true, r.hi = a.hi * c;
    else if (b.hasHi && b.hi >= 0 && constOf(a, c) && c >= 0 && c < kMax && b.hi < kMax) r.hasHi = true, r.hi = b.hi * c;
  } else if (op == BO::BO_Add) {
    if (a.hasHi && constOf(b, c) && std::abs(c) < kMax && std::abs(a.hi) < kMax) r.hasHi = true, r.hi = a.hi + c;
    else if (b.hasHi && constOf(a, c) && std::abs(c) < kMax && std::abs(b.hi) < kMax) r.hasHi = true, r.hi = b.hi + c;
  } else if (op == BO::BO_And) {
    if ((constOf(b, c) || constOf(a, c)) && c >= 0) r.hasHi = true, r.hi = c;
  } else if (op == BO::BO_LT || op == BO::BO_LE || op == BO::BO_GT || op == BO::BO_GE) {
    // known < bounded: false where known >= hi (and the mirrored forms).
    const Value* k = nullptr;
    const Value* u = nullptr;
    bool knownLeft = true;
    if (a.known && !a.symbolic && !a.isPtr && !b.known && b.hasHi && b.hi >= 0) k = &a, u = &b;
    else if (b.known && !b.symbolic && !b.isPtr && !a.known && a.hasHi && a.hi >= 0) k = &b, u = &a, knownLeft = false;
    if (!k) return;
    // Normalised to "k OP u": LT/LE with k on the left, GT/GE with k on the right mirror.
    BO rel = op;
    if (!knownLeft) rel = op == BO::BO_LT ? BO::BO_GT : op == BO::BO_LE ? BO::BO_GE : op == BO::BO_GT ? BO::BO_LT : BO::BO_LE;
    std::vector<uint8_t> never(N_, 0);
    bool any = false;
    for (unsigned t = 0; t < N_; ++t) {
      int64_t x = k->v[t];
      if (x < 0) continue;
      bool fails = (rel == BO::BO_LT && x >= u->hi) || (rel == BO::BO_LE && x > u->hi);  // k < u, k <= u
      never[t] = fails;
      any = any || fails;
    }
    if (any) r.falseFor = std::move(never);
  }
}

// r.affBase/affOff from x's per active thread, each mapped by f(thread, base, offset) (false: none).
template <typename F>
void Builder::mapAffine(const Value& x, Value& r, F f) const {
  std::vector<uint64_t> base(N_, 0);
  std::vector<int64_t> off(N_, 0);
  for (unsigned t = 0; t < N_; ++t) {
    if (!active_[t]) continue;
    if (!affineAt(x, t, base[t], off[t]) || !f(t, base[t], off[t])) return;
  }
  r.affBase = std::move(base);
  r.affOff = std::move(off);
}

// `x + k`, `x - k`, `k + x` with k known per thread, `x * c`, `x << c` with c known and the same for
// every thread: a known distance from x's base (Value::affBase), when every active thread has one.
void Builder::keepAffine(clang::BinaryOperatorKind op, const Value& a, const Value& b, Value& r) const {
  using BO = clang::BinaryOperatorKind;
  r.affBase.clear(), r.affOff.clear();
  if (r.known || a.isPtr || b.isPtr) return;
  const bool addSub = op == BO::BO_Add || op == BO::BO_Sub;
  const bool scale = op == BO::BO_Mul || op == BO::BO_Shl;
  if (!addSub && !scale) return;
  const Value* x = nullptr;
  const Value* k = nullptr;
  if (!a.known && b.known) x = &a, k = &b;
  else if (a.known && !b.known && (op == BO::BO_Add || op == BO::BO_Mul)) x = &b, k = &a;
  if (!x) return;
  if (scale && varying(*k)) return;
  mapAffine(*x, r, [&](unsigned t, uint64_t& xb, int64_t& xo) {
    const int64_t c = k->v[t];
    if (addSub) {
      xo = op == BO::BO_Add ? xo + c : xo - c;
      return true;
    }
    const int64_t f = op == BO::BO_Mul ? c : (c >= 0 && c < 62 ? int64_t(1) << c : 0);
    if (f == 0) return false;
    xb = mix(mix(0x5343414cull, xb), static_cast<uint64_t>(f));  // "SCAL"
    xo *= f;
    return true;
  });
}

// A pointer not known per thread (a data-dependent index): numbered per thread from the pointer it
// moves and the index's number, so threads with equal numbers point at one address (a warp whose
// lanes all load `key[item]` for one item, then index with it).
// Whether every active lane of each warp holds the same value (known, or numbered alike).
bool Builder::sameInEachWarp(const Value& x) const {
  if (x.isPtr) return false;
  for (unsigned w = 0; w * 32 < N_; ++w) {
    int first = -1;
    for (unsigned t = w * 32; t < std::min(N_, w * 32 + 32); ++t) {
      if (!active_[t]) continue;
      if (!x.known && laneNumber(x, t) == 0) return false;
      if (first < 0) {
        first = static_cast<int>(t);
        continue;
      }
      const unsigned f = static_cast<unsigned>(first);
      if (x.known ? x.v[t] != x.v[f] : laneNumber(x, t) != laneNumber(x, f)) return false;
    }
  }
  return true;
}

// `rank + k`, `rank - k`, `k + rank` with k the same for a warp's lanes, `rank * c` with c a
// constant: neighbouring lanes still differ by at most the rank's bound (scaled by c).
void Builder::keepStepBound(clang::BinaryOperatorKind op, const Value& a, const Value& b, Value& r) const {
  using BO = clang::BinaryOperatorKind;
  r.stepBound = 0;
  if (r.known || a.isPtr || b.isPtr) return;
  const Value* x = a.stepBound ? &a : b.stepBound && op != BO::BO_Sub ? &b : nullptr;
  if (!x) return;
  const Value& k = x == &a ? b : a;
  if (k.stepBound) return;
  if ((op == BO::BO_Add || op == BO::BO_Sub) && sameInEachWarp(k)) r.stepBound = x->stepBound;
  else if (op == BO::BO_Mul && k.known && !varying(k) && !k.symbolic)
    r.stepBound = x->stepBound * (k.v[0] < 0 ? -k.v[0] : k.v[0]);
}

void Builder::numberAddress(Value& r, const Value& ptr, const Value& idx) const {
  r.tag.clear();
  r.affBase.clear(), r.affOff.clear();
  if (r.known || !ptr.base) return;
  std::vector<uint64_t> tag(N_, 0);
  bool any = false;
  const uint64_t from = mix(0x41444452ull, reinterpret_cast<uintptr_t>(ptr.base));  // "ADDR"
  for (unsigned t = 0; t < N_; ++t) {
    uint64_t p = ptr.known ? mix(from, static_cast<uint64_t>(ptr.v[t])) : ptr.tag.empty() ? 0 : ptr.tag[t];
    uint64_t i = laneNumber(idx, t);
    if (p && i) tag[t] = mix(p, i), any = true;
  }
  if (any) r.tag = std::move(tag);
  // A known pointer moved by an index a known distance from a value: the address is that distance
  // (in bytes) from one numbered by the pointer's array and the value.
  if (ptr.known && ptr.pointee && !idx.known && !idx.isPtr)
    mapAffine(idx, r, [&](unsigned t, uint64_t& ib, int64_t& io) {
      ib = mix(from, ib);
      io = ptr.v[t] + io * static_cast<int64_t>(ptr.pointee);
      return true;
    });
  // A pointer a known distance from a numbered one (`out + rowStart[row]`, or a pointer loaded from
  // memory) moved by an index known per thread (`+ threadIdx.x`, `o[j]`): the same base, that many
  // bytes further (a row gather whose lanes run along the row).
  if (!ptr.known && ptr.pointee && idx.known && !idx.isPtr)
    mapAffine(ptr, r, [&](unsigned t, uint64_t&, int64_t& po) {
      po += idx.v[t] * static_cast<int64_t>(ptr.pointee);
      return true;
    });
}

Value Builder::arith(clang::BinaryOperatorKind op, const Value& a, const Value& b, clang::QualType type, const clang::Expr* lhsE, const clang::Expr* rhsE) {
  using BO = clang::BinaryOperatorKind;
  // Pointer arithmetic.
  if ((op == BO::BO_Add || op == BO::BO_Sub) && (a.isPtr || b.isPtr)) {
    if (a.isPtr && b.isPtr) {  // difference
      Value r = unknown();
      if (a.known && b.known && a.pointee) {
        r.known = true;
        for (unsigned t = 0; t < N_; ++t) r.v[t] = (a.v[t] - b.v[t]) / static_cast<int64_t>(a.pointee);
        if (a.block || b.block) {
          r.block = true;
          if (hasAlts(a) && hasAlts(b))
            for (int k = 0; k < 3; ++k) {
              r.alt[k].resize(N_);
              for (unsigned t = 0; t < N_; ++t)
                r.alt[k][t] = (altOf(a, k)[t] - altOf(b, k)[t]) / static_cast<int64_t>(a.pointee);
            }
        }
      }
      return r;
    }
    const Value& p = a.isPtr ? a : b;
    const Value& i = a.isPtr ? b : a;
    Value r = p;
    mergeFlags(r, p, i);
    r.known = p.known && i.known;
    r.same = uniformish(p) && uniformish(i);  // `shared + cap`: one address for every thread
    if (r.known)
      for (unsigned t = 0; t < N_; ++t)
        r.v[t] = p.v[t] + (op == BO::BO_Sub ? -1 : 1) * i.v[t] * static_cast<int64_t>(p.pointee);
    r.alt = {};
    if (r.known && r.block && hasAlts(p) && hasAlts(i))
      for (int k = 0; k < 3; ++k) {
        r.alt[k].resize(N_);
        for (unsigned t = 0; t < N_; ++t)
          r.alt[k][t] = altOf(p, k)[t] + (op == BO::BO_Sub ? -1 : 1) * altOf(i, k)[t] * static_cast<int64_t>(p.pointee);
      }
    if (movesWithThread(i) && !i.strideSym.empty()) r.strideSym = i.strideSym, r.strideSrc = i.strideSrc, r.strideVal = i.strideVal;
    numberAddress(r, p, op == BO::BO_Sub ? unknown() : i);
    return r;
  }
  Value r = unknown();
  mergeFlags(r, a, b);
  // A sum of two symbol-scaled terms (`(j2 * Sx) + ix * scalex`): the stride said between adjacent
  // threads is the symbol of the term that moves along threadIdx.x (mumax's resize, tenth stop
  // check, named the row term 'scaley * Sx' for lanes 'scalex' apart).
  if ((op == BO::BO_Add || op == BO::BO_Sub) && !a.strideSym.empty() && !b.strideSym.empty() && a.known && b.known &&
      m_.blockX() >= 2 && a.v.size() >= 2 && b.v.size() >= 2 && a.v[0] == a.v[1] && b.v[0] != b.v[1])
    r.strideSym = b.strideSym, r.strideSrc = b.strideSrc, r.strideVal = b.strideVal;
  r.known = a.known && b.known;
  r.same = uniformish(a) && uniformish(b);
  if (op == BO::BO_Mul) {
    // A thread-varying term scaled by a uniform symbol: remember the symbol's text.
    // Also over a base known only at run time (`(row_beg + write + block) * block_size` with
    // `write` a count from shared memory): the lanes are still the symbol's multiples apart.
    // A term already scaled by a symbol and scaled again (`(w + ...) * height_col * width_col`):
    // the lanes are the product apart, said as such ('height_col * width_col'), not as the last
    // symbol with the other's stand-in as a figure ("4096 * 'width_col'": darknet's col2im, ninth
    // stop check).
    auto scale = [&](const Value& moving, const Value& sym, const clang::Expr* symE) {
      const int64_t val = sym.v.empty() ? 0 : sym.v[0];
      // The moving term's own step between x-neighbours: a symbol it was scaled by and then
      // divided by another (`(row * 2 * n + col - n) / (2 * n - 1)`, one per row: xfaster's
      // relShiftBd, tenth stop check) no longer scales it, and the product is not its stride.
      const bool stillScaled = moving.strideVal <= 0 || m_.blockX() < 2 || moving.v.size() < 2 ||
                               moving.v[1] == moving.v[0] || std::abs(moving.v[1] - moving.v[0]) * 2 >= moving.strideVal;
      if (!moving.strideSym.empty() && moving.strideVal > 0 && val > 0 && moving.strideVal < (int64_t(1) << 30) &&
          val < (int64_t(1) << 30) && stillScaled) {
        r.strideSym = moving.strideSym + " * " + strideText(symE);
        r.strideVal = moving.strideVal * val;
        r.strideSrc = nullptr;
      } else {
        r.strideSym = strideText(symE), r.strideSrc = sym.paramSrc, r.strideVal = val;
      }
    };
    if (b.known && b.symbolic && !varying(b) && movesWithThread(a)) scale(a, b, rhsE);
    else if (a.known && a.symbolic && !varying(a) && movesWithThread(b)) scale(b, a, lhsE);
  }
  if (!r.known) {
    // A data value masked or reduced by a constant: how many values it can take (histogram bins).
    auto constOf = [&](const Value& x, int64_t& c) { return x.known && !varying(x) && !x.symbolic && (c = x.v[0], true); };
    int64_t c = 0;
    if (op == BO::BO_And && ((a.data && constOf(b, c)) || (b.data && constOf(a, c))) && c >= 0 && c < (int64_t(1) << 20))
      r.values = int64_t(1) << __builtin_popcountll(static_cast<uint64_t>(c));
    else if (op == BO::BO_Rem && a.data && constOf(b, c) && c > 0 && c < (int64_t(1) << 20))
      r.values = type->isUnsignedIntegerOrEnumerationType() ? c : 2 * c - 1;
    if (op == BO::BO_Mul && ((a.known && !varying(a) && a.v[0] == 0) || (b.known && !varying(b) && b.v[0] == 0))) return constant(0);
    boundUnknown(op, a, b, r);
    const bool commutative = op == BO::BO_Add || op == BO::BO_Mul || op == BO::BO_And || op == BO::BO_Or ||
                             op == BO::BO_Xor || op == BO::BO_EQ || op == BO::BO_NE;
    number(r, mix(0x42494eull ^ static_cast<uint64_t>(op), reinterpret_cast<uintptr_t>(type.getCanonicalType().getAsOpaquePtr())),
           {&a, &b}, commutative);  // "BIN": the operator and the type it computes in
    keepAffine(op, a, b, r);
    keepStepBound(op, a, b, r);
    return r;
  }
  bool compareUnsigned = lhsE && lhsE->getType()->isUnsignedIntegerOrEnumerationType();
  if (!apply(op, a, b, type->isUnsignedIntegerOrEnumerationType(), compareUnsigned, r)) return r;
  if (clang::BinaryOperator::isComparisonOp(op) || clang::BinaryOperator::isLogicalOp(op)) r.strideSym.clear();
  else normalize(r, type);
  // A quotient of two stand-ins (`(in_w + pad - size) / stride_x + 1`, `n / kernel_area`) is a
  // run-time value of any size, not the 1 or 0 their stand-ins divide to: darknet's pooling kernels
  // got an output width of 2 from it, and lanes 4096 * 'stride_x' apart (ninth stop check). It is
  // a stand-in of its own.
  if (op == BO::BO_Div && r.known && a.param && b.param && !a.launchArg && !b.launchArg && a.symbolic && b.symbolic && !varying(a) && !varying(b) &&
      !r.block && !b.v.empty() && b.v[0] > 1)
    std::fill(r.v.begin(), r.v.end(), kParamRep);
  // Does the stand-in now shape how threads differ? Not through + and -, nor through scaling by a
  // constant the code gives (`(tid + n) * 4`): through anything else that mixes it with a
  // thread-varying value (`tid * n`, `(tid + seed) % 64`, `tid < n`).
  if (!r.paramLanes && (a.param || b.param) && varying(r) && op != BO::BO_Add && op != BO::BO_Sub) {
    auto givenConstant = [&](const Value& x) { return x.known && !x.param && !varying(x); };
    const bool scaled = (op == BO::BO_Mul && (givenConstant(a) || givenConstant(b))) || (op == BO::BO_Shl && givenConstant(b));
    r.paramLanes = !scaled;
  }
  // Threads that differ made alike by a stand-in divisor (`index / channel_size`: one value for the
  // whole block under the stand-in 4096, as many as the run-time size gives): the stand-in shapes
  // how they differ too (darknet's channel gradients, ninth stop check).
  if (!r.paramLanes && b.param && b.symbolic && !varying(b) && varying(a) && !varying(r) &&
      (op == BO::BO_Div || op == BO::BO_Rem || op == BO::BO_Shr))
    r.paramLanes = true;
  return r;
}

std::string Builder::text(const clang::Expr* e) const {
  if (!e) return {};
  auto& sm = ctx_.getSourceManager();
  auto range = clang::CharSourceRange::getTokenRange(sm.getExpansionRange(e->getSourceRange()).getAsRange());
  std::string s = clang::Lexer::getSourceText(range, sm, ctx_.getLangOpts()).str();
  std::string out;  // on one line, blanks collapsed (a CRLF file's carriage returns too)
  for (char c : s) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(c);
  }
  if (out.size() > 40) out = out.substr(0, 37) + "...";
  return out;
}

// A stride as the source's own variables: the text as written, or for an operand that comes
// out of a macro (`IDX(col, row, m)`), the expression the macro made ("m", "(n + 1)"), never the
// macro call's text.
std::string Builder::strideText(const clang::Expr* e) const {
  if (!e) return {};
  if (!e->getBeginLoc().isMacroID() && !e->getEndLoc().isMacroID()) return text(e);
  std::string s;
  llvm::raw_string_ostream os(s);
  e->IgnoreParenImpCasts()->printPretty(os, nullptr, clang::PrintingPolicy(ctx_.getLangOpts()));
  os.flush();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

// `atomicCAS(&flag, A, B) == A` with A != B on one address for every thread: the first thread to
// swap takes the branch, the others find B (the first thread to report an error, a lock's
// winner): at most one thread of the grid passes. Its own function, kept out of line, so that
// evalBinary's frame (deep expressions recurse through it) does not grow by its locals.
__attribute__((noinline)) bool Builder::casWinner(const clang::Expr* callE, const clang::Expr* otherE, size_t accessesBefore) const {
  const auto* ce = llvm::dyn_cast<clang::CallExpr>(callE->IgnoreParenCasts());
  const clang::FunctionDecl* fd = ce ? ce->getDirectCallee() : nullptr;
  if (!fd || !fd->getIdentifier() || fd->getName() != "atomicCAS" || ce->getNumArgs() != 3) return false;
  clang::Expr::EvalResult expected, desired, other;
  if (ce->getArg(1)->isValueDependent() || ce->getArg(2)->isValueDependent() || otherE->isValueDependent() ||
      !ce->getArg(1)->EvaluateAsInt(expected, ctx_) || !ce->getArg(2)->EvaluateAsInt(desired, ctx_) ||
      !otherE->IgnoreParenCasts()->EvaluateAsInt(other, ctx_))
    return false;
  if (expected.Val.getInt().getSExtValue() == desired.Val.getInt().getSExtValue() ||
      expected.Val.getInt().getSExtValue() != other.Val.getInt().getSExtValue())
    return false;
  // The atomic this comparison evaluated: one address for every active thread.
  for (size_t i = m_.accesses_.size(); i-- > accessesBefore;) {
    const Access& x = m_.accesses_[i];
    if (!x.isAtomic) continue;
    if (!x.known) return false;
    std::optional<int64_t> at;
    for (unsigned t = 0; t < N_ && t < x.addr.size(); ++t)
      if (t < x.mask.size() && x.mask[t]) {
        if (at && *at != x.addr[t]) return false;
        at = x.addr[t];
      }
    return at.has_value();
  }
  return false;
}
  // `rowIdx[e] == pivot`: a value each thread loaded from its own element, compared with one value
  // of the block, selects the thread whose key matches (one, when the keys are distinct).
__attribute__((noinline)) void Builder::selectionsOf(const clang::BinaryOperator* bo, const Value& a, const Value& b, size_t accessesBefore) {
  using BO = clang::BinaryOperatorKind;
  if (casWinner(bo->getLHS(), bo->getRHS(), accessesBefore) || casWinner(bo->getRHS(), bo->getLHS(), accessesBefore))
    selections_.insert(bo);
    auto distinctKeys = [&](const Value& v) {
      if (v.known || !v.data || !v.loaded || v.tag.size() != N_) return false;
      std::set<uint64_t> seen;
      for (unsigned t = 0; t < N_; ++t)
        if (active_[t] && (!v.tag[t] || !seen.insert(v.tag[t]).second)) return false;
      return seen.size() > 1;
    };
    // The value compared with is an input (a parameter, a load from global memory), not one the
    // block made (a minimum reduced in shared memory: ties are likely, HeCBench tsp).
    // Not a constant of the program (`aggregates[i] == -1`, `cf_map[i] == COARSE`: a status flag
    // many elements share, not a key; held-out wave 3, AMGX).
    auto input = [&](const Value& v) { return uniformish(v) && !v.data && !v.blockMade && (!v.known || v.symbolic); };
    // ... or a key some threads loaded and the others hold a constant for, compared with a known
    // value that never equals that constant in any block: exactly, or, for a value made from
    // blockIdx that does not fall as blockIdx grows (its steps to the next blocks), below its
    // value in block 0.
    auto keyed = [&](const Value& v, const Value& other) {
      if (distinctKeys(v)) return true;
      if (v.keyTag.size() != N_ || !other.known || other.param || other.v.size() != N_) return false;
      if (other.symbolic && (!other.block || other.alt[0].size() != N_ || other.alt[2].size() != N_)) return false;
      std::set<uint64_t> seen;
      for (unsigned t = 0; t < N_; ++t) {
        if (!active_[t]) continue;
        if (!v.keyTag[t] || !seen.insert(v.keyTag[t]).second || other.v[t] == v.keyOr) return false;
        if (other.symbolic) {
          const int64_t sx = other.alt[0][t] - other.v[t], sy = other.alt[2][t] - other.v[t];
          if (sx < 0 || sy < 0 || v.keyOr >= other.v[t] - (sx + sy) * kBlockIdxRep) return false;
        }
      }
      return seen.size() > 1;
    };
    if ((input(a) && keyed(b, a)) || (input(b) && keyed(a, b))) selections_.insert(bo);
    // One known value per warp that differs between warps (`row = blockIdx.x * W + warp`, a row
    // per warp; AMGX's distance-2 interpolation and greedy selector look their row up among a
    // row's distinct columns): at most one thread of each warp matches.
    auto perWarp = [&](const Value& v) {
      if (!v.known || v.data || v.v.size() != N_ || !(v.symbolic || varying(v))) return false;
      for (unsigned t = 0; t < N_; ++t)
        for (unsigned u = t + 1; u < N_ && u / 32 == t / 32; ++u)
          if (active_[t] && active_[u] && v.v[t] != v.v[u]) return false;
      return true;
    };
    if (!selections_.count(bo) && ((perWarp(a) && keyed(b, a)) || (perWarp(b) && keyed(a, b))))
      warpSelections_.insert(bo);
    // `threadIdx.x == s_owner`: a thread index (known, a different value in every active thread)
    // compared with one value of the block that is not known, whatever made it (a minimum reduced
    // in shared memory too: ties between keys do not matter when the keys are the threads' own
    // indices): at most one thread takes it (lightseq's top-p sampling picks its thread so).
    auto distinctIndex = [&](const Value& v) {
      if (!v.known || v.data || v.v.size() != N_) return false;
      std::set<int64_t> seen;
      for (unsigned t = 0; t < N_; ++t)
        if (active_[t] && !seen.insert(v.v[t]).second) return false;
      return seen.size() > 1;
    };
    auto oneUnknown = [&](const Value& v) { return !v.known && v.same; };
    if ((oneUnknown(a) && distinctIndex(b)) || (oneUnknown(b) && distinctIndex(a))) selections_.insert(bo);
    // The same within each warp: `min(32 * (warp + 1), count) - 1 == tid`, one value per warp that
    // is not known (a count the data gives) compared with a different thread index in every lane:
    // at most one lane of each warp takes it (moderngpu's cta_scan stores each warp's total so;
    // eleventh stop check).
    auto distinctInEachWarp = [&](const Value& v) {
      if (!v.known || v.data || v.v.size() != N_) return false;
      bool some = false;
      for (unsigned t = 0; t < N_; ++t)
        for (unsigned u = t + 1; u < N_ && u / 32 == t / 32; ++u)
          if (active_[t] && active_[u]) {
            if (v.v[t] == v.v[u]) return false;
            some = true;
          }
      return some;
    };
    auto onePerWarp = [&](const Value& v) { return !v.known && !v.isPtr && sameInEachWarp(v); };
    if (!selections_.count(bo) && ((onePerWarp(a) && distinctInEachWarp(b)) || (onePerWarp(b) && distinctInEachWarp(a))))
      warpSelections_.insert(bo);
}


Value Builder::evalBinary(const clang::BinaryOperator* bo) {
  using BO = clang::BinaryOperatorKind;
  auto op = bo->getOpcode();
  if (op == BO::BO_Comma) {
    eval(bo->getLHS());
    return eval(bo->getRHS());
  }
  if (op == BO::BO_LAnd || op == BO::BO_LOr) {
    Value a = eval(bo->getLHS());
    if (a.opaque) a.known = false;  // a stand-in for a value nothing is known about: not decided
    Mask saved = active_;
    bool variant = blockVariant(a);  // other blocks' threads evaluate the right-hand side differently
    if (a.known)
      for (unsigned t = 0; t < N_; ++t)
        if (active_[t] && ((a.v[t] != 0) == (op == BO::BO_LOr))) active_[t] = 0;
    enterBlockVariant(variant, nullptr);
    // A left-hand side over stand-in values that sends every thread past the right-hand side
    // (`include_sign == true && x[i] < 0` with a bool parameter's stand-in) must not hide it: the
    // right-hand side is evaluated with the threads that got here, as a guess (approxMasks_), as
    // an if's body under such a guard is.
    const bool approx = a.known && a.symbolic && !anyActive() && std::find(saved.begin(), saved.end(), 1) != saved.end();
    if (approx) active_ = saved, ++approxMasks_;
    Value b = anyActive() ? eval(bo->getRHS()) : constant(0);
    if (approx) --approxMasks_;
    if (b.opaque) b.known = false;
    leaveBlockVariant(variant);
    active_ = saved;
    Value r = unknown();
    mergeFlags(r, a, b);
    r.strideSym.clear();
    if (a.known) {
      r.known = true;
      auto logic = [&](const std::vector<int64_t>& av, const std::vector<int64_t>& bv, std::vector<int64_t>& out) {
        for (unsigned t = 0; t < N_; ++t) {
          bool x = av[t] != 0;
          if (op == BO::BO_LAnd) out[t] = x ? (b.known ? bv[t] != 0 : 0) : 0;
          else out[t] = x ? 1 : (b.known ? bv[t] != 0 : 0);
        }
      };
      logic(a.v, b.v, r.v);
      if (r.block && hasAlts(a) && hasAlts(b))
        for (int k = 0; k < 3; ++k) {
          r.alt[k].resize(N_);
          logic(altOf(a, k), altOf(b, k), r.alt[k]);
        }
      // Threads whose result depends on an unknown right-hand side.
      if (!b.known)
        for (unsigned t = 0; t < N_; ++t)
          if (active_[t] && ((a.v[t] != 0) == (op == BO::BO_LAnd))) { r.known = false; break; }
    }
    // Not known: equal operands give an equal result.
    if (!r.known) number(r, mix(0x4c4f474943ull, op), {&a, &b});  // "LOGIC"
    // `e < len && rowIdx[e] == pivot`: a conjunction with a selection selects.
    if (op == BO::BO_LAnd && (selections_.count(strip(bo->getLHS())) || selections_.count(strip(bo->getRHS()))))
      selections_.insert(bo);
    else if (op == BO::BO_LAnd &&
             (warpSelections_.count(strip(bo->getLHS())) || warpSelections_.count(strip(bo->getRHS()))))
      warpSelections_.insert(bo);
    // `flag && threadIdx.x == 0` with an unknown flag: known false for every thread but 0.
    if (!r.known && op == BO::BO_LAnd) {
      std::vector<uint8_t> never(N_, 0);
      bool any = false;
      for (unsigned t = 0; t < N_; ++t) {
        const bool aFalse = (a.known && a.v[t] == 0) || (!a.falseFor.empty() && a.falseFor[t]);
        const bool bFalse = (b.known && b.v.size() == N_ && b.v[t] == 0) || (!b.falseFor.empty() && b.falseFor[t]);
        never[t] = active_[t] && (aFalse || bFalse);
        any = any || never[t];
      }
      if (any) r.falseFor = std::move(never);
    }
    return r;
  }
  if (bo->isAssignmentOp()) return evalAssign(bo);
  const size_t accessesBefore = m_.accesses_.size();
  Value a = eval(bo->getLHS());
  Value b = eval(bo->getRHS());
  // A pointer compared with another pointer or with null: the model's pointer values are offsets
  // from their own base, not addresses, so the comparison is decided only between offsets of one
  // base. (A null pointer every launch passes is the constant 0, not a pointer, and compares with
  // the null constant as 0 with 0.)
  if (bo->isComparisonOp() && (a.isPtr || b.isPtr) && !(a.isPtr && b.isPtr && a.base && a.base == b.base)) {
    Value r = unknown();
    r.same = uniformish(a) && uniformish(b);
    return r;
  }
  // Selections (`x == key`, `atomicCAS(...) == A`, one lane per warp): out of line, so that this
  // frame, which deep expressions recurse through, stays small.
  if (op == BO::BO_EQ) selectionsOf(bo, a, b, accessesBefore);
  return arith(op, a, b, bo->getType(), bo->getLHS(), bo->getRHS());
}

Value Builder::evalAssign(const clang::BinaryOperator* bo) {
  using BO = clang::BinaryOperatorKind;
  auto op = bo->getOpcode();
  Value rhs = eval(bo->getRHS());
  LVal lv = evalLValue(bo->getLHS());
  Value result = rhs;
  if (op != BO::BO_Assign) {
    Value cur = lv.kind == LVal::Var ? readVar(lv.var) : lv.kind == LVal::Mem ? readMem(lv) : unknown();
    auto cop = static_cast<const clang::CompoundAssignOperator*>(bo);
    const BO bop = clang::BinaryOperator::getOpForCompoundAssignment(op);
    result = arith(bop, cur, rhs, cop->getComputationResultType(), bo->getLHS(), bo->getRHS());
    // `buf[i] += 0` (kaldi's tree sum: the threads past the active half add a zero): the thread
    // writes back the value it read (Access::unchanged).
    if (lv.kind == LVal::Mem && (bop == BO::BO_Add || bop == BO::BO_Sub || bop == BO::BO_Or || bop == BO::BO_Xor ||
                                 bop == BO::BO_Shl || bop == BO::BO_Shr)) {
      for (unsigned t = 0; t < N_; ++t)
        if (active_[t] && zeroAt(rhs, t)) unchangedStore_.resize(N_, 0), unchangedStore_[t] = 1;
    }
  }
  normalize(result, bo->getLHS()->getType());
  retype(result, bo->getLHS()->getType());
  writeLVal(lv, result);
  unchangedStore_.clear();
  return result;
}

Value Builder::evalUnary(const clang::UnaryOperator* uo) {
  using UO = clang::UnaryOperatorKind;
  switch (uo->getOpcode()) {
    case UO::UO_Deref: {
      LVal lv = evalLValue(uo);
      return lv.kind == LVal::Mem ? readMem(lv) : unknown();
    }
    case UO::UO_AddrOf: {
      LVal lv = evalLValue(uo->getSubExpr());
      if (lv.kind == LVal::Mem) {
        Value p = lv.ptr;
        p.pointee = lv.size;
        return p;
      }
      // The address of a scalar variable escapes (`pointer_swap((void**)&a, (void**)&b)`,
      // HeCBench seam-carving's double buffer): what is written through it is not followed, so
      // the variable's value is not known from here on.
      if (lv.kind == LVal::Var) writeVar(lv.var, unknown());
      return unknown();
    }
    case UO::UO_PreInc: case UO::UO_PreDec: case UO::UO_PostInc: case UO::UO_PostDec: {
      LVal lv = evalLValue(uo->getSubExpr());
      Value cur = lv.kind == LVal::Var ? readVar(lv.var) : lv.kind == LVal::Mem ? readMem(lv) : unknown();
      Value one = constant(1);
      Value nv = arith(uo->isIncrementOp() ? clang::BO_Add : clang::BO_Sub, cur, one,
                       uo->getSubExpr()->getType(), nullptr, nullptr);
      writeLVal(lv, nv);
      return uo->isPrefix() ? nv : cur;
    }
    default: break;
  }
  Value a = eval(uo->getSubExpr());
  if (!a.known) {
    Value r = a;
    number(r, mix(0x554e41ull, uo->getOpcode()), {&a});  // "UNA"
    return r;
  }
  Value r = a;
  r.isPtr = false;
  auto una = [&](int64_t& x) {
    switch (uo->getOpcode()) {
      case UO::UO_Minus: x = -x; break;
      case UO::UO_Not: x = ~x; break;
      case UO::UO_LNot: x = !x; break;
      case UO::UO_Plus: break;
      default: r.known = false; break;
    }
  };
  for (auto& x : r.v) una(x);
  eachAlt(r, una);
  if (uo->getOpcode() == UO::UO_LNot) r.strideSym.clear();
  normalize(r, uo->getType());
  return r;
}

Value Builder::evalConditional(const clang::AbstractConditionalOperator* co) {
  Value c = eval(co->getCond());
  if (c.opaque) c.known = false;  // a stand-in for a value nothing is known about: not decided
  // Arms of ?: that only load or compute are predicated by the compiler: only calls count as work.
  recordBranch(co, co->getCond(), c, containsCall(co->getTrueExpr()), containsCall(co->getFalseExpr()), false);
  Mask saved = active_;
  Mask tm = saved, fm = saved;
  if (c.known)
    for (unsigned t = 0; t < N_; ++t) {
      tm[t] = saved[t] && c.v[t] != 0;
      fm[t] = saved[t] && c.v[t] == 0;
    }
  bool variant = blockVariant(c);  // other blocks' threads take other arms
  enterBlockVariant(variant, nullptr);
  // An arm no thread takes under stand-in values (`off == 0 ? in[n - 1 - x] : in[off - 1 + x]`
  // with `off` a parameter's stand-in) is still walked, with every thread as a guess (approxMask),
  // as an `if` over stand-ins is: other values take it. Its value is not used.
  auto arm = [&](const Mask& m, const clang::Expr* x) {
    if (std::find(m.begin(), m.end(), 1) != m.end()) {
      active_ = m;
      return eval(x);
    }
    if (c.known && c.symbolic && std::find(saved.begin(), saved.end(), 1) != saved.end()) {
      active_ = saved;
      ++approxMasks_;
      eval(x);
      --approxMasks_;
    } else {
      decided(x);  // no thread takes it: dead for these values (`get(0)` of `i == 2 ? z : (i ? y : x)`)
    }
    return unknown();
  };
  Value a = arm(tm, co->getTrueExpr());
  Value b = arm(fm, co->getFalseExpr());
  active_ = saved;
  leaveBlockVariant(variant);
  Value r = a.isPtr ? a : b.isPtr ? b : unknown();
  mergeFlags(r, a, b);
  r.data = r.data || c.data;
  r.symbolic = r.symbolic || c.symbolic;
  r.param = r.param || c.param;
  r.known = c.known && (a.known || std::find(tm.begin(), tm.end(), 1) == tm.end()) &&
            (b.known || std::find(fm.begin(), fm.end(), 1) == fm.end());
  for (unsigned t = 0; t < N_; ++t) r.v[t] = (c.known && c.v[t]) ? a.v[t] : b.v[t];
  // Threads that take different arms, or a choice made on a stand-in: how they differ depends on it.
  if (r.param && varying(r) && (c.param || !c.known || varying(c))) r.paramLanes = true;
  // Other blocks' values: each thread's arm there, when every thread takes the same arm in every
  // block (else not known).
  r.block = r.block || c.block;
  r.alt = {};
  if (r.known && r.block && !variant && hasAlts(a) && hasAlts(b))
    for (int k = 0; k < 3; ++k) {
      const auto &x = altOf(a, k), &y = altOf(b, k);
      r.alt[k].resize(N_);
      for (unsigned t = 0; t < N_; ++t) r.alt[k][t] = c.v[t] ? x[t] : y[t];
    }
  // A condition and arms each the same for every thread: one value for every thread.
  if (!r.known) r.same = uniformish(c) && uniformish(a) && uniformish(b);
  if (!r.known && c.known && !r.isPtr) {  // each thread's arm, numbered
    r.tag.assign(N_, 0);
    for (unsigned t = 0; t < N_; ++t) r.tag[t] = laneNumber(c.v[t] ? a : b, t);
  } else if (!r.known && !r.isPtr) {
    // An unknown condition: every thread evaluated both arms; equal conditions and arms select
    // equal values.
    number(r, 0x53454cull, {&c, &a, &b});  // "SEL"
  }
  return r;
}

}  // namespace gpuopt::model_detail
