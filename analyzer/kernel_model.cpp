#include "analyzer/kernel_model.h"

#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/StmtVisitor.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/Basic/SourceManager.h>
#include <clang/AST/RecordLayout.h>
#include <clang/Lex/Lexer.h>

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <set>
#include <unordered_map>

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

namespace {

constexpr int64_t kParamRep = int64_t(1) << 12;  // representative value of an integer parameter
constexpr int64_t kBlockIdxRep = 2;
constexpr int64_t kGridDimRep = 64;
constexpr unsigned kMaxConcreteIters = 64;
constexpr unsigned kSymbolicIters = 2;
constexpr size_t kMaxSteps = 400000;
constexpr int kMaxInlineDepth = 8;

const clang::Expr* strip(const clang::Expr* e) {
  while (true) {
    if (auto* p = llvm::dyn_cast<clang::ParenExpr>(e)) e = p->getSubExpr();
    else if (auto* c = llvm::dyn_cast<clang::ExprWithCleanups>(e)) e = c->getSubExpr();
    else if (auto* m = llvm::dyn_cast<clang::MaterializeTemporaryExpr>(e)) e = m->getSubExpr();
    else if (auto* b = llvm::dyn_cast<clang::CXXBindTemporaryExpr>(e)) e = b->getSubExpr();
    else if (auto* ce = llvm::dyn_cast<clang::ConstantExpr>(e)) e = ce->getSubExpr();
    else if (auto* s = llvm::dyn_cast<clang::SubstNonTypeTemplateParmExpr>(e)) e = s->getReplacement();
    else if (auto* o = llvm::dyn_cast<clang::OpaqueValueExpr>(e); o && o->getSourceExpr()) e = o->getSourceExpr();
    else if (auto* ic = llvm::dyn_cast<clang::ImplicitCastExpr>(e); ic && ic->getCastKind() == clang::CK_NoOp) e = ic->getSubExpr();
    else return e;
  }
}

// Name of the record type of an expression (through pointers / references).
std::string recordName(clang::QualType t) {
  t = t.getNonReferenceType();
  if (t->isPointerType()) t = t->getPointeeType();
  if (auto* rd = t->getAsCXXRecordDecl()) return rd->getQualifiedNameAsString();
  return t.getAsString();
}

unsigned tileSizeOf(clang::QualType t) {
  t = t.getNonReferenceType();
  if (auto* rd = t->getAsCXXRecordDecl())
    if (auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(rd)) {
      const auto& args = spec->getTemplateArgs();
      if (args.size() > 0 && args[0].getKind() == clang::TemplateArgument::Integral)
        return static_cast<unsigned>(args[0].getAsIntegral().getZExtValue());
    }
  return 32;
}

enum class GroupKind { None, Block, Warp, Grid };
GroupKind groupKind(clang::QualType t) {
  std::string n = recordName(t);
  if (n.find("cooperative_groups") == std::string::npos) return GroupKind::None;
  if (n.find("tile") != std::string::npos || n.find("coalesced") != std::string::npos) return GroupKind::Warp;
  if (n.find("grid") != std::string::npos) return GroupKind::Grid;
  return GroupKind::Block;
}

class Builder {
 public:
  Builder(KernelModel& m, clang::ASTContext& ctx) : m_(m), ctx_(ctx), N_(m.threads()) {
    active_.assign(N_, 1);
    alive_.assign(N_, 1);
    warpEpoch_.assign(m.warps(), 0);
  }

  void run(const clang::FunctionDecl* k) {
    frames_.emplace_back();
    frames_.back().fn = k;
    for (const auto* p : k->parameters()) frames_.back().vars[p] = paramValue(p);
    walk(k->getBody());
    frames_.pop_back();
  }

 private:
  struct Frame {
    const clang::FunctionDecl* fn = nullptr;
    std::map<const clang::VarDecl*, Value> vars;
    Mask returned;
    Value ret;
    bool hasRet = false;
  };
  struct LoopState {
    Mask broken, continued;
  };
  struct LVal {
    enum Kind { None, Var, Mem } kind = None;
    const clang::VarDecl* var = nullptr;
    Value ptr;
    unsigned size = 0;
    bool isVolatile = false;
    const clang::Expr* expr = nullptr;
  };

  // ---- values -----------------------------------------------------------------------------
  Value unknown() const {
    Value v;
    v.v.assign(N_, 0);
    return v;
  }
  Value constant(int64_t c) const {
    Value v;
    v.v.assign(N_, c);
    v.known = true;
    return v;
  }
  bool varying(const Value& v) const {
    if (!v.known) return false;
    bool first = true;
    int64_t x = 0;
    for (unsigned t = 0; t < N_; ++t) {
      if (!active_[t]) continue;
      if (first) x = v.v[t], first = false;
      else if (v.v[t] != x) return true;
    }
    return false;
  }
  bool uniformish(const Value& v) const { return v.same || (v.known && !varying(v)); }
  void normalize(Value& v, clang::QualType t) const {
    if (!v.known || v.isPtr) return;
    t = t.getCanonicalType();
    if (!t->isIntegralOrEnumerationType()) {
      if (t->isRealFloatingType()) {
        v.same = uniformish(v);
        v.known = false;
      }
      return;
    }
    uint64_t w = ctx_.getTypeSize(t);
    if (w >= 64 || w == 0) return;
    bool sign = t->isSignedIntegerOrEnumerationType();
    for (auto& x : v.v) {
      uint64_t u = static_cast<uint64_t>(x) & ((uint64_t(1) << w) - 1);
      if (sign && (u >> (w - 1))) u |= ~((uint64_t(1) << w) - 1);
      x = static_cast<int64_t>(u);
    }
  }
  // A pointer stored into a variable of another pointer type takes that type's pointee: `volatile
  // int* vs = sdata;` reads and writes volatile (the qualifying conversion is a no-op cast that
  // strip() looks through).
  void retype(Value& v, clang::QualType t) const {
    if (!v.isPtr || !t->isPointerType()) return;
    clang::QualType pt = t->getPointeeType();
    v.ptrVolatile = v.ptrVolatile || pt.isVolatileQualified();
    if (!pt->isIncompleteType() && !pt->isVoidType()) v.pointee = ctx_.getTypeSizeInChars(pt).getQuantity();
  }
  static void mergeFlags(Value& r, const Value& a, const Value& b) {
    r.data = a.data || b.data;
    r.symbolic = a.symbolic || b.symbolic;
    r.param = a.param || b.param;
    r.strideSym = !a.strideSym.empty() ? a.strideSym : b.strideSym;
  }
  // Assigns `src` into `dst` for active threads only.
  void assignMasked(Value& dst, const Value& src) const {
    if (dst.v.size() != N_) dst = unknown();
    bool anyInactive = std::find(active_.begin(), active_.end(), 0) != active_.end();
    if (!anyInactive) { dst = src; return; }
    for (unsigned t = 0; t < N_; ++t)
      if (active_[t]) dst.v[t] = src.v[t];
    dst.known = src.known && (dst.known || true);
    if (!src.known) dst.known = false;
    dst.data = dst.data || src.data;
    dst.symbolic = dst.symbolic || src.symbolic;
    dst.param = dst.param || src.param;
    if (!src.strideSym.empty()) dst.strideSym = src.strideSym;
    dst.isPtr = src.isPtr;
    dst.base = src.base;
    dst.baseName = src.baseName;
    dst.space = src.space;
    dst.pointee = src.pointee;
    dst.ptrVolatile = src.ptrVolatile;
    dst.group = src.group;
    dst.same = false;  // threads may hold values from different assignments now
  }

  Value paramValue(const clang::ParmVarDecl* p) {
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
      return v;
    }
    return unknown();
  }

  // ---- steps ------------------------------------------------------------------------------
  bool budget() {
    if (++steps_ > kMaxSteps) {
      m_.truncated_ = true;
      return false;
    }
    return true;
  }
  bool anyActive() const { return std::find(active_.begin(), active_.end(), 1) != active_.end(); }
  std::string context() const {
    std::string s;
    for (const auto& c : ctxStack_)
      if (!c.empty()) s += (s.empty() ? "" : ", ") + c;
    return s;
  }

