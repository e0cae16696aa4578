// Expressions, lvalues and memory accesses of the kernel model: what each thread computes and
// which addresses it touches (see builder.h).
#include <clang/AST/RecordLayout.h>
#include <clang/Lex/Lexer.h>

#include "analyzer/model/builder.h"

#include <algorithm>

namespace gpuopt::model_detail {

void Builder::normalize(Value& v, clang::QualType t) const {
  if (!v.known || v.isPtr) return;
  t = t.getCanonicalType();
  if (!t->isIntegralOrEnumerationType()) {
    if (t->isRealFloatingType()) {
      v.same = uniformish(v);
      // Converted from known values: threads converting equal values hold equal floats (the
      // number survives a later assignment under a partial mask, where `same` does not).
      number(v, mix(0x464c4f4154ull, reinterpret_cast<uintptr_t>(t.getAsOpaquePtr())), {&v});  // "FLOAT"
      v.known = false;
    }
    return;
  }
  truncate(v, static_cast<unsigned>(ctx_.getTypeSize(t)), t->isSignedIntegerOrEnumerationType());
}

// A pointer stored into a variable of another pointer type takes that type's pointee: `volatile
// int* vs = sdata;` reads and writes volatile (the qualifying conversion is a no-op cast that
// strip() looks through).
void Builder::retype(Value& v, clang::QualType t) const {
  if (!v.isPtr || !t->isPointerType()) return;
  clang::QualType pt = t->getPointeeType();
  v.ptrVolatile = v.ptrVolatile || pt.isVolatileQualified();
  if (!pt->isIncompleteType() && !pt->isVoidType()) v.pointee = ctx_.getTypeSizeInChars(pt).getQuantity();
}

Value Builder::paramValue(const clang::ParmVarDecl* p) {
  clang::QualType t = p->getType();
  if (t->isPointerType() || t->isArrayType()) {
    Value v = constant(0);
    v.isPtr = true;
    v.base = p;
    v.baseName = p->getNameAsString();
    v.space = MemSpace::Global;
    clang::QualType pt = t->isPointerType() ? t->getPointeeType() : clang::QualType(t->getArrayElementTypeNoTypeQual(), 0);
    v.pointee = pt->isIncompleteType() || pt->isVoidType() ? 1 : ctx_.getTypeSizeInChars(pt).getQuantity();
    v.ptrVolatile = pt.isVolatileQualified();
    return v;
  }
  if (t->isIntegralOrEnumerationType()) {
    Value v = constant(kParamRep);
    v.symbolic = true;
    v.param = true;
    v.paramSrc = p;
    return v;
  }
  if (t->isRealFloatingType()) {  // one value for the whole grid, its own for each parameter
    Value v = unknown();
    v.same = true;
    v.tag.assign(N_, mix(0x5041524dull, reinterpret_cast<uintptr_t>(p)));  // "PARM"
    return v;
  }
  return unknown();
}

Value Builder::eval(const clang::Expr* e) {
  if (!e) return unknown();
  e = strip(e);
  if (!budget()) return unknown();
  clang::QualType type = e->getType();
  // Constants: literals, constexpr, #define, enumerators, sizeof, template arguments.
  if (type->isIntegralOrEnumerationType()) {
    // Constant folding is asked once per expression (loops evaluate the same ones many times).
    auto [it, fresh] = folded_.try_emplace(e);
    if (fresh && !e->isValueDependent() && !e->HasSideEffects(ctx_)) {
      clang::Expr::EvalResult r;
      if (e->EvaluateAsInt(r, ctx_)) it->second = r.Val.getInt().getExtValue();
    }
    if (it->second) return constant(*it->second);
  }
  // Floating-point literals: not known (the domain holds integers), but numbered by their value.
  if (auto* fl = llvm::dyn_cast<clang::FloatingLiteral>(e)) {
    Value v = unknown();
    v.same = true;
    v.tag.assign(N_, mix(0x464c54ull, fl->getValue().bitcastToAPInt().getZExtValue()));  // "FLT"
    return v;
  }
  if (auto* po = llvm::dyn_cast<clang::PseudoObjectExpr>(e)) return builtinVar(po);
  if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (dre->getDecl()->getName() == "warpSize") return constant(32);
    LVal lv = evalLValue(e);
    if (lv.kind == LVal::Var) return readVar(lv.var);
    if (lv.kind == LVal::Mem) return readMem(lv);
    return unknown();
  }
  if (auto* ice = llvm::dyn_cast<clang::CastExpr>(e)) return evalCast(ice);
  if (auto* bo = llvm::dyn_cast<clang::BinaryOperator>(e)) return evalBinary(bo);
  if (auto* uo = llvm::dyn_cast<clang::UnaryOperator>(e)) return evalUnary(uo);
  if (auto* co = llvm::dyn_cast<clang::AbstractConditionalOperator>(e)) return evalConditional(co);
  if (llvm::isa<clang::CXXThisExpr>(e)) return frames_.back().hasThis ? frames_.back().thisPtr : unknown();
  if (llvm::isa<clang::CallExpr>(e)) {
    lastRetCall_ = nullptr;
    Value r = evalCallLike(e);
    // A call returning a reference, read: the value of the lvalue it returned.
    if (e->isGLValue() && lastRetCall_ == e && lastRetLVal_.kind != LVal::None) {
      LVal lv = lastRetLVal_;
      lastRetCall_ = nullptr;
      if (lv.kind == LVal::Var) return readVar(lv.var);
      return e->getType()->isArrayType() ? decay(lv) : readMem(lv);
    }
    return r;
  }
  // An enumerator or a constant static member named through an object (`c[i][j].num_elements`,
  // wmma fragments): a constant, whatever the object (Clang's own evaluation fails on a run-time base).
  if (auto* me = llvm::dyn_cast<clang::MemberExpr>(e)) {
    if (auto* ec = llvm::dyn_cast<clang::EnumConstantDecl>(me->getMemberDecl()))
      return constant(ec->getInitVal().getExtValue());
    if (auto* vd = llvm::dyn_cast<clang::VarDecl>(me->getMemberDecl()); vd && vd->isStaticDataMember() && vd->getInit() &&
                                                                      !vd->getInit()->isValueDependent())
      if (const clang::APValue* v = vd->evaluateValue(); v && v->isInt()) return constant(v->getInt().getExtValue());
  }
  if (llvm::isa<clang::ArraySubscriptExpr>(e) || llvm::isa<clang::MemberExpr>(e)) {
    LVal lv = evalLValue(e);
    if (lv.kind == LVal::Var) return readVar(lv.var);
    if (lv.kind == LVal::Mem) {
      if (e->getType()->isArrayType()) return decay(lv);
      return readMem(lv);
    }
    if (auto* me = llvm::dyn_cast<clang::MemberExpr>(e)) return evalMemberOfValue(me);
    return unknown();
  }
  if (auto* cce = llvm::dyn_cast<clang::CXXConstructExpr>(e)) {
    // A temporary object: a trivial (or library) copy is the value copied.
    auto* ctor = cce->getConstructor();
    if (ctor && ctor->isCopyOrMoveConstructor() && cce->getNumArgs() >= 1 && (ctor->isTrivial() || isSystem(ctor) || !ctor->hasBody()))
      return eval(cce->getArg(0));
    std::vector<Value> args;
    for (const auto* a : cce->arguments()) args.push_back(eval(a));
    if (args.size() == 1 && args[0].group) return args[0];  // a group copied or converted
    // A library constructor (`__half(x)`, `float2(...)`): the same arguments make the same object.
    Value r = unknown();
    if (ctor && !args.empty() && (isSystem(ctor) || !ctor->hasBody())) {
      std::vector<const Value*> ops;
      for (const auto& a : args) ops.push_back(&a), r.data = r.data || a.data;
      number(r, mix(0x43544f52ull, reinterpret_cast<uintptr_t>(ctor->getCanonicalDecl())), ops);  // "CTOR"
    }
    return r;
  }
  if (auto* ile = llvm::dyn_cast<clang::InitListExpr>(e)) {
    for (const auto* a : ile->inits()) eval(a);
    return unknown();
  }
  return unknown();
}

