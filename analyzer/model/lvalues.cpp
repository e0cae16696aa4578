// Lvalues of the kernel model: what an expression names (a variable, an element, a member, an
// object through a pointer), per-thread objects and their construction and copies, variable
// reads and writes (see builder.h).
#include <clang/AST/RecordLayout.h>
#include <clang/Lex/Lexer.h>

#include "analyzer/model/builder.h"

#include <algorithm>

namespace gpuopt::model_detail {

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
    if (movesWithThread(idx) && !idx.strideSym.empty()) lv.ptr.strideSym = idx.strideSym, lv.ptr.strideSrc = idx.strideSrc;
    numberAddress(lv.ptr, base, idx);
    lv.ptr.stepBound = !lv.ptr.known && idx.stepBound && base.known && !varying(base) ? idx.stepBound * sz : 0;
    lv.ptr.values = idx.data && !base.data ? idx.values : 0;
    lv.size = sz;
    lv.isVolatile = lv.isVolatile || base.ptrVolatile;
    // Index past a constant array bound: a real bug, or a wrong block-shape assumption.
    if (idx.known)
      if (auto* ice = llvm::dyn_cast<clang::ImplicitCastExpr>(ase->getBase()->IgnoreParens());
          ice && ice->getCastKind() == clang::CK_ArrayToPointerDecay)
        if (auto* cat = ctx_.getAsConstantArrayType(ice->getSubExpr()->getType())) {
          int64_t bound = static_cast<int64_t>(cat->getSize().getZExtValue());
          // The outermost dimension of a variable or a member (not a row of a 2-D array, whose
          // neighbour is the next row of the same object).
          const bool outermost = !llvm::isa<clang::ArraySubscriptExpr>(ice->getSubExpr()->IgnoreParenImpCasts());
          for (unsigned t = 0; t < N_; ++t)
            if (active_[t] && (idx.v[t] < 0 || idx.v[t] >= bound)) {
              if (m_.outOfBounds_.empty()) m_.outOfBounds_ = base.baseName.empty() ? "an array" : base.baseName;
              if (!outermost) break;
              if (lv.outside.empty()) lv.outside.assign(N_, 0);
              lv.outside[t] = 1;
            }
        }
    return lv;
  }
  if (auto* uo = llvm::dyn_cast<clang::UnaryOperator>(e)) {
    if (uo->getOpcode() == clang::UO_Deref) {
      // An out-parameter bound to a caller's variable (Frame::pointees).
      if (auto* d = llvm::dyn_cast<clang::DeclRefExpr>(uo->getSubExpr()->IgnoreParenImpCasts()))
        if (auto* vd = llvm::dyn_cast<clang::VarDecl>(d->getDecl()); vd && !frames_.empty())
          if (auto f = frames_.back().pointees.find(vd); f != frames_.back().pointees.end()) return f->second;
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
  // `reinterpret_cast<uint2&>(pixel[0])` (type punning, gsplat's AssignAs): the same address, as an
  // object of the cast's type, so `= ...` through it is one store of that width. (It was read as
  // a load of the original element and the store was lost.)
  if (auto* ce = llvm::dyn_cast<clang::ExplicitCastExpr>(e); ce && ce->getCastKind() == clang::CK_LValueBitCast) {
    LVal inner = evalLValue(ce->getSubExpr());
    clang::QualType t = ce->getType();
    if (inner.kind == LVal::Mem && !t->isIncompleteType() && !t->isDependentType()) {
      inner.size = ctx_.getTypeSizeInChars(t).getQuantity();
      return inner;
    }
    if (inner.kind == LVal::Var && !t->isIncompleteType() && !t->isDependentType() &&
        ctx_.getTypeSizeInChars(t) == ctx_.getTypeSizeInChars(inner.var->getType().getNonReferenceType()))
      return inner;
    return lv;
  }
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

Builder::LVal Builder::pointeeOf(const Value& p, const clang::Expr* e) const {
  LVal lv;
  lv.kind = LVal::Mem;
  lv.ptr = p;
  lv.expr = e;
  lv.size = static_cast<unsigned>(p.pointee);
  return lv;
}

void Builder::initObject(const LVal& dst, const clang::Expr* init) {
  if (!init) return;
  init = strip(init);
  if (auto* ce = llvm::dyn_cast<clang::CastExpr>(init); ce && ce->getCastKind() == clang::CK_ConstructorConversion)
    return initObject(dst, ce->getSubExpr());
  if (auto* fc = llvm::dyn_cast<clang::CXXFunctionalCastExpr>(init);
      fc && (fc->getCastKind() == clang::CK_ConstructorConversion || fc->getCastKind() == clang::CK_NoOp))
    return initObject(dst, fc->getSubExpr());  // `range_t{a, b}`: the list
  if (auto* cce = llvm::dyn_cast<clang::CXXConstructExpr>(init)) return construct(dst, cce);
  if (auto* ile = llvm::dyn_cast<clang::InitListExpr>(init)) {
    auto* rd = ile->getType()->getAsRecordDecl();
    auto* crd = llvm::dyn_cast_or_null<clang::CXXRecordDecl>(rd);
    if (rd && ile->getNumInits() == 1 && ile->getInit(0)->getType()->getAsRecordDecl() == rd)
      return initObject(dst, ile->getInit(0));  // `T x{y}`: a copy
    if (!rd && initLocalArray(dst, ile)) return;
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
  // An object made by a call (returned by value): a function the model follows initialises it
  // from its returns, field by field (what its fields hold was lost: moderngpu's get_tile(...)
  // returned a range whose count then compared as a different unknown in every thread, eleventh
  // stop check); else it is the call's value.
  if (llvm::isa<clang::CallExpr>(init) && dst.kind == LVal::Mem && dst.ptr.space == MemSpace::Local && init->getType()->isRecordType()) {
    const clang::Expr* savedCall = pendingRetCall_;
    LVal savedSlot = pendingRetSlot_;
    const bool savedTaken = retSlotTaken_;
    pendingRetCall_ = init, pendingRetSlot_ = dst, retSlotTaken_ = false;
    Value v = eval(init);
    const bool taken = retSlotTaken_;
    pendingRetCall_ = savedCall, pendingRetSlot_ = savedSlot, retSlotTaken_ = savedTaken;
    if (!taken) writeLVal(dst, v);
    return;
  }
  writeLVal(dst, eval(init));
}

// A per-thread array of scalars (or of such arrays) initialised from a list, `float s[4] = {0.f}`:
// each element keeps its value, as a store would (the elements the list leaves out are zero), so
// what is later read back is numbered (ggml mmvf: sums accumulated in `sumf[j]`, reduced across the
// warp and stored by every lane to one slot, are one value). The initialisation is no access (the
// compiler keeps such arrays in registers or writes them once); arrays over 64 elements or 512
// bytes are forgotten as before.
bool Builder::initLocalArray(const LVal& dst, const clang::InitListExpr* ile) {
  if (dst.kind != LVal::Mem || dst.ptr.space != MemSpace::Local || !localAddress(dst)) return false;
  const auto* cat = ctx_.getAsConstantArrayType(ile->getType());
  if (!cat) return false;
  clang::QualType et = cat->getElementType();
  const uint64_t n = cat->getSize().getZExtValue();
  if (n == 0 || n > 64 || et->isIncompleteType() || ctx_.getTypeSizeInChars(ile->getType()).getQuantity() > 512) return false;
  const bool nested = ctx_.getAsConstantArrayType(et) != nullptr;
  if (!nested && !et->isScalarType()) return false;
  const int64_t esz = ctx_.getTypeSizeInChars(et).getQuantity();
  for (uint64_t i = 0; i < n; ++i) {
    const clang::Expr* fi = i < ile->getNumInits() ? ile->getInit(i) : ile->getArrayFiller();
    Value p = dst.ptr;
    for (auto& x : p.v) x += static_cast<int64_t>(i) * esz;
    LVal el = objectAt(p, et, dst.expr);
    if (nested) {
      auto* sub = llvm::dyn_cast_or_null<clang::InitListExpr>(fi ? strip(fi) : nullptr);
      if (!sub || !initLocalArray(el, sub)) {
        if (fi) eval(fi);
        forgetLocal(dst.ptr.base);
        return true;
      }
      continue;
    }
    Value v;
    if (!fi || llvm::isa<clang::ImplicitValueInitExpr>(fi)) {
      if (et->isRealFloatingType()) {
        v = unknown();  // +0.0, numbered as the literal 0.0 is
        v.tag.assign(N_, floatZeroTag());
        v.same = true;
      } else {
        v = constant(0);
        if (et->isPointerType()) v.isPtr = true;
      }
    } else {
      v = eval(fi);
      normalize(v, et);
      retype(v, et);
    }
    storeLocal(el, v);
  }
  return true;
}

bool Builder::userConstructed(const clang::CXXConstructExpr* cce) const {
  auto* ctor = cce->getConstructor();
  const clang::FunctionDecl* def = nullptr;
  return ctor && ctor->isUserProvided() && ctor->hasBody(def) && def && !isSystem(def) && !cce->isValueDependent() &&
         cce->getType()->isRecordType() && !cce->getType()->isIncompleteType();
}

Builder::LVal Builder::temporaryObject(const clang::CXXConstructExpr* cce) {
  const clang::VarDecl*& vd = temporaries_[cce];
  if (!vd)
    vd = clang::VarDecl::Create(ctx_, ctx_.getTranslationUnitDecl(), cce->getBeginLoc(), cce->getBeginLoc(), nullptr,
                                cce->getType(), nullptr, clang::SC_None);
  Value base = constant(0);
  base.isPtr = true, base.base = vd, base.baseName = "temporary", base.space = MemSpace::Local;
  return objectAt(base, cce->getType(), cce);
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
  // A temporary built by a constructor with a body, copied into a per-thread object: built there
  // (what the copy leaves is the same), so its members keep their values.
  if (auto* cce = llvm::dyn_cast<clang::CXXConstructExpr>(srcE);
      cce && userConstructed(cce) && dst.kind == LVal::Mem && dst.ptr.space == MemSpace::Local && localAddress(dst)) {
    construct(dst, cce);
    return unknown();
  }
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

}  // namespace gpuopt::model_detail
