// Expressions of the kernel model: constants, parameters, built-in variables, member reads and
// casts: what each thread computes (see builder.h). Operators are in operators.cpp, lvalues in
// lvalues.cpp, memory reads and writes in memory.cpp.
#include <clang/AST/RecordLayout.h>
#include <clang/AST/RecursiveASTVisitor.h>
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

namespace {
struct NullTests : clang::RecursiveASTVisitor<NullTests> {
  const clang::ParmVarDecl* p;
  clang::ASTContext* ctx;
  bool found = false;
  bool isP(const clang::Expr* e) const {
    const auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts());
    return d && d->getDecl() == p;
  }
  bool VisitBinaryOperator(clang::BinaryOperator* b) {
    if (b->getOpcode() != clang::BO_EQ && b->getOpcode() != clang::BO_NE) return true;
    auto null = [&](const clang::Expr* e) {
      return e->isNullPointerConstant(*ctx, clang::Expr::NPC_ValueDependentIsNotNull) != clang::Expr::NPCK_NotNull;
    };
    found = found || (isP(b->getLHS()) && null(b->getRHS())) || (isP(b->getRHS()) && null(b->getLHS()));
    return !found;
  }
  bool VisitImplicitCastExpr(clang::ImplicitCastExpr* c) {
    found = found || (c->getCastKind() == clang::CK_PointerToBoolean && isP(c->getSubExpr()));
    return !found;
  }
};
}  // namespace

bool Builder::testsForNull(const clang::ParmVarDecl* p) {
  auto [it, fresh] = nullTested_.try_emplace(p, false);
  if (!fresh) return it->second;
  const auto* fn = llvm::dyn_cast<clang::FunctionDecl>(p->getDeclContext());
  const clang::FunctionDecl* def = nullptr;
  if (fn && fn->hasBody(def) && def) {
    NullTests v;
    v.p = def->getParamDecl(p->getFunctionScopeIndex());
    v.ctx = &ctx_;
    v.TraverseStmt(def->getBody());
    it->second = v.found;
  }
  return it->second;
}