Value Builder::dataOf(Value v) {
  v.known = false;
  v.data = true;
  return v;
}

// threadIdx.x and friends (MSPropertyRefExpr inside a PseudoObjectExpr).
Value Builder::builtinVar(const clang::PseudoObjectExpr* po) {
  auto* syn = llvm::dyn_cast<clang::MSPropertyRefExpr>(strip(po->getSyntacticForm()));
  if (!syn) return unknown();
  auto* base = llvm::dyn_cast<clang::DeclRefExpr>(strip(syn->getBaseExpr()));
  if (!base) return unknown();
  std::string var = base->getDecl()->getNameAsString();
  std::string prop = syn->getPropertyDecl()->getNameAsString();
  int axis = prop == "x" ? 0 : prop == "y" ? 1 : prop == "z" ? 2 : -1;
  if (axis < 0) return unknown();
  if (var == "threadIdx") {
    m_.threadAxes_[axis] = true;
    Value v = constant(0);
    for (unsigned t = 0; t < N_; ++t) v.v[t] = axis == 0 ? m_.tx(t) : axis == 1 ? m_.ty(t) : m_.tz(t);
    return v;
  }
  if (var == "blockDim") return constant(axis == 0 ? m_.bx_ : axis == 1 ? m_.by_ : m_.bz_);
  if (var == "blockIdx") return blockIndex(axis);
  if (var == "gridDim") { Value v = constant(gridRep(axis)); v.symbolic = true; return v; }
  return unknown();
}