  // ---- expressions ------------------------------------------------------------------------
  Value eval(const clang::Expr* e) {
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
    if (auto* mce = llvm::dyn_cast<clang::CXXMemberCallExpr>(e)) return evalMemberCall(mce);
    // A kernel launched from device code starts a grid of its own: it is analysed as a kernel
    // with its own launch shape, not inlined into this one.
    if (auto* kc = llvm::dyn_cast<clang::CUDAKernelCallExpr>(e)) {
      for (const auto* a : kc->arguments()) eval(a);
      return unknown();
    }
    if (auto* oce = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e)) {
      Value r = unknown();
      for (const auto* a : oce->arguments()) r.data = eval(a).data || r.data;
      return r;
    }
    if (auto* ce = llvm::dyn_cast<clang::CallExpr>(e)) return evalCall(ce);
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
      std::vector<Value> args;
      for (const auto* a : cce->arguments()) args.push_back(eval(a));
      if (args.size() == 1 && args[0].group) return args[0];  // a group copied or converted
      return unknown();
    }
    if (auto* ile = llvm::dyn_cast<clang::InitListExpr>(e)) {
      for (const auto* a : ile->inits()) eval(a);
      return unknown();
    }
    return unknown();
  }

  Value dataOf(Value v) {
    v.known = false;
    v.data = true;
    return v;
  }

  // threadIdx.x and friends (MSPropertyRefExpr inside a PseudoObjectExpr).
  Value builtinVar(const clang::PseudoObjectExpr* po) {
    auto* syn = llvm::dyn_cast<clang::MSPropertyRefExpr>(strip(po->getSyntacticForm()));
    if (!syn) return unknown();
    auto* base = llvm::dyn_cast<clang::DeclRefExpr>(strip(syn->getBaseExpr()));
    if (!base) return unknown();
    std::string var = base->getDecl()->getNameAsString();
    std::string prop = syn->getPropertyDecl()->getNameAsString();
    int axis = prop == "x" ? 0 : prop == "y" ? 1 : prop == "z" ? 2 : -1;
    if (axis < 0) return unknown();
    if (var == "threadIdx") {
      Value v = constant(0);
      for (unsigned t = 0; t < N_; ++t) v.v[t] = axis == 0 ? m_.tx(t) : axis == 1 ? m_.ty(t) : m_.tz(t);
      return v;
    }
    if (var == "blockDim") return constant(axis == 0 ? m_.bx_ : axis == 1 ? m_.by_ : m_.bz_);
    if (var == "blockIdx") { Value v = constant(kBlockIdxRep); v.symbolic = true; return v; }
    if (var == "gridDim") { Value v = constant(kGridDimRep); v.symbolic = true; return v; }
    return unknown();
  }

  Value evalMemberOfValue(const clang::MemberExpr* me) {
    // block.thread_index().x, dim3 members of group calls.
    auto* base = strip(me->getBase());
    if (auto* call = llvm::dyn_cast<clang::CXXMemberCallExpr>(base)) {
      std::string name = call->getMethodDecl() ? call->getMethodDecl()->getNameAsString() : "";
      std::string f = me->getMemberDecl()->getNameAsString();
      int axis = f == "x" ? 0 : f == "y" ? 1 : f == "z" ? 2 : -1;
      if (axis >= 0 && groupKind(call->getImplicitObjectArgument()->IgnoreImpCasts()->getType()) != GroupKind::None) {
        if (name == "thread_index") {
          Value v = constant(0);
          for (unsigned t = 0; t < N_; ++t) v.v[t] = axis == 0 ? m_.tx(t) : axis == 1 ? m_.ty(t) : m_.tz(t);
          return v;
        }
        if (name == "group_dim" || name == "dim_threads") return constant(axis == 0 ? m_.bx_ : axis == 1 ? m_.by_ : m_.bz_);
        if (name == "group_index") { Value v = constant(kBlockIdxRep); v.symbolic = true; return v; }
      }
    }
    eval(base);
    return unknown();
  }

  Value evalCast(const clang::CastExpr* ce) {
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
        if (ce->getCastKind() == CK::CK_IntegralToBoolean && v.known)
          for (auto& x : v.v) x = x != 0;
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

  Value decay(const LVal& lv) {
    Value p = lv.ptr;
    clang::QualType t = lv.expr ? lv.expr->getType() : clang::QualType();
    if (!t.isNull() && t->isArrayType()) {
      clang::QualType el(t->getArrayElementTypeNoTypeQual(), 0);
      if (auto* at = ctx_.getAsArrayType(t)) el = at->getElementType();
      p.pointee = el->isIncompleteType() ? 1 : ctx_.getTypeSizeInChars(el).getQuantity();
    }
    return p;
  }

  Value arith(clang::BinaryOperatorKind op, const Value& a, const Value& b, clang::QualType type,
              const clang::Expr* lhsE, const clang::Expr* rhsE) {
    using BO = clang::BinaryOperatorKind;
    // Pointer arithmetic.
    if ((op == BO::BO_Add || op == BO::BO_Sub) && (a.isPtr || b.isPtr)) {
      if (a.isPtr && b.isPtr) {  // difference
        Value r = unknown();
        if (a.known && b.known && a.pointee) {
          r.known = true;
          for (unsigned t = 0; t < N_; ++t) r.v[t] = (a.v[t] - b.v[t]) / static_cast<int64_t>(a.pointee);
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
      if (varying(i) && !i.strideSym.empty()) r.strideSym = i.strideSym;
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
      if (op == BO::BO_Mul && ((a.known && !varying(a) && a.v[0] == 0) || (b.known && !varying(b) && b.v[0] == 0))) return constant(0);
      return r;
    }
    bool isUnsigned = type->isUnsignedIntegerOrEnumerationType();
    for (unsigned t = 0; t < N_; ++t) {
      int64_t x = a.v[t], y = b.v[t], z = 0;
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
        case BO::BO_LT: z = lhsE && lhsE->getType()->isUnsignedIntegerOrEnumerationType() ? (uint64_t)x < (uint64_t)y : x < y; break;
        case BO::BO_GT: z = lhsE && lhsE->getType()->isUnsignedIntegerOrEnumerationType() ? (uint64_t)x > (uint64_t)y : x > y; break;
        case BO::BO_LE: z = lhsE && lhsE->getType()->isUnsignedIntegerOrEnumerationType() ? (uint64_t)x <= (uint64_t)y : x <= y; break;
        case BO::BO_GE: z = lhsE && lhsE->getType()->isUnsignedIntegerOrEnumerationType() ? (uint64_t)x >= (uint64_t)y : x >= y; break;
        case BO::BO_EQ: z = x == y; break;
        case BO::BO_NE: z = x != y; break;
        case BO::BO_LAnd: z = x && y; break;
        case BO::BO_LOr: z = x || y; break;
        default: r.known = false; return r;
      }
      r.v[t] = z;
    }
    if (clang::BinaryOperator::isComparisonOp(op) || clang::BinaryOperator::isLogicalOp(op)) r.strideSym.clear();
    else normalize(r, type);
    return r;
  }

  std::string text(const clang::Expr* e) const {
    if (!e) return {};
    auto& sm = ctx_.getSourceManager();
    auto range = clang::CharSourceRange::getTokenRange(sm.getExpansionRange(e->getSourceRange()).getAsRange());
    std::string s = clang::Lexer::getSourceText(range, sm, ctx_.getLangOpts()).str();
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return s;
  }

  Value evalBinary(const clang::BinaryOperator* bo) {
    using BO = clang::BinaryOperatorKind;
    auto op = bo->getOpcode();
    if (op == BO::BO_Comma) {
      eval(bo->getLHS());
      return eval(bo->getRHS());
    }
    if (op == BO::BO_LAnd || op == BO::BO_LOr) {
      Value a = eval(bo->getLHS());
      Mask saved = active_;
      if (a.known)
        for (unsigned t = 0; t < N_; ++t)
          if (active_[t] && ((a.v[t] != 0) == (op == BO::BO_LOr))) active_[t] = 0;
      Value b = anyActive() ? eval(bo->getRHS()) : constant(0);
      active_ = saved;
      Value r = unknown();
      mergeFlags(r, a, b);
      r.strideSym.clear();
      if (a.known) {
        r.known = true;
        for (unsigned t = 0; t < N_; ++t) {
          bool x = a.v[t] != 0;
          if (op == BO::BO_LAnd) r.v[t] = x ? (b.known ? b.v[t] != 0 : 0) : 0;
          else r.v[t] = x ? 1 : (b.known ? b.v[t] != 0 : 0);
        }
        // Threads whose result depends on an unknown right-hand side.
        if (!b.known)
          for (unsigned t = 0; t < N_; ++t)
            if (active_[t] && ((a.v[t] != 0) == (op == BO::BO_LAnd))) { r.known = false; break; }
      }
      return r;
    }
    if (bo->isAssignmentOp()) return evalAssign(bo);
    Value a = eval(bo->getLHS());
    Value b = eval(bo->getRHS());
    return arith(op, a, b, bo->getType(), bo->getLHS(), bo->getRHS());
  }

  Value evalAssign(const clang::BinaryOperator* bo) {
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

  Value evalUnary(const clang::UnaryOperator* uo) {
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
    if (!a.known) return a;
    Value r = a;
    r.isPtr = false;
    for (auto& x : r.v) {
      switch (uo->getOpcode()) {
        case UO::UO_Minus: x = -x; break;
        case UO::UO_Not: x = ~x; break;
        case UO::UO_LNot: x = !x; break;
        case UO::UO_Plus: break;
        default: r.known = false; break;
      }
    }
    if (uo->getOpcode() == UO::UO_LNot) r.strideSym.clear();
    normalize(r, uo->getType());
    return r;
  }

  Value evalConditional(const clang::AbstractConditionalOperator* co) {
    Value c = eval(co->getCond());
    // Arms of ?: that only load or compute are predicated by the compiler: only calls count as work.
    recordBranch(co, co->getCond(), c, containsCall(co->getTrueExpr()), containsCall(co->getFalseExpr()), false);
    Mask saved = active_;
    Mask tm = saved, fm = saved;
    if (c.known)
      for (unsigned t = 0; t < N_; ++t) {
        tm[t] = saved[t] && c.v[t] != 0;
        fm[t] = saved[t] && c.v[t] == 0;
      }
    active_ = tm;
    Value a = std::find(tm.begin(), tm.end(), 1) != tm.end() ? eval(co->getTrueExpr()) : unknown();
    active_ = fm;
    Value b = std::find(fm.begin(), fm.end(), 1) != fm.end() ? eval(co->getFalseExpr()) : unknown();
    active_ = saved;
    Value r = a.isPtr ? a : b.isPtr ? b : unknown();
    mergeFlags(r, a, b);
    r.data = r.data || c.data;
    r.symbolic = r.symbolic || c.symbolic;
    r.param = r.param || c.param;
    r.known = c.known && (a.known || std::find(tm.begin(), tm.end(), 1) == tm.end()) &&
              (b.known || std::find(fm.begin(), fm.end(), 1) == fm.end());
    for (unsigned t = 0; t < N_; ++t) r.v[t] = (c.known && c.v[t]) ? a.v[t] : b.v[t];
    return r;
  }

  // ---- lvalues and memory -----------------------------------------------------------------
  LVal evalLValue(const clang::Expr* e) {
    e = strip(e);
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
      else if (vd->getType()->isArrayType() && vd->isLocalVarDecl()) sp = MemSpace::Local;
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
      if (vd->getType()->isReferenceType()) return lv;  // references: not followed
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
      if (varying(idx) && !idx.strideSym.empty()) lv.ptr.strideSym = idx.strideSym;
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
      if (lv.ptr.known)
        for (auto& x : lv.ptr.v) x += off;
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
    eval(e);
    return lv;
  }

  Value readVar(const clang::VarDecl* vd) {
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

  void writeVar(const clang::VarDecl* vd, const Value& v) {
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

  void writeLVal(const LVal& lv, const Value& v) {
    if (lv.kind == LVal::Var) writeVar(lv.var, v);
    else if (lv.kind == LVal::Mem) recordAccess(lv, false, true, false, &v);
  }

  Value readMem(const LVal& lv) {
    recordAccess(lv, true, false, false, nullptr);
    if (lv.ptr.space == MemSpace::Local || lv.ptr.space == MemSpace::Unknown) return unknown();
    // Same address for every active thread: a uniform value (a representative symbol).
    if (lv.ptr.known && !varying(lv.ptr) && !lv.ptr.data) {
      auto key = lv.expr;
      auto it = uniformLoads_.find(key);
      int64_t rep = it != uniformLoads_.end() ? it->second : (uniformLoads_[key] = 1024 * static_cast<int64_t>(uniformLoads_.size() + 1));
      Value r = constant(rep);
      r.symbolic = true;
      r.param = true;
      r.same = true;
      return r;
    }
    Value r = unknown();
    r.data = true;
    return r;
  }

  void recordAccess(const LVal& lv, bool read, bool write, bool atomic, const Value* stored) {
    if (!anyActive()) return;
    if (lv.ptr.space == MemSpace::Local) return;
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
    a.epoch = epoch_;
    a.warpEpoch = warpEpoch_;
    a.seq = seq_++;
    a.context = context();
    a.function = frames_.back().fn;
    a.guards = guards_;
    m_.accesses_.push_back(std::move(a));
  }

  // ---- calls ------------------------------------------------------------------------------
  void barrier(const clang::Expr* call, bool block, std::string name) {
    if (!anyActive()) return;
    Barrier b;
    b.call = call;
    b.blockLevel = block;
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

  Value evalMemberCall(const clang::CXXMemberCallExpr* mce) {
    const clang::Expr* obj = mce->getImplicitObjectArgument();
    if (obj) obj = obj->IgnoreImpCasts();  // through derived-to-base casts: the group's own type
    auto* md = mce->getMethodDecl();
    std::string name = md ? md->getNameAsString() : "";
    GroupKind gk = obj ? groupKind(obj->getType()) : GroupKind::None;
    if (gk != GroupKind::None) {
      Value self = eval(obj);
      for (const auto* a : mce->arguments()) eval(a);
      return groupMethod(gk, obj->getType(), name, mce, self.group);
    }
    if (md && md->hasBody() && !isSystem(md)) return inlineCall(md, mce, obj);
    Value r = unknown();
    if (obj) r.data = eval(obj).data;
    for (const auto* a : mce->arguments()) r.data = eval(a).data || r.data;
    return r;
  }

  // A cooperative-groups method (member or static) on a group of kind `gk` and type `t`.
  Value groupMethod(GroupKind gk, clang::QualType t, const std::string& name, const clang::Expr* call,
                    unsigned knownSize = 0) {
    // The object's own size when the model followed it (a tile passed as a thread_group).
    if (knownSize && gk != GroupKind::Grid) gk = knownSize >= N_ ? GroupKind::Block : GroupKind::Warp;
    unsigned tile = gk == GroupKind::Warp ? (knownSize ? knownSize : tileSizeOf(t)) : 0;
    if (name == "sync") {
      barrier(call, gk != GroupKind::Warp, recordName(t) + "::sync()");
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

  bool isSystem(const clang::Decl* d) const {
    auto& sm = ctx_.getSourceManager();
    auto loc = sm.getExpansionLoc(d->getLocation());
    return loc.isInvalid() || sm.isInSystemHeader(loc);
  }

  Value evalCall(const clang::CallExpr* ce) {
    const clang::FunctionDecl* fd = ce->getDirectCallee();
    std::string name = fd ? fd->getNameAsString() : "";
    std::string qname = fd ? fd->getQualifiedNameAsString() : "";
    auto args = [&]() {
      std::vector<Value> v;
      for (const auto* a : ce->arguments()) v.push_back(eval(a));
      return v;
    };
    if (name == "__syncthreads" || name == "__syncthreads_count" || name == "__syncthreads_and" ||
        name == "__syncthreads_or" || name == "__barrier_sync" || name == "__barrier0") {
      args();
      barrier(ce, true, name + "()");
      return name == "__syncthreads" ? unknown() : [&] { Value v = constant(1); v.symbolic = true; return v; }();
    }
    if (name == "__syncwarp") {
      args();
      barrier(ce, false, "__syncwarp()");
      return unknown();
    }
    if (qname.find("cooperative_groups") != std::string::npos) {
      // Static group methods (CUDA 13's thread_block_tile<N>::thread_rank() is static).
      if (auto* md = llvm::dyn_cast<clang::CXXMethodDecl>(fd)) {
        clang::QualType t = ctx_.getCanonicalTagType(md->getParent());
        unsigned known = 0;
        if (auto* me = llvm::dyn_cast<clang::MemberExpr>(ce->getCallee()->IgnoreParenImpCasts())) {
          t = me->getBase()->IgnoreImpCasts()->getType();
          known = eval(me->getBase()).group;
        }
        if (GroupKind gk = groupKind(t); gk != GroupKind::None) {
          args();
          return groupMethod(gk, t, name, ce, known);
        }
      }
      if (name == "this_thread_block") {
        args();
        Value g = unknown();
        g.group = N_;
        return g;
      }
      if (name == "tiled_partition") {
        auto v = args();
        Value g = unknown();
        if (v.size() == 2 && v[1].known && !varying(v[1])) g.group = static_cast<unsigned>(v[1].v[0]);
        else g.group = tileSizeOf(ce->getType());
        return g;
      }
      if (name == "sync" && ce->getNumArgs() == 1) {
        Value self = eval(ce->getArg(0));
        GroupKind gk = groupKind(ce->getArg(0)->getType());
        if (self.group) gk = self.group >= N_ ? GroupKind::Block : GroupKind::Warp;
        args();
        barrier(ce, gk != GroupKind::Warp, "cooperative_groups::sync()");
        return unknown();
      }
      if (name == "reduce" || name.rfind("inclusive_scan", 0) == 0 || name.rfind("exclusive_scan", 0) == 0) {
        args();
        barrier(ce, false, name);
        return unknown();
      }
      args();
      return unknown();
    }
    if (name.rfind("__", 0) == 0 && name.size() > 5 && name.compare(name.size() - 5, 5, "_sync") == 0) {
      args();
      barrier(ce, false, name + "()");
      return unknown();
    }
    if (name.rfind("atomic", 0) == 0 && ce->getNumArgs() >= 1) {
      Value p = eval(ce->getArg(0));
      for (unsigned i = 1; i < ce->getNumArgs(); ++i) eval(ce->getArg(i));
      if (p.isPtr) {
        LVal lv;
        lv.kind = LVal::Mem;
        lv.ptr = p;
        lv.expr = ce;
        lv.size = static_cast<unsigned>(p.pointee);
        recordAccess(lv, true, true, true, nullptr);
      }
      return unknown();  // an atomic's old value: not a plain load (warp-aggregated indices are coalesced)
    }
    if ((name.rfind("__ld", 0) == 0) && ce->getNumArgs() == 1) {
      Value p = eval(ce->getArg(0));
      if (!p.isPtr) return dataOf(unknown());
      LVal lv;
      lv.kind = LVal::Mem;
      lv.ptr = p;
      lv.expr = ce;
      lv.size = static_cast<unsigned>(p.pointee);
      return readMem(lv);
    }
    if ((name == "min" || name == "max" || name == "umin" || name == "umax" || name == "llmin" || name == "llmax") &&
        ce->getNumArgs() == 2) {
      auto v = args();
      Value r = unknown();
      mergeFlags(r, v[0], v[1]);
      r.known = v[0].known && v[1].known;
      if (r.known)
        for (unsigned t = 0; t < N_; ++t)
          r.v[t] = name.find("min") != std::string::npos ? std::min(v[0].v[t], v[1].v[t]) : std::max(v[0].v[t], v[1].v[t]);
      return r;
    }
    if ((name == "__mul24" || name == "__umul24") && ce->getNumArgs() == 2) {
      auto v = args();
      return arith(clang::BO_Mul, v[0], v[1], ce->getType(), ce->getArg(0), ce->getArg(1));
    }
    if (fd) {
      const clang::FunctionDecl* def = fd->getDefinition();
      if (def && def->hasBody() && !isSystem(def)) return inlineCall(def, ce, nullptr);
    }
    auto v = args();
    Value r = unknown();  // a library or undefined function: data only if its inputs are
    for (const auto& a : v) r.data = r.data || a.data;
    return r;
  }

  Value inlineCall(const clang::FunctionDecl* def, const clang::CallExpr* ce, const clang::Expr* obj) {
    std::vector<Value> argv;
    unsigned first = llvm::isa<clang::CXXOperatorCallExpr>(ce) && llvm::isa<clang::CXXMethodDecl>(def) ? 1 : 0;
    for (unsigned i = first; i < ce->getNumArgs(); ++i) argv.push_back(eval(ce->getArg(i)));
    if (obj) eval(obj);
    if (depth_ >= kMaxInlineDepth || !def->getBody()) return dataOf(unknown());
    for (const auto& f : frames_)
      if (f.fn == def) return dataOf(unknown());  // recursion
    Frame fr;
    fr.fn = def;
    fr.returned.assign(N_, 0);
    fr.ret = unknown();
    for (unsigned i = 0; i < def->getNumParams() && i < argv.size(); ++i) {
      Value v = argv[i];
      if (def->getParamDecl(i)->getType()->isPointerType() && v.isPtr) {
        clang::QualType pt = def->getParamDecl(i)->getType()->getPointeeType();
        if (!pt->isIncompleteType() && !pt->isVoidType()) v.pointee = ctx_.getTypeSizeInChars(pt).getQuantity();
        v.ptrVolatile = v.ptrVolatile || pt.isVolatileQualified();
      }
      fr.vars[def->getParamDecl(i)] = v;
    }
    Mask entry = active_;
    ++depth_;
    frames_.push_back(std::move(fr));
    walk(def->getBody());
    Frame done = std::move(frames_.back());
    frames_.pop_back();
    --depth_;
    // Threads that returned come back to the caller (those that exited the kernel do not).
    for (unsigned t = 0; t < N_; ++t) active_[t] = entry[t] && alive_[t];
    return done.hasRet ? done.ret : unknown();
  }

  // ---- statements -------------------------------------------------------------------------
  void recordBranch(const clang::Stmt* s, const clang::Expr* cond, const Value& c, bool thenWork, bool elseWork,
                    bool isLoop, const Mask* cont = nullptr) {
    if (!anyActive()) return;
    Branch b;
    b.stmt = s;
    b.cond = cond;
    b.active = active_;
    b.known = c.known;
    b.data = c.data;
    b.symbolic = c.symbolic;
    b.param = c.param;
    b.isLoop = isLoop;
    b.inLoop = loopDepth_ > 0;
    b.thenWork = thenWork;
    b.elseWork = elseWork;
    b.context = context();
    b.path.assign(N_, 0);
    for (unsigned t = 0; t < N_; ++t)
      b.path[t] = cont ? (*cont)[t] : (c.known ? (c.v[t] != 0) : 0);
    m_.branches_.push_back(std::move(b));
  }

  void walk(const clang::Stmt* s) {
    if (!s || !anyActive() || m_.truncated_) return;
    if (!budget()) return;
    if (auto* cs = llvm::dyn_cast<clang::CompoundStmt>(s)) {
      for (const auto* c : cs->body()) {
        if (!anyActive()) break;
        walk(c);
      }
      return;
    }
    if (auto* ds = llvm::dyn_cast<clang::DeclStmt>(s)) {
      for (const auto* d : ds->decls()) {
        auto* vd = llvm::dyn_cast<clang::VarDecl>(d);
        if (!vd || vd->hasAttr<clang::CUDASharedAttr>() || vd->isStaticLocal()) continue;
        Value v = vd->hasInit() ? eval(vd->getInit()) : unknown();
        if (vd->getType()->isIntegralOrEnumerationType()) normalize(v, vd->getType());
        retype(v, vd->getType());
        if (vd->getType()->isReferenceType() || vd->getType()->isArrayType()) v = unknown();
        Value nv = unknown();
        assignMasked(nv, v);
        frames_.back().vars[vd] = nv;
      }
      return;
    }
    if (auto* is = llvm::dyn_cast<clang::IfStmt>(s)) return walkIf(is);
    if (auto* fs = llvm::dyn_cast<clang::ForStmt>(s)) {
      if (fs->getInit()) walk(fs->getInit());
      std::string var;
      if (auto* ds = llvm::dyn_cast_or_null<clang::DeclStmt>(fs->getInit()))
        if (ds->isSingleDecl())
          if (auto* vd = llvm::dyn_cast<clang::VarDecl>(ds->getSingleDecl())) loopVar_ = vd;
      return walkLoop(s, fs->getCond(), fs->getBody(), fs->getInc(), false);
    }
    if (auto* ws = llvm::dyn_cast<clang::WhileStmt>(s)) return walkLoop(s, ws->getCond(), ws->getBody(), nullptr, false);
    if (auto* dos = llvm::dyn_cast<clang::DoStmt>(s)) {
      // `do { ... } while (0)` (macro bodies): the body once, not a loop; `break` still leaves it.
      bool again = true;
      if (!dos->getCond()->isValueDependent() && dos->getCond()->EvaluateAsBooleanCondition(again, ctx_) && !again) {
        Mask entry = active_;
        loops_.push_back({Mask(N_, 0), Mask(N_, 0)});
        walk(dos->getBody());
        Mask out = loops_.back().broken, cont = loops_.back().continued;
        loops_.pop_back();
        Frame& f = frames_.back();
        for (unsigned t = 0; t < N_; ++t)
          active_[t] = (active_[t] || out[t] || cont[t]) && entry[t] && alive_[t] && (f.returned.empty() || !f.returned[t]);
        return;
      }
      return walkLoop(s, dos->getCond(), dos->getBody(), nullptr, true);
    }
    if (auto* rs = llvm::dyn_cast<clang::CXXForRangeStmt>(s)) {
      ++loopDepth_;
      walk(rs->getLoopVarStmt());
      walk(rs->getBody());
      --loopDepth_;
      return;
    }
    if (auto* ss = llvm::dyn_cast<clang::SwitchStmt>(s)) return walkSwitch(ss);
    if (auto* rs = llvm::dyn_cast<clang::ReturnStmt>(s)) {
      Value v = rs->getRetValue() ? eval(rs->getRetValue()) : unknown();
      Frame& f = frames_.back();
      if (frames_.size() == 1) {
        for (unsigned t = 0; t < N_; ++t)
          if (active_[t]) alive_[t] = 0;
      } else {
        if (!f.hasRet) { f.ret = unknown(); f.ret.known = v.known; }
        assignMasked(f.ret, v);
        if (!v.known) f.ret.known = false;
        f.hasRet = true;
        for (unsigned t = 0; t < N_; ++t)
          if (active_[t]) f.returned[t] = 1;
      }
      std::fill(active_.begin(), active_.end(), 0);
      return;
    }
    if (llvm::isa<clang::BreakStmt>(s) || llvm::isa<clang::ContinueStmt>(s)) {
      if (!loops_.empty()) {
        Mask& m = llvm::isa<clang::BreakStmt>(s) ? loops_.back().broken : loops_.back().continued;
        for (unsigned t = 0; t < N_; ++t)
          if (active_[t]) m[t] = 1;
      }
      std::fill(active_.begin(), active_.end(), 0);
      return;
    }
    if (auto* ls = llvm::dyn_cast<clang::LabelStmt>(s)) return walk(ls->getSubStmt());
    if (auto* as = llvm::dyn_cast<clang::AttributedStmt>(s)) return walk(as->getSubStmt());
    if (llvm::isa<clang::GotoStmt>(s)) {
      m_.truncated_ = true;
      return;
    }
    if (auto* e = llvm::dyn_cast<clang::Expr>(s)) {
      eval(e);
      return;
    }
  }

  void walkIf(const clang::IfStmt* is) {
    if (is->getInit()) walk(is->getInit());
    if (is->getConditionVariableDeclStmt()) walk(is->getConditionVariableDeclStmt());
    if (is->isConsteval()) return;
    Value c = eval(is->getCond());
    recordBranch(is, is->getCond(), c, doesRealWork(is->getThen()), is->getElse() && doesRealWork(is->getElse()), false);
    Mask saved = active_;
    Mask tm = saved, fm = saved;
    if (c.known)
      for (unsigned t = 0; t < N_; ++t) {
        tm[t] = saved[t] && c.v[t] != 0;
        fm[t] = saved[t] && c.v[t] == 0;
      }
    // A guard over representative symbol values (`if (t < n)` with a 2-D grid index) that every
    // thread fails must not hide the body: without an else, walk it with the threads that got here.
    if (c.known && c.symbolic && !is->getElse() && std::find(tm.begin(), tm.end(), 1) == tm.end()) tm = saved;
    // Unknown condition: both paths are walked with every thread (over-approximation); the
    // accesses there remember the condition's line.
    if (!c.known) guards_.push_back(ctx_.getSourceManager().getExpansionLineNumber(is->getCond()->getBeginLoc()));
    active_ = tm;
    walk(is->getThen());
    Mask afterThen = active_;
    active_ = fm;
    if (is->getElse()) walk(is->getElse());
    Mask afterElse = active_;
    if (!c.known) guards_.pop_back();
    for (unsigned t = 0; t < N_; ++t) active_[t] = (afterThen[t] || afterElse[t]) && saved[t];
    if (!c.known) {
      // Both paths ran for every thread: a thread is still active only if neither path left.
      for (unsigned t = 0; t < N_; ++t) active_[t] = afterThen[t] && afterElse[t];
    }
  }

  void walkLoop(const clang::Stmt* s, const clang::Expr* cond, const clang::Stmt* body, const clang::Expr* inc, bool isDo) {
    const clang::VarDecl* lv = loopVar_;
    loopVar_ = nullptr;
    loops_.push_back({Mask(N_, 0), Mask(N_, 0)});
    ++loopDepth_;
    ctxStack_.emplace_back();
    Mask entry = active_;
    bool work = doesRealWork(body);
    unsigned iter = 0;
    bool symbolicCond = false;
    while (anyActive() && !m_.truncated_) {
      // Context for findings: the loop variable's value when uniform.
      if (lv) {
        Value v = readVar(lv);
        if (v.known && !varying(v)) {
          for (unsigned t = 0; t < N_; ++t)
            if (active_[t]) { ctxStack_.back() = fmt::format("{} = {}", lv->getName().str(), v.v[t]); break; }
        } else {
          ctxStack_.back() = fmt::format("iteration {}", iter + 1);
        }
      } else {
        ctxStack_.back() = fmt::format("iteration {}", iter + 1);
      }
      if (!(isDo && iter == 0) && cond) {
        Value c = eval(cond);
        if (!c.known || c.symbolic) symbolicCond = true;
        Mask cont(N_, 0);
        for (unsigned t = 0; t < N_; ++t) cont[t] = active_[t] && (!c.known || c.v[t] != 0);
        // A bound over representative symbol values (`i < n` with blockIdx and n stand-ins) that no
        // thread passes on entry must not hide the body: walk one iteration with every thread.
        if (iter == 0 && c.known && c.symbolic && std::find(cont.begin(), cont.end(), 1) == cont.end()) cont = active_;
        recordBranch(s, cond, c, work, false, true, &cont);
        active_ = cont;
        if (!anyActive()) break;
      }
      unsigned cap = symbolicCond ? kSymbolicIters : kMaxConcreteIters;
      if (iter >= cap) break;
      walk(body);
      // Threads that hit `continue` take the increment too.
      for (unsigned t = 0; t < N_; ++t)
        if (loops_.back().continued[t]) active_[t] = 1, loops_.back().continued[t] = 0;
      if (inc && anyActive()) eval(inc);
      if (isDo && cond && anyActive()) {
        Value c = eval(cond);
        if (!c.known || c.symbolic) symbolicCond = true;
        Mask cont(N_, 0);
        for (unsigned t = 0; t < N_; ++t) cont[t] = active_[t] && (!c.known || c.v[t] != 0);
        recordBranch(s, cond, c, work, false, true, &cont);
        active_ = cont;
      }
      ++iter;
      if (iter >= (symbolicCond ? kSymbolicIters : kMaxConcreteIters)) break;
    }
    ctxStack_.pop_back();
    --loopDepth_;
    loops_.pop_back();
    // After the loop: every thread that entered and has neither returned nor exited.
    Frame& f = frames_.back();
    for (unsigned t = 0; t < N_; ++t)
      active_[t] = entry[t] && alive_[t] && (f.returned.empty() || !f.returned[t]);
  }

  void walkSwitch(const clang::SwitchStmt* ss) {
    if (ss->getInit()) walk(ss->getInit());
    Value c = eval(ss->getCond());
    Mask entry = active_;
    auto* body = llvm::dyn_cast_or_null<clang::CompoundStmt>(ss->getBody());
    // Which case each thread jumps to.
    std::vector<int> target(N_, -1);
    std::vector<const clang::SwitchCase*> cases;
    if (body)
      for (const auto* st : body->body()) {
        const clang::Stmt* cur = st;
        while (auto* sc = llvm::dyn_cast<clang::SwitchCase>(cur)) {
          cases.push_back(sc);
          cur = sc->getSubStmt();
        }
      }
    int defaultIdx = -1;
    for (size_t i = 0; i < cases.size(); ++i) {
      if (llvm::isa<clang::DefaultStmt>(cases[i])) { defaultIdx = static_cast<int>(i); continue; }
      auto* cs = llvm::cast<clang::CaseStmt>(cases[i]);
      clang::Expr::EvalResult r;
      if (!cs->getLHS()->EvaluateAsInt(r, ctx_)) continue;
      int64_t val = r.Val.getInt().getExtValue();
      for (unsigned t = 0; t < N_; ++t)
        if (c.known && target[t] < 0 && c.v[t] == val) target[t] = static_cast<int>(i);
    }
    for (unsigned t = 0; t < N_; ++t)
      if (target[t] < 0) target[t] = defaultIdx;
    {
      Branch b;
      b.stmt = ss;
      b.cond = ss->getCond();
      b.active = active_;
      b.known = c.known;
      b.data = c.data;
      b.symbolic = c.symbolic;
      b.param = c.param;
      b.inLoop = loopDepth_ > 0;
      b.thenWork = b.elseWork = doesRealWork(ss->getBody());
      b.context = context();
      b.path.assign(N_, 0);
      for (unsigned t = 0; t < N_; ++t) b.path[t] = target[t] + 1;
      if (anyActive()) m_.branches_.push_back(std::move(b));
    }
    if (!body) return;
    loops_.push_back({Mask(N_, 0), Mask(N_, 0)});  // `break` leaves the switch
    if (!c.known) guards_.push_back(ctx_.getSourceManager().getExpansionLineNumber(ss->getCond()->getBeginLoc()));
    std::fill(active_.begin(), active_.end(), 0);
    for (const auto* st : body->body()) {
      const clang::Stmt* cur = st;
      while (auto* sc = llvm::dyn_cast<clang::SwitchCase>(cur)) {
        int idx = static_cast<int>(std::find(cases.begin(), cases.end(), sc) - cases.begin());
        for (unsigned t = 0; t < N_; ++t)
          if (entry[t] && (!c.known || target[t] == idx)) active_[t] = 1;
        cur = sc->getSubStmt();
      }
      walk(cur);
    }
    if (!c.known) guards_.pop_back();
    Mask broken = loops_.back().broken;
    Mask cont = loops_.back().continued;
    loops_.pop_back();
    // After the switch: threads that fell off its end, left with `break`, or matched no case.
    for (unsigned t = 0; t < N_; ++t)
      active_[t] = (active_[t] || broken[t] || (c.known && target[t] < 0)) && entry[t] && alive_[t];
    if (!loops_.empty())
      for (unsigned t = 0; t < N_; ++t)
        if (cont[t]) loops_.back().continued[t] = 1;
  }

  KernelModel& m_;
  clang::ASTContext& ctx_;
  unsigned N_;
  Mask active_, alive_;
  std::vector<Frame> frames_;
  std::vector<LoopState> loops_;
  std::vector<std::string> ctxStack_;
  std::vector<unsigned> warpEpoch_;
  std::map<const clang::Expr*, int64_t> uniformLoads_;
  std::vector<unsigned> guards_;  // lines of undecided conditions being walked
  std::unordered_map<const clang::Expr*, std::optional<int64_t>> folded_;
  const clang::VarDecl* loopVar_ = nullptr;
  unsigned epoch_ = 0, seq_ = 0, loopDepth_ = 0;
  int depth_ = 0;
  size_t steps_ = 0;
};

// Whether a local variable is assigned after its initialisation anywhere in its function
// (`threads = 128;` before a second launch): then its initialiser is not the launch's value.
bool reassigned(const clang::VarDecl* vd) {
  auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(vd->getDeclContext());
  if (!fn || !fn->getBody()) return false;
  struct Finder : clang::RecursiveASTVisitor<Finder> {
    const clang::VarDecl* v;
    bool found = false;
    bool refers(const clang::Expr* e) const {
      auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts());
      return d && d->getDecl() == v;
    }
    bool VisitBinaryOperator(clang::BinaryOperator* b) {
      if (b->isAssignmentOp() && refers(b->getLHS())) found = true;
      return !found;
    }
    bool VisitUnaryOperator(clang::UnaryOperator* u) {
      if (u->isIncrementDecrementOp() && refers(u->getSubExpr())) found = true;
      return !found;
    }
  } f;
  f.v = vd;
  f.TraverseStmt(fn->getBody());
  return f.found;
}

// Reads a block-shape expression: an integer, a dim3(...) temporary or a dim3 variable.
bool readShape(const clang::Expr* e, clang::ASTContext& ctx, unsigned dims[3]) {
  dims[0] = 0, dims[1] = 1, dims[2] = 1;
  e = strip(e);
  clang::Expr::EvalResult r;
  auto evalInt = [&](const clang::Expr* x, unsigned& out) {
    x = strip(x);
    if (x->isValueDependent()) return false;
    if (x->EvaluateAsInt(r, ctx)) { out = static_cast<unsigned>(r.Val.getInt().getExtValue()); return true; }
    // A local variable with a constant initializer that is never reassigned (common `int threads = 256;`).
    x = x->IgnoreImpCasts();
    if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(x))
      if (auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl()))
        if (vd->hasInit() && !vd->getInit()->isValueDependent() && !reassigned(vd) && vd->getInit()->EvaluateAsInt(r, ctx)) {
          out = static_cast<unsigned>(r.Val.getInt().getExtValue());
          return true;
        }
    return false;
  };
  auto fromConstruct = [&](const clang::CXXConstructExpr* c) {
    unsigned n = 0;
    for (const auto* a : c->arguments()) {
      if (llvm::isa<clang::CXXDefaultArgExpr>(a)) break;
      if (n < 3 && !evalInt(a, dims[n])) return false;
      ++n;
    }
    return n > 0 && dims[0] > 0;
  };
  for (int depth = 0; depth < 4; ++depth) {
    e = strip(e);
    if (e->isInstantiationDependent() || e->getType().isNull()) return false;
    if (auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(e)) {
      if (c->getNumArgs() == 1 && !llvm::isa<clang::CXXDefaultArgExpr>(c->getArg(0))) {
        const clang::Expr* a = strip(c->getArg(0));
        if (a->getType()->isIntegralOrEnumerationType()) return evalInt(a, dims[0]);
        e = a;
        continue;
      }
      return fromConstruct(c);
    }
    if (auto* ice = llvm::dyn_cast<clang::ImplicitCastExpr>(e)) { e = ice->getSubExpr(); continue; }
    if (auto* fce = llvm::dyn_cast<clang::CXXFunctionalCastExpr>(e)) { e = fce->getSubExpr(); continue; }
    if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
      auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl());
      if (!vd || !vd->hasInit()) return false;
      if (vd->getType()->isIntegralOrEnumerationType()) return evalInt(e, dims[0]);
      // `dim3 block; block.x = 16; block.y = 16;`: the members set one by one in its function.
      if (auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(vd->getDeclContext()); fn && fn->getBody()) {
        struct Members : clang::RecursiveASTVisitor<Members> {
          const clang::VarDecl* v;
          std::vector<std::pair<int, const clang::Expr*>> sets;
          bool VisitBinaryOperator(clang::BinaryOperator* b) {
            if (b->getOpcode() != clang::BO_Assign) return true;
            auto* me = llvm::dyn_cast<clang::MemberExpr>(b->getLHS()->IgnoreParenImpCasts());
            auto* base = me ? llvm::dyn_cast<clang::DeclRefExpr>(me->getBase()->IgnoreParenImpCasts()) : nullptr;
            if (!base || base->getDecl() != v) return true;
            std::string f = me->getMemberDecl()->getNameAsString();
            int axis = f == "x" ? 0 : f == "y" ? 1 : f == "z" ? 2 : -1;
            if (axis >= 0) sets.push_back({axis, b->getRHS()});
            return true;
          }
        } mem;
        mem.v = vd;
        mem.TraverseStmt(fn->getBody());
        if (!mem.sets.empty()) {
          if (!readShape(vd->getInit(), ctx, dims)) dims[0] = 1, dims[1] = 1, dims[2] = 1;
          for (const auto& [axis, rhs] : mem.sets)  // in source order: the last one wins
            if (!evalInt(rhs, dims[axis])) return false;
          return dims[0] > 0;
        }
      }
      e = vd->getInit();
      continue;
    }
    if (e->getType()->isIntegralOrEnumerationType()) return evalInt(e, dims[0]);
    return false;
  }
  return false;
}

}  // namespace

namespace {
// The kernel a function reference names: `k`, `&k`, `(void*)k`, `k<T>`.
const clang::FunctionDecl* kernelOf(const clang::Expr* e) {
  while (e) {
    e = e->IgnoreParenImpCasts();
    if (auto* c = llvm::dyn_cast<clang::ExplicitCastExpr>(e)) { e = c->getSubExpr(); continue; }
    if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u && u->getOpcode() == clang::UO_AddrOf) { e = u->getSubExpr(); continue; }
    break;
  }
  if (auto* dre = llvm::dyn_cast_or_null<clang::DeclRefExpr>(e))
    if (auto* fd = llvm::dyn_cast<clang::FunctionDecl>(dre->getDecl()); fd && fd->hasAttr<clang::CUDAGlobalAttr>()) return fd;
  return nullptr;
}
}  // namespace