Value Builder::paramValue(const clang::ParmVarDecl* p) {
  clang::QualType t = p->getType();
  // A null pointer every launch passes (LaunchIndex::argumentConstant), in a kernel that tests it
  // (`p != NULL`, `p ? ... : ...`: an optional argument): the null constant, so the test is decided
  // and the arm that would dereference it is not walked. A kernel that never tests it is launched
  // with a placeholder (`k<<<g, b>>>(nullptr, n)` in an example), and keeps its pointer.
  if (t->isPointerType() && testsForNull(p))
    if (auto it = m_.paramConsts_.find(p); it != m_.paramConsts_.end() && it->second == 0) {
      Value v = constant(0);
      v.launchArg = true;
      return v;
    }
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
    // Every launch passes the same compile-time value (`linear_kernel(k, 0, stream, 1u, ...)`).
    if (auto it = m_.paramConsts_.find(p); it != m_.paramConsts_.end()) {
      Value v = constant(it->second);
      v.launchArg = true;
      return v;
    }
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

namespace {
// Whether `e` has at most kMaxFoldedNodes nodes (counted without recursion, up to the bound).
constexpr unsigned kMaxFoldedNodes = 256;
bool smallExpr(const clang::Expr* e) {
  llvm::SmallVector<const clang::Stmt*, 32> todo{e};
  unsigned n = 0;
  while (!todo.empty()) {
    const clang::Stmt* s = todo.pop_back_val();
    if (++n > kMaxFoldedNodes) return false;
    for (const clang::Stmt* c : s->children())
      if (c) todo.push_back(c);
  }
  return true;
}
}  // namespace

Value Builder::eval(const clang::Expr* e) {
  if (!e) return unknown();
  e = strip(e);
  if (!budget()) return unknown();
  clang::QualType type = e->getType();
  // Constants: literals, constexpr, #define, enumerators, sizeof, template arguments.
  if (type->isIntegralOrEnumerationType()) {
    // Constant folding is asked once per expression (loops evaluate the same ones many times).
    // Clang's folding walks the whole expression: asked of each operand of a 65,536-term sum it
    // would cost the square (minutes); a larger expression is folded operand by operand instead
    // (evalBinary and the rest combine the constants).
    auto [it, fresh] = folded_.try_emplace(e);
    if (fresh && !e->isValueDependent() && smallExpr(e) && !e->HasSideEffects(ctx_)) {
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
  // An enumerator named through an object (`t < c[i].num_elements`, an enum member of the
  // struct): the enumerator's value; the object is not read (Clang's folding refuses a
  // non-constant object).
  if (auto* me = llvm::dyn_cast<clang::MemberExpr>(e))
    if (auto* ec = llvm::dyn_cast<clang::EnumConstantDecl>(me->getMemberDecl())) return constant(ec->getInitVal().getExtValue());
  // What Clang could not resolve but nvcc compiles (a braced list assigned to a `__half2`, which
  // Clang calls ambiguous; benign_diagnostics.h): its operands still run, so their accesses are
  // evaluated; the result is not known.
  if (auto* re = llvm::dyn_cast<clang::RecoveryExpr>(e)) {
    for (const auto* sub : re->subExpressions()) eval(sub);
    return unknown();
  }
  if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (dre->getDecl()->getName() == "warpSize") return constant(32);
    if (dre->refersToEnclosingVariableOrCapture() && uniformCaptureField(dre)) return uniformCaptureValue(dre);
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
    // A constructor of the project's with a body: walked into a temporary object of the thread's
    // own (its accesses and stores are the program's; they were "not analysed"), which is read.
    if (userConstructed(cce)) {
      LVal tmp = temporaryObject(cce);
      construct(tmp, cce);
      return readMem(tmp);
    }
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
    // A scalar initialised with braces (`size_t const row{blockIdx.x * blockDim.x + threadIdx.x};`,
    // `T sum{}`): its one value (it was unknown, and every access indexed by it went unjudged).
    const clang::QualType t = ile->getType();
    if (t->isScalarType() && ile->getNumInits() <= 1) {
      if (ile->getNumInits() == 0) return t->isIntegralOrEnumerationType() ? constant(0) : unknown();
      Value v = eval(ile->getInit(0));
      if (t->isIntegralOrEnumerationType()) normalize(v, t);
      retype(v, t);
      return v;
    }
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
  if (axis >= 0 && axis < 3) m_.blockAxes_[axis] = true;
  Value v = constant(kBlockIdxRep);
  v.symbolic = true;
  v.block = true;
  if (!blockSteps_) return v;  // no alternatives: every step derived from it is "not known"
  for (int k = 0; k < 3; ++k) v.alt[k].assign(N_, kBlockIdxRep + (axis < 2 ? kBlockAlts[k][axis] : 0));
  return v;
}

// A lambda's closure the kernel got by value (`template <class F> __global__ void k(F f)`), or a
// closure captured by copy inside the one `this` is: the parameter that holds it, else none.
__attribute__((noinline)) const clang::ParmVarDecl* Builder::uniformClosure(const clang::Expr* obj) const {
  if (!obj || frames_.empty()) return nullptr;
  obj = obj->IgnoreParenImpCasts();
  if (const auto* cce = llvm::dyn_cast<clang::CXXConstructExpr>(obj);  // a copy of one
      cce && cce->getConstructor() && cce->getConstructor()->isCopyOrMoveConstructor() && cce->getNumArgs() >= 1)
    obj = strip(cce->getArg(0))->IgnoreParenImpCasts();
  const auto* rd = obj->getType().getNonReferenceType()->getAsCXXRecordDecl();
  if (!rd || !rd->isLambda()) return nullptr;
  if (const auto* dr = llvm::dyn_cast<clang::DeclRefExpr>(obj)) {
    const auto* p = llvm::dyn_cast<clang::ParmVarDecl>(dr->getDecl());
    if (!p) return nullptr;
    if (!p->getType()->isReferenceType() && p->getDeclContext() == frames_.front().fn) return p;
    auto it = frames_.back().uniformParams.find(p);
    return it == frames_.back().uniformParams.end() ? nullptr : it->second;
  }
  if (const auto* me = llvm::dyn_cast<clang::MemberExpr>(obj))
    if (llvm::isa<clang::CXXThisExpr>(me->getBase()->IgnoreParenImpCasts()) && !me->getMemberDecl()->getType()->isReferenceType())
      return frames_.back().uniformThis;
  return nullptr;
}

// A variable a lambda captured by copy, read in the body of a closure the kernel got by value
// (Frame::uniformThis): the same value for every thread (the kernel's argument), not known. Numbered
// by the closure's field, so that equal captures compare equal (moderngpu's counts: `min(32 *
// (warp + 1), count) - 1 == tid` then picks one lane of each warp, eleventh stop check).
// (Out of line, and no Value held in eval's frame while it asks: deep expressions recurse
// through eval, whose frame must stay small.)
__attribute__((noinline)) const clang::FieldDecl* Builder::uniformCaptureField(const clang::DeclRefExpr* dre) const {
  const clang::ParmVarDecl* root = frames_.empty() ? nullptr : frames_.back().uniformThis;
  const auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl());
  const auto* md = llvm::dyn_cast_or_null<clang::CXXMethodDecl>(frames_.empty() ? nullptr : frames_.back().fn);
  if (!root || !vd || !md || !md->getParent()->isLambda() || !vd->getType()->isScalarType()) return nullptr;
  if (frames_.back().vars.count(vd)) return nullptr;
  llvm::DenseMap<const clang::ValueDecl*, clang::FieldDecl*> fields;
  clang::FieldDecl* thisField = nullptr;
  md->getParent()->getCaptureFields(fields, thisField);
  auto it = fields.find(vd);
  if (it == fields.end() || !it->second || it->second->getType()->isReferenceType()) return nullptr;
  return it->second;
}
__attribute__((noinline)) Value Builder::uniformCaptureValue(const clang::DeclRefExpr* dre) {
  Value r = unknown();
  r.same = true;
  r.tag.assign(N_, mix(0x4649454cull ^ reinterpret_cast<uintptr_t>(frames_.back().uniformThis),
                       reinterpret_cast<uintptr_t>(uniformCaptureField(dre))));  // "FIEL"
  return r;
}

__attribute__((noinline)) Value Builder::evalMemberOfValue(const clang::MemberExpr* me) {
  if (auto v = groupDimMember(me)) return *v;
  eval(strip(me->getBase()));
  // A field of a closure the kernel got by value (a lambda's copy capture): one value for every
  // thread of the grid, not known (moderngpu's counts: `min(32 * (warp + 1), count) - 1 == tid`
  // then picks one lane of each warp, eleventh stop check).
  const clang::Expr* base = me->getBase()->IgnoreParenImpCasts();
  const clang::ParmVarDecl* root = nullptr;
  if (llvm::isa<clang::CXXThisExpr>(base)) root = frames_.back().uniformThis;
  else if (const auto* dr = llvm::dyn_cast<clang::DeclRefExpr>(base); dr && !me->isArrow()) root = uniformClosure(dr);
  const auto* fd = llvm::dyn_cast<clang::FieldDecl>(me->getMemberDecl());
  if (root && fd && !fd->getType()->isReferenceType() && fd->getType()->isScalarType()) {
    Value r = unknown();
    r.same = true;
    r.tag.assign(N_, mix(0x4649454cull ^ reinterpret_cast<uintptr_t>(root), reinterpret_cast<uintptr_t>(fd)));  // "FIEL"
    return r;
  }
  return unknown();
}

std::optional<Value> Builder::groupDimMember(const clang::MemberExpr* me) {
  // block.thread_index().x, dim3 members of group calls.
  auto* base = strip(me->getBase());
  // `block.group_index()`: a member call, or (CUDA 13's cooperative groups, where thread_block's
  // group_index() and thread_index() are static) a plain call whose callee names the object.
  const clang::CXXMethodDecl* method = nullptr;
  const clang::Expr* object = nullptr;
  if (auto* call = llvm::dyn_cast<clang::CXXMemberCallExpr>(base)) {
    method = call->getMethodDecl();
    object = call->getImplicitObjectArgument();
  } else if (auto* call = llvm::dyn_cast<clang::CallExpr>(base)) {
    if (auto* callee = llvm::dyn_cast<clang::MemberExpr>(call->getCallee()->IgnoreParenImpCasts())) {
      method = llvm::dyn_cast<clang::CXXMethodDecl>(callee->getMemberDecl());
      object = callee->getBase();
    }
  }
  if (method && object) {
    std::string name = method->getNameAsString();
    std::string f = me->getMemberDecl()->getNameAsString();
    int axis = f == "x" ? 0 : f == "y" ? 1 : f == "z" ? 2 : -1;
    if (axis >= 0 && groupKind(object->IgnoreImpCasts()->getType()) != GroupKind::None) {
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
  return std::nullopt;
}

Value Builder::evalCast(const clang::CastExpr* ce) {
  using CK = clang::CastKind;
  const clang::Expr* sub = ce->getSubExpr();
  switch (ce->getCastKind()) {
    case CK::CK_LValueToRValue: {
      // `c ? x : y` as an lvalue read: the value of the arm each thread takes.
      if (llvm::isa<clang::AbstractConditionalOperator>(strip(sub))) return eval(sub);
      // `block.group_index().x` read as an xvalue of the returned dim3.
      if (auto* me = llvm::dyn_cast<clang::MemberExpr>(strip(sub)))
        if (auto v = groupDimMember(me)) return *v;
      if (const auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(strip(sub));
          dre && dre->refersToEnclosingVariableOrCapture() && uniformCaptureField(dre))
        return uniformCaptureValue(dre);
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
      // A zero converts to a zero (numbered alike, so that `x += 0.0f` after `float t = 0;` is
      // seen adding nothing).
      std::vector<uint8_t> zero;
      if (ce->getCastKind() != CK::CK_FloatingToIntegral && ce->getCastKind() != CK::CK_FloatingToBoolean)
        for (unsigned t = 0; t < N_; ++t)
          if (zeroAt(v, t)) zero.resize(N_, 0), zero[t] = 1;
      number(v, mix(0x43415354ull, ce->getCastKind()), {&v});  // "CAST": the conversion of the same value
      v.known = false;
      if (!zero.empty()) {
        v.tag.resize(N_, 0);
        for (unsigned t = 0; t < N_; ++t)
          if (zero[t]) v.tag[t] = floatZeroTag();
      }
      return v;
    }
    case CK::CK_NullToPointer:
    case CK::CK_IntegralToPointer: {
      // Not a pointer into memory the model follows, but one value for every thread when the
      // integer is (`counts == nullptr` on a parameter is decided alike by every thread).
      Value s = eval(sub);
      // The null constant (`NULL`, `0`, `nullptr`): 0, which a null pointer parameter every
      // launch passes equals (comparisons with a real pointer are not decided: evalBinary).
      if (ce->getCastKind() == CK::CK_NullToPointer) return constant(0);
      Value r = unknown();
      r.same = uniformish(s);
      return r;
    }
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

}  // namespace gpuopt::model_detail