Value Builder::blockIndex(int axis) const {
  Value v = constant(kBlockIdxRep);
  v.symbolic = true;
  v.block = true;
  if (!blockSteps_) return v;  // no alternatives: every step derived from it is "not known"
  for (int k = 0; k < 3; ++k) v.alt[k].assign(N_, kBlockIdxRep + (axis < 2 ? kBlockAlts[k][axis] : 0));
  return v;
}

Value Builder::evalMemberOfValue(const clang::MemberExpr* me) {
  // block.thread_index().x, dim3 members of group calls.
  auto* base = strip(me->getBase());
  if (auto* call = llvm::dyn_cast<clang::CXXMemberCallExpr>(base)) {
    std::string name = call->getMethodDecl() ? call->getMethodDecl()->getNameAsString() : "";
    std::string f = me->getMemberDecl()->getNameAsString();
    int axis = f == "x" ? 0 : f == "y" ? 1 : f == "z" ? 2 : -1;
    if (axis >= 0 && groupKind(call->getImplicitObjectArgument()->IgnoreImpCasts()->getType()) != GroupKind::None) {
      if (name == "thread_index") {
        m_.threadAxes_[axis] = true;
        Value v = constant(0);
        for (unsigned t = 0; t < N_; ++t) v.v[t] = axis == 0 ? m_.tx(t) : axis == 1 ? m_.ty(t) : m_.tz(t);
        return v;
      }
      if (name == "group_dim" || name == "dim_threads") return constant(axis == 0 ? m_.bx_ : axis == 1 ? m_.by_ : m_.bz_);
      if (name == "group_index") return blockIndex(axis);
    }
  }
  eval(base);
  return unknown();
}