LaunchIndex::LaunchIndex(clang::ASTContext& ctx) {
  struct V : clang::RecursiveASTVisitor<V> {
    clang::ASTContext* ctx;
    LaunchIndex* index;
    bool shouldVisitTemplateInstantiations() const { return true; }
    void record(const clang::FunctionDecl* k, const clang::Expr* blockArg, clang::SourceLocation at) {
      auto& sm = ctx->getSourceManager();
      std::string where = fmt::format("launch at line {}", sm.getExpansionLineNumber(at));
      auto keys = [&](auto&& add) {
        for (const clang::FunctionDecl* f : std::initializer_list<const clang::FunctionDecl*>{k, k->getCanonicalDecl(), k->getTemplateInstantiationPattern()})
          if (f) add(f->getCanonicalDecl());
        if (auto* prim = k->getPrimaryTemplate()) add(prim->getTemplatedDecl()->getCanonicalDecl());
      };
      unsigned d[3];
      if (!blockArg || !readShape(blockArg, *ctx, d) || d[0] * d[1] * d[2] == 0 || d[0] * d[1] * d[2] > 1024) {
        keys([&](const clang::FunctionDecl* f) { index->unreadable_.emplace(f, where); });
        return;
      }
      Shape s{d[0], d[1], d[2], where};
      keys([&](const clang::FunctionDecl* f) {
        index->shapes_.emplace(f, s);
        auto& v = index->allShapes_[f];
        bool known = false;
        for (const auto& o : v) known = known || (o.x == s.x && o.y == s.y && o.z == s.z);
        if (!known) v.push_back(s);
      });
    }
    bool VisitCUDAKernelCallExpr(clang::CUDAKernelCallExpr* call) {
      // Clang's recovery (the config may not be a call) and template patterns (a dependent block
      // shape has no type yet; the instantiations are visited instead).
      if (call->containsErrors() || call->isInstantiationDependent()) return true;
      const clang::FunctionDecl* k = call->getDirectCallee();
      if (!k) return true;
      // The block is the second dim3 of the configuration call: (grid, block, ...) host side,
      // (func, params, grid, block, ...) for a device-side launch, which is how the device-side
      // parse sees a launch in a lambda (lambdas are __host__ __device__).
      const clang::CallExpr* cfg = call->getConfig();
      const clang::Expr* block = nullptr;
      unsigned dim3s = 0;
      for (unsigned i = 0; cfg && i < cfg->getNumArgs() && !block; ++i) {
        const clang::Expr* a = cfg->getArg(i);
        auto* rd = a->getType()->getAsCXXRecordDecl();
        if (rd && rd->getName() == "dim3" && ++dim3s == 2) block = a;
      }
      record(k, block, call->getBeginLoc());
      return true;
    }
    // cudaLaunchKernel(k, grid, block, ...) and cudaLaunchCooperativeKernel: the same shape rules.
    bool VisitCallExpr(clang::CallExpr* call) {
      if (call->containsErrors() || call->isInstantiationDependent() || llvm::isa<clang::CUDAKernelCallExpr>(call)) return true;
      const clang::FunctionDecl* fd = call->getDirectCallee();
      if (!fd || call->getNumArgs() < 3) return true;
      std::string n = fd->getNameAsString();
      if (n != "cudaLaunchKernel" && n != "cudaLaunchCooperativeKernel") return true;
      if (const clang::FunctionDecl* k = kernelOf(call->getArg(0))) record(k, call->getArg(2), call->getBeginLoc());
      return true;
    }
    // Launches written in lambdas (`auto run = [&] { k<<<g, b>>>(...); };`).
    bool TraverseLambdaExpr(clang::LambdaExpr* l) {
      TraverseStmt(l->getBody());
      return true;
    }
  } v;
  v.ctx = &ctx;
  v.index = this;
  v.TraverseDecl(ctx.getTranslationUnitDecl());
}