Value Builder::evalCast(const clang::CastExpr* ce) {
  using CK = clang::CastKind;
  const clang::Expr* sub = ce->getSubExpr();
  switch (ce->getCastKind()) {
    case CK::CK_LValueToRValue: {
      // `c ? x : y` as an lvalue read: the value of the arm each thread takes.
      if (llvm::isa<clang::AbstractConditionalOperator>(strip(sub))) return eval(sub);
      LVal lv = evalLValue(sub);
      if (lv.kind == LVal::Var) return readVar(lv.var);
      if (lv.kind == LVal::Mem) return readMem(lv);
      return unknown();
    }
    case CK::CK_ArrayToPointerDecay: {
      LVal lv = evalLValue(sub);
      if (lv.kind == LVal::Mem) return decay(lv);
      return unknown();
    }
    case CK::CK_IntegralCast:
    case CK::CK_IntegralToBoolean:
    case CK::CK_BooleanToSignedIntegral: {
      Value v = eval(sub);
      // A conversion that keeps every value of the source type (int -> long, unsigned -> long,
      // int -> int) leaves the (already normalised) values as they are: no pass over the threads.
      if (ce->getCastKind() == CK::CK_IntegralCast) {
        clang::QualType from = sub->getType().getCanonicalType(), to = ce->getType().getCanonicalType();
        if (from->isIntegralOrEnumerationType() && to->isIntegralOrEnumerationType() && !from->isBooleanType()) {
          uint64_t wf = ctx_.getTypeSize(from), wt = ctx_.getTypeSize(to);
          bool sf = from->isSignedIntegerOrEnumerationType(), st = to->isSignedIntegerOrEnumerationType();
          if ((wt == wf && sf == st) || (wt > wf && (sf == st || (!sf && st)))) return v;
        }
      }
      v.hasHi = false;  // a narrowing or sign-changing conversion may wrap the bound
      v.falseFor.clear();
      if (ce->getCastKind() == CK::CK_IntegralToBoolean && v.known) {
        auto toBool = [](int64_t& x) { x = x != 0; };
        for (auto& x : v.v) toBool(x);
        eachAlt(v, toBool);
      }
      normalize(v, ce->getType());
      return v;
    }
    case CK::CK_BitCast:
    case CK::CK_NoOp:
    case CK::CK_UncheckedDerivedToBase:
    case CK::CK_DerivedToBase: {
      Value v = eval(sub);
      if (v.isPtr && ce->getType()->isPointerType()) {
        clang::QualType pt = ce->getType()->getPointeeType();
        if (!pt->isIncompleteType() && !pt->isVoidType()) v.pointee = ctx_.getTypeSizeInChars(pt).getQuantity();
        v.ptrVolatile = v.ptrVolatile || pt.isVolatileQualified();
      }
      return v;
    }
    case CK::CK_IntegralToFloating:
    case CK::CK_FloatingToIntegral:
    case CK::CK_FloatingCast:
    case CK::CK_FloatingToBoolean: {
      Value v = eval(sub);
      v.same = uniformish(v);
      number(v, mix(0x43415354ull, ce->getCastKind()), {&v});  // "CAST": the conversion of the same value
      v.known = false;
      return v;
    }
    case CK::CK_NullToPointer:
    case CK::CK_IntegralToPointer:
      eval(sub);
      return unknown();
    default: {
      Value v = eval(sub);
      if (!ce->getType()->isIntegralOrEnumerationType() && !ce->getType()->isPointerType()) v.known = false;
      return v;
    }
  }
}

Value Builder::decay(const LVal& lv) {
  Value p = lv.ptr;
  clang::QualType t = lv.expr ? lv.expr->getType() : clang::QualType();
  if (!t.isNull() && t->isArrayType()) {
    clang::QualType el(t->getArrayElementTypeNoTypeQual(), 0);
    if (auto* at = ctx_.getAsArrayType(t)) el = at->getElementType();
    p.pointee = el->isIncompleteType() ? 1 : ctx_.getTypeSizeInChars(el).getQuantity();
  }
  return p;
}

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

// A pointer not known per thread (a data-dependent index): numbered per thread from the pointer it
// moves and the index's number, so threads with equal numbers point at one address (a warp whose
// lanes all load `key[item]` for one item, then index with it).
void Builder::numberAddress(Value& r, const Value& ptr, const Value& idx) const {
  r.tag.clear();
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
    if (varying(i) && !i.strideSym.empty()) r.strideSym = i.strideSym;
    numberAddress(r, p, op == BO::BO_Sub ? unknown() : i);
    return r;
  }
  Value r = unknown();
  mergeFlags(r, a, b);
  r.known = a.known && b.known;
  r.same = uniformish(a) && uniformish(b);
  if (op == BO::BO_Mul) {
    // A thread-varying term scaled by a uniform symbol: remember the symbol's text.
    if (a.known && b.known) {
      if (varying(a) && b.symbolic && !varying(b)) r.strideSym = text(rhsE);
      else if (varying(b) && a.symbolic && !varying(a)) r.strideSym = text(lhsE);
    }
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
    return r;
  }
  bool compareUnsigned = lhsE && lhsE->getType()->isUnsignedIntegerOrEnumerationType();
  if (!apply(op, a, b, type->isUnsignedIntegerOrEnumerationType(), compareUnsigned, r)) return r;
  if (clang::BinaryOperator::isComparisonOp(op) || clang::BinaryOperator::isLogicalOp(op)) r.strideSym.clear();
  else normalize(r, type);
  return r;
}

std::string Builder::text(const clang::Expr* e) const {
  if (!e) return {};
  auto& sm = ctx_.getSourceManager();
  auto range = clang::CharSourceRange::getTokenRange(sm.getExpansionRange(e->getSourceRange()).getAsRange());
  std::string s = clang::Lexer::getSourceText(range, sm, ctx_.getLangOpts()).str();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
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
    Value b = anyActive() ? eval(bo->getRHS()) : constant(0);
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
  Value a = eval(bo->getLHS());
  Value b = eval(bo->getRHS());
  // `rowIdx[e] == pivot`: a value each thread loaded from its own element, compared with one value
  // of the block, selects the thread whose key matches (one, when the keys are distinct).
  if (op == BO::BO_EQ) {
    auto distinctKeys = [&](const Value& v) {
      if (v.known || !v.data || !v.loaded || v.tag.size() != N_) return false;
      std::set<uint64_t> seen;
      for (unsigned t = 0; t < N_; ++t)
        if (active_[t] && (!v.tag[t] || !seen.insert(v.tag[t]).second)) return false;
      return seen.size() > 1;
    };
    // The value compared with is an input (a parameter, a load from global memory), not one the
    // block made (a minimum reduced in shared memory: ties are likely, HeCBench tsp).
    auto input = [&](const Value& v) { return uniformish(v) && !v.data && !v.blockMade; };
    if ((input(a) && distinctKeys(b)) || (input(b) && distinctKeys(a))) selections_.insert(bo);
  }
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
    result = arith(clang::BinaryOperator::getOpForCompoundAssignment(op), cur, rhs,
                   cop->getComputationResultType(), bo->getLHS(), bo->getRHS());
  }
  normalize(result, bo->getLHS()->getType());
  retype(result, bo->getLHS()->getType());
  writeLVal(lv, result);
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
  active_ = tm;
  Value a = std::find(tm.begin(), tm.end(), 1) != tm.end() ? eval(co->getTrueExpr()) : unknown();
  active_ = fm;
  Value b = std::find(fm.begin(), fm.end(), 1) != fm.end() ? eval(co->getFalseExpr()) : unknown();
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