namespace {
// A kernel's entry in one of the index's maps: by its declaration, its template pattern, or its
// primary template.
template <class Map>
const typename Map::mapped_type* lookupKernel(const Map& map, const clang::FunctionDecl* k) {
  for (const clang::FunctionDecl* f : std::initializer_list<const clang::FunctionDecl*>{k->getCanonicalDecl(), k->getTemplateInstantiationPattern()}) {
    if (!f) continue;
    auto it = map.find(f->getCanonicalDecl());
    if (it != map.end()) return &it->second;
  }
  if (auto* prim = k->getPrimaryTemplate()) {
    auto it = map.find(prim->getTemplatedDecl()->getCanonicalDecl());
    if (it != map.end()) return &it->second;
  }
  return nullptr;
}
}  // namespace

const LaunchIndex::Shape* LaunchIndex::find(const clang::FunctionDecl* k) const { return lookupKernel(shapes_, k); }

std::vector<LaunchIndex::Shape> LaunchIndex::all(const clang::FunctionDecl* k) const {
  const auto* v = lookupKernel(allShapes_, k);
  return v ? *v : std::vector<Shape>{};
}

const std::string* LaunchIndex::unreadable(const clang::FunctionDecl* k) const { return lookupKernel(unreadable_, k); }

std::unique_ptr<KernelModel> KernelModel::build(const clang::FunctionDecl* kernel, clang::ASTContext& ctx,
                                                const ModelOptions& opts, const LaunchIndex& launches,
                                                const LaunchIndex::Shape* shape) {
  // One walk of the kernel over a block of the given shape.
  auto walk = [&](unsigned x, unsigned y, unsigned z, std::string source, bool assumed) {
    auto m = std::make_unique<KernelModel>();
    m->ctx_ = &ctx;
    m->kernel_ = kernel;
    m->bx_ = x, m->by_ = y, m->bz_ = z;
    if (m->threads() == 0 || m->threads() > 1024) m->bx_ = 256, m->by_ = 1, m->bz_ = 1;
    m->blockSource_ = std::move(source);
    m->blockAssumed_ = assumed;
    Builder b(*m, ctx);
    b.run(kernel);
    return m;
  };
  if (!opts.blockDimGiven) {
    if (const LaunchIndex::Shape* s = shape ? shape : launches.find(kernel)) return walk(s->x, s->y, s->z, s->where, false);
    if (auto* lb = kernel->getAttr<clang::CUDALaunchBoundsAttr>()) {
      clang::Expr::EvalResult r;
      if (lb->getMaxThreads() && !lb->getMaxThreads()->isValueDependent() && lb->getMaxThreads()->EvaluateAsInt(r, ctx))
        return walk(static_cast<unsigned>(std::clamp<int64_t>(r.Val.getInt().getExtValue(), 1, 1024)), 1, 1,
                    "__launch_bounds__", false);
    }
  }
  bool assumed = !opts.blockDimGiven;
  std::string source = assumed ? "assumed" : "--block-dim";
  // The launch is in the file but its block size is a run-time value: say so.
  if (const std::string* u = assumed ? launches.unreadable(kernel) : nullptr)
    source = "assumed: the " + *u + " has a block size known only at run time";
  auto m = walk(opts.blockX, opts.blockY, opts.blockZ, source, assumed);
  // An assumed block that indexes a fixed-size array past its end is probably too large: try
  // smaller 1-D blocks and keep the largest that stays inside every array.
  if (assumed && !m->outOfBounds_.empty() && m->by_ == 1 && m->bz_ == 1) {
    for (unsigned x = m->bx_ / 2; x >= 8; x /= 2) {
      auto c = walk(x, 1, 1, "inferred: a larger block would index '" + m->outOfBounds_ + "' past its end", true);
      if (c->outOfBounds_.empty()) return c;
    }
  }
  return m;
}