Builder::LVal Builder::evalLValue(const clang::Expr* e) {
  e = strip(e);
  // Walked by some thread: the access is analysed (KernelModel::coverage).
  if (anyActive() && (llvm::isa<clang::ArraySubscriptExpr, clang::MemberExpr>(e) ||
                      (llvm::isa<clang::UnaryOperator>(e) && llvm::cast<clang::UnaryOperator>(e)->getOpcode() == clang::UO_Deref)))
    m_.reached_.insert(e);
  LVal lv;
  lv.expr = e;
  lv.isVolatile = e->getType().isVolatileQualified();
  if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl());
    if (!vd) return lv;
    MemSpace sp = MemSpace::Unknown;
    if (vd->hasAttr<clang::CUDASharedAttr>()) sp = MemSpace::Shared;
    else if (vd->hasAttr<clang::CUDAConstantAttr>()) sp = MemSpace::Constant;
    else if (vd->hasAttr<clang::CUDADeviceAttr>() && vd->hasGlobalStorage()) sp = MemSpace::Global;
    else if ((vd->getType()->isArrayType() && vd->isLocalVarDecl()) || isObjectVar(vd)) sp = MemSpace::Local;
    if (sp != MemSpace::Unknown) {
      lv.kind = LVal::Mem;
      lv.ptr = constant(0);
      lv.ptr.isPtr = true;
      lv.ptr.base = vd;
      lv.ptr.baseName = vd->getNameAsString();
      lv.ptr.space = sp;
      lv.size = vd->getType()->isIncompleteType() ? 0 : ctx_.getTypeSizeInChars(vd->getType()).getQuantity();
      lv.ptr.pointee = lv.size;
      return lv;
    }
    if (vd->getType()->isReferenceType()) {  // the lvalue it is bound to (innermost frame first)
      for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
        if (auto f = it->refs.find(vd); f != it->refs.end()) return f->second;
      return lv;
    }
    lv.kind = LVal::Var;
    lv.var = vd;
    return lv;
  }
  if (auto* ase = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
    Value base = eval(ase->getBase());
    Value idx = eval(ase->getIdx());
    if (!base.isPtr) return lv;
    unsigned sz = e->getType()->isIncompleteType() ? 1 : ctx_.getTypeSizeInChars(e->getType()).getQuantity();
    lv.kind = LVal::Mem;
    lv.ptr = base;
    mergeFlags(lv.ptr, base, idx);
    lv.ptr.known = base.known && idx.known;
    if (lv.ptr.known)
      for (unsigned t = 0; t < N_; ++t) lv.ptr.v[t] = base.v[t] + idx.v[t] * static_cast<int64_t>(sz);
    lv.ptr.alt = {};
    if (lv.ptr.known && lv.ptr.block && hasAlts(base) && hasAlts(idx))
      for (int k = 0; k < 3; ++k) {
        const auto &b = altOf(base, k), &x = altOf(idx, k);
        lv.ptr.alt[k].resize(N_);
        for (unsigned t = 0; t < N_; ++t) lv.ptr.alt[k][t] = b[t] + x[t] * static_cast<int64_t>(sz);
      }
    if (varying(idx) && !idx.strideSym.empty()) lv.ptr.strideSym = idx.strideSym;
    numberAddress(lv.ptr, base, idx);
    lv.ptr.stepBound = !lv.ptr.known && idx.stepBound && base.known && !varying(base) ? idx.stepBound * sz : 0;
    lv.ptr.values = idx.data && !base.data ? idx.values : 0;
    lv.size = sz;
    lv.isVolatile = lv.isVolatile || base.ptrVolatile;
    // Index past a constant array bound: a real bug, or a wrong block-shape assumption.
    if (idx.known && m_.outOfBounds_.empty())
      if (auto* ice = llvm::dyn_cast<clang::ImplicitCastExpr>(ase->getBase()->IgnoreParens());
          ice && ice->getCastKind() == clang::CK_ArrayToPointerDecay)
        if (auto* cat = ctx_.getAsConstantArrayType(ice->getSubExpr()->getType())) {
          int64_t bound = static_cast<int64_t>(cat->getSize().getZExtValue());
          for (unsigned t = 0; t < N_; ++t)
            if (active_[t] && (idx.v[t] < 0 || idx.v[t] >= bound)) {
              m_.outOfBounds_ = base.baseName.empty() ? "an array" : base.baseName;
              break;
            }
        }
    return lv;
  }
  if (auto* uo = llvm::dyn_cast<clang::UnaryOperator>(e)) {
    if (uo->getOpcode() == clang::UO_Deref) {
      Value p = eval(uo->getSubExpr());
      if (!p.isPtr) return lv;
      lv.kind = LVal::Mem;
      lv.ptr = p;
      lv.size = e->getType()->isIncompleteType() ? 1 : ctx_.getTypeSizeInChars(e->getType()).getQuantity();
      lv.isVolatile = lv.isVolatile || p.ptrVolatile;
      return lv;
    }
    if (uo->isIncrementDecrementOp()) {
      evalUnary(uo);
      return evalLValue(uo->getSubExpr());
    }
    return lv;
  }
  if (auto* me = llvm::dyn_cast<clang::MemberExpr>(e)) {
    auto* fd = llvm::dyn_cast<clang::FieldDecl>(me->getMemberDecl());
    if (!fd) return lv;
    LVal base;
    if (me->isArrow()) {
      Value p = eval(me->getBase());
      if (!p.isPtr) return lv;
      base.kind = LVal::Mem;
      base.ptr = p;
    } else {
      base = evalLValue(me->getBase());
    }
    if (base.kind != LVal::Mem) return lv;
    const auto& layout = ctx_.getASTRecordLayout(fd->getParent());
    int64_t off = layout.getFieldOffset(fd->getFieldIndex()) / 8;
    lv.kind = LVal::Mem;
    lv.ptr = base.ptr;
    if (lv.ptr.known) {
      auto add = [off](int64_t& x) { x += off; };
      for (auto& x : lv.ptr.v) add(x);
      eachAlt(lv.ptr, add);
    }
    lv.size = fd->getType()->isIncompleteType() ? 1 : ctx_.getTypeSizeInChars(fd->getType()).getQuantity();
    lv.isVolatile = lv.isVolatile || base.isVolatile || base.ptr.ptrVolatile;
    return lv;
  }
  if (auto* bo = llvm::dyn_cast<clang::BinaryOperator>(e)) {
    if (bo->isAssignmentOp()) {
      evalAssign(bo);
      return evalLValue(bo->getLHS());
    }
  }
  if (auto* ice = llvm::dyn_cast<clang::ImplicitCastExpr>(e)) return evalLValue(ice->getSubExpr());
  if (llvm::isa<clang::CallExpr>(e) && e->isGLValue()) {  // a call returning a reference
    lastRetCall_ = nullptr;
    evalCallLike(e);
    if (lastRetCall_ == e) {
      lastRetCall_ = nullptr;
      return lastRetLVal_;
    }
    return lv;
  }
  eval(e);
  return lv;
}