std::string KernelModel::blockDescription() const {
  std::string shape = by_ == 1 && bz_ == 1 ? fmt::format("{}-thread", bx_)
                                           : bz_ == 1 ? fmt::format("{}x{}", bx_, by_) : fmt::format("{}x{}x{}", bx_, by_, bz_);
  if (blockAssumed_ && blockSource_.rfind("inferred", 0) == 0)
    return fmt::format("a {} block ({}; pass --block-dim)", shape, blockSource_);
  if (blockAssumed_ && blockSource_.rfind("assumed:", 0) == 0)
    return fmt::format("a {} block ({}; pass --block-dim)", shape, blockSource_);
  if (blockAssumed_) return fmt::format("a {} block (assumed; pass --block-dim or launch it in this file)", shape);
  return fmt::format("a {} block ({})", shape, blockSource_);
}

std::string KernelModel::threadName(unsigned t) const {
  if (by_ == 1 && bz_ == 1) return fmt::format("thread {}", t);
  if (bz_ == 1) return fmt::format("thread ({},{})", tx(t), ty(t));
  return fmt::format("thread ({},{},{})", tx(t), ty(t), tz(t));
}

const std::vector<KernelModel::Race>& KernelModel::sharedRaces() const {
  if (racesDone_) return races_;
  racesDone_ = true;
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
  auto storedValue = [](const Access* a, unsigned t, int64_t& v) {
    if (!a->storedKnown) return false;
    v = a->stored[t];
    return true;
  };
  std::set<std::pair<const clang::Expr*, const clang::Expr*>> seen;
  std::vector<Entry> entries;
  size_t i = 0;
  while (i < accesses_.size()) {
    unsigned epoch = accesses_[i].epoch;
    entries.clear();
    // The unit of comparison: the smallest access of the interval (4 bytes for float/int code, so
    // as cheap as words; 1 for char arrays).
    size_t end = i;
    int64_t unit = 4;
    for (; end < accesses_.size() && accesses_[end].epoch == epoch; ++end)
      if (accesses_[end].space == MemSpace::Shared && accesses_[end].elemSize > 0)
        unit = std::min<int64_t>(unit, accesses_[end].elemSize);
    for (; i < end; ++i) {
      const Access& a = accesses_[i];
      if (a.space != MemSpace::Shared || !a.known || a.data || !a.base || a.isAtomic) continue;
      for (unsigned t = 0; t < a.mask.size(); ++t) {
        if (!a.mask[t]) continue;
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
            bool sameWarp = o->thread / 32 == e.thread / 32;
            if (sameWarp && o->acc->warpEpoch[e.thread / 32] != a->warpEpoch[e.thread / 32]) continue;  // __syncwarp between
            // Every thread storing the same value (a shared scalar set by all): benign.
            if (oneValue && o->acc->isWrite && a->isWrite && !a->isRead && !o->acc->isRead) continue;
            // Reading back the value this thread stored itself, when every store is that value.
            if (oneValue && !a->isWrite && wroteSame.count(e.thread)) continue;
            if (!seen.insert({o->acc->expr, a->expr}).second) return;
            Race r;
            r.first = o->acc;
            r.second = a;
            r.t1 = o->thread;
            r.t2 = e.thread;
            r.byteAddr = a->addr[e.thread];
            r.firstByteAddr = o->acc->addr[o->thread];
            r.sameWarp = sameWarp;
            r.possible = !o->acc->guards.empty() || !a->guards.empty();
            int w1 = warpOnly(o->acc), w2 = warpOnly(a);
            r.warpSynchronous = sameWarp && w1 >= 0 && w1 == w2;
            races_.push_back(r);
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
  return races_;
}

namespace {
// Calls of the program's own functions (not intrinsics, cooperative-groups accessors or library calls).
struct CallFinder : clang::RecursiveASTVisitor<CallFinder> {
  bool found = false;
  bool VisitCallExpr(clang::CallExpr* c) {
    const clang::FunctionDecl* fd = c->getDirectCallee();
    if (!fd) { found = true; return false; }
    auto& sm = fd->getASTContext().getSourceManager();
    auto loc = sm.getExpansionLoc(fd->getLocation());
    if (loc.isValid() && !sm.isInSystemHeader(loc) && fd->getQualifiedNameAsString().find("cooperative_groups") == std::string::npos) {
      found = true;
      return false;
    }
    return true;
  }
};
}  // namespace

bool containsCall(const clang::Stmt* s) {
  if (!s) return false;
  CallFinder f;
  f.TraverseStmt(const_cast<clang::Stmt*>(s));
  return f.found;
}

namespace {
struct WorkFinder : clang::RecursiveASTVisitor<WorkFinder> {
  bool found = false;
  bool VisitCallExpr(clang::CallExpr*) { found = true; return false; }
  bool VisitArraySubscriptExpr(clang::ArraySubscriptExpr*) { found = true; return false; }
  bool VisitForStmt(clang::ForStmt*) { found = true; return false; }
  bool VisitWhileStmt(clang::WhileStmt*) { found = true; return false; }
  bool VisitDoStmt(clang::DoStmt*) { found = true; return false; }
  bool VisitUnaryOperator(clang::UnaryOperator* u) {
    if (u->getOpcode() == clang::UO_Deref) { found = true; return false; }
    return true;
  }
};
}  // namespace

bool doesRealWork(const clang::Stmt* s) {
  if (!s) return false;
  if (auto* cs = llvm::dyn_cast<clang::CompoundStmt>(s); cs && cs->size() >= 3) return true;
  WorkFinder f;
  f.TraverseStmt(const_cast<clang::Stmt*>(s));
  return f.found;
}

std::string elementName(const Access& a, int64_t byteAddr) {
  std::string name = a.baseName.empty() ? "memory" : a.baseName;
  const auto* vd = llvm::dyn_cast_or_null<clang::VarDecl>(a.base);
  if (vd && vd->getType()->isConstantArrayType()) {
    auto& ctx = vd->getASTContext();
    clang::QualType t = vd->getType();
    std::string idx;
    int64_t rem = byteAddr;
    while (auto* at = ctx.getAsConstantArrayType(t)) {
      clang::QualType el = at->getElementType();
      int64_t sz = ctx.getTypeSizeInChars(el).getQuantity();
      if (sz <= 0) break;
      idx += fmt::format("[{}]", rem / sz);
      rem %= sz;
      t = el;
    }
    return name + idx;
  }
  unsigned es = a.elemSize ? a.elemSize : 4;
  return fmt::format("{}[{}]", name, byteAddr / es);
}

}  // namespace gpuopt