bool Builder::isObjectVar(const clang::VarDecl* vd) const {
  clang::QualType t = vd->getType();
  if (!t->isRecordType() || t->isIncompleteType() || groupKind(t) != GroupKind::None) return false;
  return vd->isLocalVarDecl() || llvm::isa<clang::ParmVarDecl>(vd);
}

Builder::LVal Builder::objectAt(const Value& ptr, clang::QualType t, const clang::Expr* e) const {
  LVal lv;
  lv.kind = LVal::Mem;
  lv.ptr = ptr;
  lv.expr = e;
  lv.size = t->isIncompleteType() ? 1 : static_cast<unsigned>(ctx_.getTypeSizeInChars(t).getQuantity());
  return lv;
}

void Builder::initObject(const LVal& dst, const clang::Expr* init) {
  if (!init) return;
  init = strip(init);
  if (auto* ce = llvm::dyn_cast<clang::CastExpr>(init); ce && ce->getCastKind() == clang::CK_ConstructorConversion)
    return initObject(dst, ce->getSubExpr());
  if (auto* fc = llvm::dyn_cast<clang::CXXFunctionalCastExpr>(init); fc && fc->getCastKind() == clang::CK_ConstructorConversion)
    return initObject(dst, fc->getSubExpr());
  if (auto* cce = llvm::dyn_cast<clang::CXXConstructExpr>(init)) return construct(dst, cce);
  if (auto* ile = llvm::dyn_cast<clang::InitListExpr>(init)) {
    auto* rd = ile->getType()->getAsRecordDecl();
    auto* crd = llvm::dyn_cast_or_null<clang::CXXRecordDecl>(rd);
    if (rd && ile->getNumInits() == 1 && ile->getInit(0)->getType()->getAsRecordDecl() == rd)
      return initObject(dst, ile->getInit(0));  // `T x{y}`: a copy
    if (!rd || rd->isUnion() || (crd && crd->getNumBases()) || dst.kind != LVal::Mem) {
      for (const auto* a : ile->inits()) eval(a);
      if (dst.kind == LVal::Mem && dst.ptr.space == MemSpace::Local) forgetLocal(dst.ptr.base);
      return;
    }
    const auto& layout = ctx_.getASTRecordLayout(rd);
    unsigned i = 0;
    for (const auto* fd : rd->fields()) {
      if (i >= ile->getNumInits()) break;
      const clang::Expr* fi = ile->getInit(i++);
      Value p = dst.ptr;
      int64_t off = layout.getFieldOffset(fd->getFieldIndex()) / 8;
      if (p.known)
        for (auto& x : p.v) x += off;
      LVal f = objectAt(p, fd->getType(), fi);
      f.expr = dst.expr;
      if (fd->getType()->isRecordType()) initObject(f, fi);
      else if (fd->getType()->isScalarType()) {
        Value v = eval(fi);
        normalize(v, fd->getType());
        retype(v, fd->getType());
        writeLVal(f, v);
      } else {
        eval(fi);
      }
    }
    return;
  }
  if (init->isGLValue()) {
    copyObject(dst, init);
    return;
  }
  writeLVal(dst, eval(init));  // an object made by a call (returned by value)
}

void Builder::construct(const LVal& dst, const clang::CXXConstructExpr* cce) {
  auto* ctor = cce->getConstructor();
  if (!ctor) return;
  if (ctor->isCopyOrMoveConstructor() && cce->getNumArgs() >= 1 && (ctor->isTrivial() || isSystem(ctor) || !ctor->hasBody())) {
    copyObject(dst, cce->getArg(0));
    return;
  }
  const clang::FunctionDecl* def = nullptr;
  if (ctor->hasBody(def) && def && !isSystem(def) && dst.kind == LVal::Mem) {
    // Members the constructor leaves uninitialized hold one indeterminate value, the same in every
    // thread: a copy constructor that skips a member (HeCBench logan's SeedL) still gives every
    // thread equal objects from equal sources. Only a user-provided constructor: an object nothing
    // initializes (`pair_t fresh; pairs[42] = fresh;`, GPUVerify's fail_arrayofstruct) holds
    // whatever each thread had, and storing it from several threads is a race.
    if (dst.ptr.space == MemSpace::Local && localAddress(dst) && ctor->isUserProvided()) {
      Value ind = unknown();
      ind.same = true;
      ind.tag.assign(N_, mix(0x494e444554ull, reinterpret_cast<uintptr_t>(dst.ptr.base)));  // "INDET"
      storeLocal(dst, ind);
    }
    std::vector<const clang::Expr*> args(cce->arg_begin(), cce->arg_end());
    inlineCall(def, cce, args, &dst.ptr);
    return;
  }
  Value r = eval(cce);  // a library constructor: numbered from its arguments
  if (cce->getNumArgs() == 0) return;  // default-initialized: no value known
  writeLVal(dst, r);
}

Value Builder::copyObject(const LVal& dst, const clang::Expr* srcE) {
  srcE = strip(srcE);
  if (!srcE->isGLValue()) {
    Value v = eval(srcE);
    writeLVal(dst, v);
    return v;
  }
  LVal src = evalLValue(srcE);
  Value v = src.kind == LVal::Var ? readVar(src.var) : src.kind == LVal::Mem ? readMem(src) : unknown();
  // The source's per-thread slots (members stored one by one), to copy member by member.
  std::vector<std::tuple<int64_t, unsigned, Value>> parts;
  if (src.kind == LVal::Mem && src.ptr.space == MemSpace::Local)
    if (const int64_t* sa = localAddress(src))
      for (auto it = localMem_.lower_bound({src.ptr.base, *sa, 0}); it != localMem_.end() && std::get<0>(it->first) == src.ptr.base &&
                                                                   std::get<1>(it->first) < *sa + src.size; ++it)
        if (std::get<1>(it->first) + std::get<2>(it->first) <= *sa + src.size)
          parts.emplace_back(std::get<1>(it->first) - *sa, std::get<2>(it->first), it->second);
  writeLVal(dst, v);  // the recorded write of the whole object
  if (dst.kind == LVal::Mem && dst.ptr.space == MemSpace::Local && localAddress(dst))
    for (auto& [off, size, val] : parts) {
      if (off == 0 && size == dst.size) continue;  // the whole: stored above
      LVal p = dst;
      for (auto& x : p.ptr.v) x += off;
      p.size = size;
      storeLocal(p, val);
    }
  return v;
}

Value Builder::readVar(const clang::VarDecl* vd) {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    auto f = it->vars.find(vd);
    if (f != it->vars.end()) return f->second;
  }
  // A const variable with a constant initializer (file scope or not yet seen).
  if (vd->getType().isConstQualified() && vd->hasInit() && !vd->getInit()->isValueDependent()) {
    clang::Expr::EvalResult r;
    if (vd->getInit()->EvaluateAsInt(r, ctx_)) return constant(r.Val.getInt().getExtValue());
  }
  return unknown();
}

void Builder::writeVar(const clang::VarDecl* vd, const Value& v) {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    auto f = it->vars.find(vd);
    if (f != it->vars.end()) {
      assignMasked(f->second, v);
      return;
    }
  }
  Value nv = unknown();
  assignMasked(nv, v);
  frames_.back().vars[vd] = nv;
}

void Builder::writeLVal(const LVal& lv, const Value& v) {
  if (lv.kind == LVal::Var) writeVar(lv.var, v);
  else if (lv.kind == LVal::Mem) {
    if (lv.ptr.space == MemSpace::Local) storeLocal(lv, v);
    recordAccess(lv, false, true, false, &v);
  }
}

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
  a.guards = guards_;
  for (const Residual& r : residual_) a.guards.push_back(r.line);
  a.selectGuards = selectGuards_;
  a.inRuntimeLoop = runtimeLoops_ > 0;
  a.runtimeIter = runtimeIter_;
  a.blockGuarded = blockGuards_ > 0;
  a.dataValues = lv.ptr.values;
  if (!a.known) a.addrTag = lv.ptr.tag, a.stepBound = lv.ptr.stepBound;
  a.paramAddr = lv.ptr.param;
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
