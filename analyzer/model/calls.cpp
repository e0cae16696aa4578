// Calls in the kernel model: __device__ functions inlined with the caller's arguments, member and
// operator calls, atomics and the library functions evalCall knows by name (see builder.h). Barriers,
// warp votes, shuffles and reductions, and cooperative-groups methods are in intrinsics.cpp.
#include <clang/AST/RecordLayout.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>

#include "analyzer/model/builder.h"

#include <algorithm>
#include <optional>

namespace gpuopt::model_detail {

namespace {
// A member of a library atomic type (`cuda::atomic`, `cuda::atomic_ref`, `cuda::std::atomic`, and
// the `__atomic_*` bases they inherit their members from) that touches the atomic object.
bool isLibraryAtomic(const clang::CXXMethodDecl* md) {
  const clang::CXXRecordDecl* rd = md->getParent();
  if (!rd || !rd->getIdentifier() || !llvm::StringRef(rd->getName()).contains_insensitive("atomic")) return false;
  return md->getIdentifier() && atomicMemberName(md->getName());
}

// A 0/1 flag: a comparison or other bool, the literal 0 or 1, a choice between flags, a cast of
// one, or a local variable every write of which is one (`int first = masked ? 0 : a[i] == i;`).
bool flagExpr(const clang::Expr* e, int depth = 0);
bool flagVar(const clang::VarDecl* vd, int depth) {
  if (!vd || depth > 4 || !vd->isLocalVarDecl() || !vd->getType()->isIntegralOrEnumerationType()) return false;
  const auto* fd = llvm::dyn_cast_or_null<clang::FunctionDecl>(vd->getParentFunctionOrMethod());
  if (!fd || !fd->getBody()) return false;
  struct Writes : clang::RecursiveASTVisitor<Writes> {
    const clang::VarDecl* vd;
    int depth;
    bool ok = true;
    bool names(const clang::Expr* e) const {
      const auto* dr = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts());
      return dr && dr->getDecl() == vd;
    }
    bool VisitBinaryOperator(clang::BinaryOperator* bo) {
      if (bo->isAssignmentOp() && names(bo->getLHS()))
        ok = ok && bo->getOpcode() == clang::BO_Assign && flagExpr(bo->getRHS(), depth + 1);
      return ok;
    }
    bool VisitUnaryOperator(clang::UnaryOperator* uo) {
      if ((uo->isIncrementDecrementOp() || uo->getOpcode() == clang::UO_AddrOf) && names(uo->getSubExpr())) ok = false;
      return ok;
    }
    bool VisitCallExpr(clang::CallExpr* ce) {  // passed by non-const reference
      const clang::FunctionDecl* callee = ce->getDirectCallee();
      unsigned skip = llvm::isa<clang::CXXOperatorCallExpr>(ce) && llvm::isa_and_nonnull<clang::CXXMethodDecl>(callee) ? 1 : 0;
      for (unsigned i = 0; i < ce->getNumArgs(); ++i) {
        if (!names(ce->getArg(i))) continue;
        if (!callee || i < skip || i - skip >= callee->getNumParams()) { ok = false; break; }
        clang::QualType pt = callee->getParamDecl(i - skip)->getType();
        if (pt->isReferenceType() && !pt.getNonReferenceType().isConstQualified()) { ok = false; break; }
      }
      return ok;
    }
  } w;
  w.vd = vd, w.depth = depth;
  if (vd->getInit() && !flagExpr(vd->getInit(), depth + 1)) return false;
  w.TraverseStmt(fd->getBody());
  return w.ok;
}
bool flagExpr(const clang::Expr* e, int depth) {
  if (!e || depth > 8) return false;
  e = e->IgnoreParens();
  if (const auto* c = llvm::dyn_cast<clang::CastExpr>(e)) {
    const clang::Expr* sub = c->getSubExpr()->IgnoreParens();
    if (sub->getType()->isBooleanType()) return true;
    return c->getType()->isIntegralOrEnumerationType() && sub->getType()->isIntegralOrEnumerationType() && flagExpr(sub, depth + 1);
  }
  if (e->getType()->isBooleanType()) return true;
  if (const auto* il = llvm::dyn_cast<clang::IntegerLiteral>(e)) return il->getValue().ule(1);
  if (const auto* co = llvm::dyn_cast<clang::ConditionalOperator>(e))
    return flagExpr(co->getTrueExpr(), depth + 1) && flagExpr(co->getFalseExpr(), depth + 1);
  if (const auto* dr = llvm::dyn_cast<clang::DeclRefExpr>(e)) return flagVar(llvm::dyn_cast<clang::VarDecl>(dr->getDecl()), depth);
  return false;
}
}  // namespace

Value Builder::evalMemberCall(const clang::CXXMemberCallExpr* mce) {
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
  if (md && md->hasBody() && !isSystem(md)) {
    const clang::FunctionDecl* def = md->getDefinition() ? md->getDefinition() : md;
    auto self = objectPtr(mce->getImplicitObjectArgument(), false);
    std::vector<const clang::Expr*> args(mce->arg_begin(), mce->arg_end());
    if (md->isConst()) nextUniformThis_ = uniformClosure(mce->getImplicitObjectArgument());
    return inlineCall(def, mce, args, self ? &*self : nullptr);
  }
  // A library atomic's member (`cuda::atomic<T>`, `cuda::std::atomic<T>`: `table[h].exchange(v)`,
  // `count->fetch_add(1)`): an atomic access of the object, not a plain load of it. Its old value
  // is not a load's (warp-aggregated slots are coalesced), as for atomicAdd.
  if (md && isSystem(md) && obj && isLibraryAtomic(md)) {
    const clang::Expr* self = mce->getImplicitObjectArgument()->IgnoreParenImpCasts();
    std::optional<LVal> lv;
    if (self->getType()->isPointerType()) {
      if (Value p = eval(self); p.isPtr) lv = pointeeOf(p, mce);
    } else if (LVal l = evalLValue(self); l.kind == LVal::Mem) {
      lv = l;
    }
    std::vector<Value> args;
    for (const auto* a : mce->arguments()) args.push_back(eval(a));
    if (lv) {
      const bool load = name == "load", store = name == "store";
      recordAccess(*lv, !store, !load, true, store && !args.empty() ? &args[0] : nullptr);
    }
    return dataOf(unknown());
  }
  std::vector<Value> v;
  if (obj) v.push_back(eval(obj));
  for (const auto* a : mce->arguments()) v.push_back(eval(a));
  // A library method given a pointer into global or shared memory (cub::BlockHistogram's
  // Composite(bins, smem_histogram)): memory the model does not follow, named in the kernel's
  // coverage note, as for a library function (evalCall).
  if (anyActive() && md) {
    m_.reached_.insert(mce);
    for (size_t i = obj ? 1 : 0; i < v.size(); ++i)
      if (v[i].isPtr && v[i].space != MemSpace::Local) {
        m_.unmodelled_.emplace(mce, md->getQualifiedNameAsString());
        break;
      }
  }
  // What it leaves in its reference and pointer arguments is not known (cub::BlockScan's
  // ExclusiveSum(in, out): `out` is each thread's prefix, not what it held before).
  forgetOutputs(md, llvm::ArrayRef<const clang::Expr*>(mce->getArgs(), mce->getNumArgs()),
                llvm::ArrayRef<Value>(v).drop_front(obj ? 1 : 0));
  // CUB's block-wide collectives (BlockReduce, BlockScan, BlockRadixSort, BlockExchange, ...)
  // exchange values through their shared TempStorage with __syncthreads() inside: every thread of
  // the block calls them, and the call orders what comes before it against what comes after, as a
  // barrier does. They live in the toolkit's headers, which are not followed.
  if (md && isSystem(md))
    if (const auto* rd = md->getParent(); rd && rd->getName().starts_with("Block"))
      if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(rd->getEnclosingNamespaceContext());
          ns && (ns->getName() == "cub" || ns->getName().starts_with("CUB_")))
        barrier(mce, true, "cub::" + rd->getNameAsString() + "::" + name + "()");
  // cub::BlockScan's or WarpScan's ExclusiveSum / InclusiveSum(flag, out[, total]) of a 0/1 flag:
  // neighbouring threads' sums differ by 0 or 1 (stream compaction's output slots, FasterTransformer's
  // compacted batch indices, tenth stop check), as for a prefix sum of flags read from memory.
  if (md && isSystem(md) && (name == "ExclusiveSum" || name == "InclusiveSum") && mce->getNumArgs() >= 2)
    if (const auto* rd = md->getParent(); rd && (rd->getName() == "BlockScan" || rd->getName() == "WarpScan"))
      if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(rd->getEnclosingNamespaceContext());
          ns && (ns->getName() == "cub" || ns->getName().starts_with("CUB_")) &&
          mce->getArg(0)->getType()->isIntegralOrEnumerationType() && mce->getArg(1)->getType()->isIntegralOrEnumerationType()) {
        const Value& in = v[obj ? 1 : 0];
        bool flag = flagExpr(mce->getArg(0));
        if (!flag && in.known && !in.symbolic && !in.isPtr) {
          flag = true;
          for (unsigned t = 0; t < N_; ++t)
            if (active_[t] && in.v[t] != 0 && in.v[t] != 1) flag = false;
        }
        if (flag)
          if (LVal lv = evalLValue(strip(mce->getArg(1))); lv.kind == LVal::Var) {
            Value sum = unknown();
            sum.data = true, sum.stepBound = 1;
            writeVar(lv.var, sum);
          }
      }
  Value r = unknown();
  for (const auto& a : v) r.data = r.data || a.data;
  // A library method (`__half::operator float()`) of the same object and arguments: the same value.
  if (md && isSystem(md) && obj && !namesClockOrRandom(name)) {
    std::vector<const Value*> ops;
    for (const auto& a : v) ops.push_back(&a);
    number(r, mix(0x43414c4cull, reinterpret_cast<uintptr_t>(md->getCanonicalDecl())), ops);  // "CALL"
  }
  return r;
}

// A function the model does not follow may write a per-thread array it gets a pointer to, or a
// per-thread object or variable it gets a non-const reference to (a library call, a function whose
// body Clang could not instantiate): no value is known there after it.
void Builder::forgetOutputs(const clang::FunctionDecl* fd, llvm::ArrayRef<const clang::Expr*> args, llvm::ArrayRef<Value> values) {
  for (const auto& a : values)
    if (a.isPtr && a.space == MemSpace::Local) forgetLocal(a.base);
  for (unsigned i = 0; fd && i < args.size() && i < fd->getNumParams(); ++i) {
    clang::QualType pt = fd->getParamDecl(i)->getType();
    if (!pt->isReferenceType() || pt.getNonReferenceType().isConstQualified()) continue;
    const clang::Expr* a = strip(args[i]);
    auto* uo = llvm::dyn_cast<clang::UnaryOperator>(a);
    if (!llvm::isa<clang::DeclRefExpr>(a) && !(uo && uo->getOpcode() == clang::UO_Deref && llvm::isa<clang::CXXThisExpr>(strip(uo->getSubExpr()))))
      continue;
    LVal lv = evalLValue(a);
    if (lv.kind == LVal::Var) writeVar(lv.var, unknown());
    else if (lv.kind == LVal::Mem && lv.ptr.space == MemSpace::Local) forgetLocal(lv.ptr.base);
  }
}

std::optional<Value> Builder::objectPtr(const clang::Expr* obj, bool arrow) {
  if (!obj) return std::nullopt;
  if (arrow || obj->getType()->isPointerType()) {
    Value p = eval(obj);
    if (!p.isPtr) return std::nullopt;
    return p;
  }
  LVal lv = evalLValue(obj);
  if (lv.kind != LVal::Mem) return std::nullopt;
  return lv.ptr;
}

Value Builder::evalCallLike(const clang::Expr* e) {
  if (auto* mce = llvm::dyn_cast<clang::CXXMemberCallExpr>(e)) return evalMemberCall(mce);
  // A kernel launched from device code starts a grid of its own: it is analysed as a kernel
  // with its own launch shape, not inlined into this one.
  if (auto* kc = llvm::dyn_cast<clang::CUDAKernelCallExpr>(e)) {
    for (const auto* a : kc->arguments()) eval(a);
    return unknown();
  }
  if (auto* oce = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e)) return evalOperatorCall(oce);
  return evalCall(llvm::cast<clang::CallExpr>(e));
}

// An overloaded operator: a trivial struct assignment copies the object (a recorded write); a user
// operator with a body is inlined like a call (a member one on its left operand); a library one
// is numbered from its operands.
Value Builder::evalOperatorCall(const clang::CXXOperatorCallExpr* oce) {
  const clang::FunctionDecl* fd = oce->getDirectCallee();
  auto* md = llvm::dyn_cast_or_null<clang::CXXMethodDecl>(fd);
  if (md && (md->isCopyAssignmentOperator() || md->isMoveAssignmentOperator()) && oce->getNumArgs() == 2 &&
      (md->isTrivial() || isSystem(md) || !md->hasBody())) {
    LVal dst = evalLValue(oce->getArg(0));
    Value v = copyObject(dst, oce->getArg(1));
    lastRetLVal_ = dst;
    lastRetCall_ = oce;
    return v;
  }
  if (fd) {
    const clang::FunctionDecl* def = fd->getDefinition();
    if (def && def->hasBody() && !isSystem(def)) {
      std::vector<const clang::Expr*> args(oce->arg_begin(), oce->arg_end());
      if (!md) return inlineCall(def, oce, args, nullptr);
      auto self = objectPtr(oce->getArg(0), false);
      args.erase(args.begin());
      if (md->isConst()) nextUniformThis_ = uniformClosure(oce->getArg(0));
      return inlineCall(def, oce, args, self ? &*self : nullptr);
    }
  }
  std::vector<Value> v;
  for (const auto* a : oce->arguments()) v.push_back(eval(a));
  Value r = unknown();
  for (const auto& a : v) r.data = r.data || a.data;
  if (fd && isSystem(fd) && !v.empty() && !oce->isAssignmentOp()) {
    std::vector<const Value*> ops;
    for (const auto& a : v) ops.push_back(&a);
    number(r, mix(0x43414c4cull, reinterpret_cast<uintptr_t>(fd->getCanonicalDecl())), ops);  // "CALL"
  }
  return r;
}

bool Builder::isSystem(const clang::Decl* d) const {
  auto& sm = ctx_.getSourceManager();
  auto loc = sm.getExpansionLoc(d->getLocation());
  return loc.isInvalid() || sm.isInSystemHeader(loc);
}

Value Builder::evalCall(const clang::CallExpr* ce) {
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
  // A trap ends the threads that reach it, and the kernel with them: nothing after it runs for
  // them (a guard `if (C % 256 != 0) __trap();` leaves only the threads of launches that pass it).
  // Under a guard no thread passes, walked with every thread as a guess, only the guessed path ends.
  if (name == "__trap" || name == "__builtin_trap" || name == "abort" || name == "__assertfail") {
    args();
    if (approxMasks_ == 0)
      for (unsigned t = 0; t < N_; ++t)
        if (active_[t]) alive_[t] = 0;
    std::fill(active_.begin(), active_.end(), 0);
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
      barrier(ce, gk != GroupKind::Warp, "cooperative_groups::sync()", gk == GroupKind::Grid);
      return unknown();
    }
    if (name == "reduce" && ce->getNumArgs() >= 2) {
      Value g = eval(ce->getArg(0));
      const unsigned size = g.group ? g.group : tileSizeOf(ce->getArg(0)->getType());
      Value v = eval(ce->getArg(1));
      for (unsigned i = 2; i < ce->getNumArgs(); ++i) eval(ce->getArg(i));
      barrier(ce, false, name);
      return groupReduced(ce, v, size);
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
    auto v = args();
    barrier(ce, false, name + "()");
    Value r = (name == "__ballot_sync" || name == "__any_sync" || name == "__all_sync") && v.size() == 2 ? voted(name, v[1])
              : name.rfind("__reduce_", 0) == 0 && v.size() == 2                                          ? groupReduced(ce, v[1], 32)
                                                                                                          : shuffled(name, v, ce);
    r.blockMade = true;
    return r;
  }
  const NamedAccess named = namedAccess(name, ce->getNumArgs());
  const bool hintedStore = named == NamedAccess::HintedStore, scopedAtomic = named == NamedAccess::ScopedAtomic;
  if (named != NamedAccess::None && anyActive()) m_.reached_.insert(ce);
  // nvcc's scoped atomic built-ins (CUDA 12.8: __nv_atomic_load_n, __nv_atomic_store_n,
  // __nv_atomic_fetch_add, ...; gpuopt_nvcc_builtins.h): a load reads, a store writes, the others
  // read-modify-write atomically.
  if (scopedAtomic) {
    std::vector<Value> v;
    for (const auto* a : ce->arguments()) v.push_back(eval(a));
    const bool load = name.find("_load") != std::string::npos, store = name.find("_store") != std::string::npos;
    if (v[0].isPtr) {
      LVal lv = pointeeOf(v[0], ce);
      if (v[0].space == MemSpace::Local) forgetLocal(v[0].base);
      if (load) return readMem(lv);
      recordAccess(lv, !store, true, true, store && v.size() >= 2 ? &v[1] : nullptr);
    }
    return load ? dataOf(unknown()) : unknown();
  }
  // The cache-hinted stores of sm_32_intrinsics.h (Clang's own `__stwt` is inline PTX in a system
  // header): a store of the value, whatever the cache policy.
  if (hintedStore) {
    Value p = eval(ce->getArg(0));
    Value v = eval(ce->getArg(1));
    if (p.isPtr) writeLVal(pointeeOf(p, ce), v);
    return unknown();
  }
  if (named == NamedAccess::Atomic) {
    Value p = eval(ce->getArg(0));
    for (unsigned i = 1; i < ce->getNumArgs(); ++i) eval(ce->getArg(i));
    if (p.isPtr) {
      if (p.space == MemSpace::Local) forgetLocal(p.base);
      recordAccess(pointeeOf(p, ce), true, true, true, nullptr);
    }
    return unknown();  // an atomic's old value: not a plain load (warp-aggregated indices are coalesced)
  }
  if (named == NamedAccess::Load) {
    Value p = eval(ce->getArg(0));
    if (!p.isPtr) return dataOf(unknown());
    return readMem(pointeeOf(p, ce));
  }
  if ((name == "min" || name == "max" || name == "umin" || name == "umax" || name == "llmin" || name == "llmax") &&
      ce->getNumArgs() == 2) {
    auto v = args();
    Value r = unknown();
    mergeFlags(r, v[0], v[1]);
    r.known = v[0].known && v[1].known;
    bool isMin = name.find("min") != std::string::npos;
    auto pick = [&](const std::vector<int64_t>& x, const std::vector<int64_t>& y, std::vector<int64_t>& out) {
      out.resize(N_);
      for (unsigned t = 0; t < N_; ++t) out[t] = isMin ? std::min(x[t], y[t]) : std::max(x[t], y[t]);
    };
    if (r.known) {
      pick(v[0].v, v[1].v, r.v);
      if (r.param && varying(r)) r.paramLanes = true;  // `min(tid, n)`: where threads stop differing is n's
      if (r.block && hasAlts(v[0]) && hasAlts(v[1]))
        for (int k = 0; k < 3; ++k) pick(altOf(v[0], k), altOf(v[1], k), r.alt[k]);
    } else {
      // min/max of floats or data: the same operands give the same value, in either order.
      number(r, mix(0x4d494e4d4158ull, isMin), {&v[0], &v[1]}, /*commutative=*/true);  // "MINMAX"
      // min(x, y) is at most either operand's bound: a constant (not a parameter's stand-in) or a
      // bounded unknown.
      if (isMin && ce->getType()->isIntegerType())
        for (const Value& o : v) {
          std::optional<int64_t> bound;
          if (o.known && !o.symbolic && !o.isPtr && !varying(o)) {
            for (unsigned t = 0; t < N_ && !bound; ++t)
              if (active_[t]) bound = o.v[t];
          } else if (!o.known && o.hasHi) {
            bound = o.hi;
          }
          if (bound) r.hi = r.hasHi ? std::min(r.hi, *bound) : *bound, r.hasHi = true;
        }
    }
    return r;
  }
  // __popc(x): the count when x is known. A warp's vote masked by the lanes below this one
  // (`__popc(ballot & lanemask_lt)`, a lane's rank among the warp's voters: stream compaction) is
  // not known, but neighbouring lanes' ranks differ by 0 or 1, and it is at most 32.
  // The address of shared (or global) memory in its own window, for inline PTX (`ldmatrix`,
  // `cp.async`): the pointer, counted in bytes (`addr + 16` is 16 bytes on).
  if ((name == "__cvta_generic_to_shared" || name == "__cvta_generic_to_global") && ce->getNumArgs() == 1) {
    Value p = eval(ce->getArg(0));
    if (!p.isPtr) return p;
    p.pointee = 1;
    return p;
  }
  if ((name == "__popc" || name == "__popcll") && ce->getNumArgs() == 1) {
    const clang::Expr* arg = strip(ce->getArg(0));
    Value lhs, rhs, x;
    // Through the conversion to unsigned (`int vote; __popc(vote & mask)`).
    auto* bo = llvm::dyn_cast<clang::BinaryOperator>(ce->getArg(0)->IgnoreParenImpCasts());
    const bool masked = bo && bo->getOpcode() == clang::BO_And;
    if (masked) {
      lhs = eval(bo->getLHS()), rhs = eval(bo->getRHS());
      x = arith(clang::BO_And, lhs, rhs, bo->getType(), bo->getLHS(), bo->getRHS());
    } else {
      x = eval(arg);
    }
    const bool wide = name == "__popcll";
    if (x.known && !x.symbolic) {
      Value r = constant(0);
      for (unsigned t = 0; t < N_; ++t)
        r.v[t] = wide ? __builtin_popcountll(static_cast<uint64_t>(x.v[t])) : __builtin_popcount(static_cast<uint32_t>(x.v[t]));
      return r;
    }
    Value r = unknown();
    r.data = x.data, r.block = x.block;
    if (fd) number(r, mix(0x43414c4cull, reinterpret_cast<uintptr_t>(fd->getCanonicalDecl())), {&x});  // "CALL"
    auto lanesBelow = [&](const Value& m) {  // lanemask_lt or lanemask_le, per lane
      if (!m.known || m.symbolic) return false;
      bool lt = true, le = true;
      for (unsigned t = 0; t < N_; ++t) {
        if (!active_[t]) continue;
        const uint32_t lane = t % 32, below = lane ? (uint32_t(1) << lane) - 1 : 0u, v = static_cast<uint32_t>(m.v[t]);
        lt = lt && v == below;
        le = le && v == (below | (uint32_t(1) << lane));
      }
      return lt || le;
    };
    if (!wide && masked && ((lanesBelow(lhs) && sameInEachWarp(rhs)) || (lanesBelow(rhs) && sameInEachWarp(lhs))))
      r.stepBound = 1;
    r.hasHi = true, r.hi = wide ? 64 : 32;
    return r;
  }
  if ((name == "__mul24" || name == "__umul24") && ce->getNumArgs() == 2) {
    auto v = args();
    return arith(clang::BO_Mul, v[0], v[1], ce->getType(), ce->getArg(0), ce->getArg(1));
  }
  if (fd) {
    const clang::FunctionDecl* def = fd->getDefinition();
    if (def && def->hasBody() && !isSystem(def)) {
      std::vector<const clang::Expr*> args(ce->arg_begin(), ce->arg_end());
      return inlineCall(def, ce, args, nullptr);
    }
  }
  auto v = args();
  // A function with no body here that gets a pointer into global or shared memory (a library's
  // wmma::load_matrix_sync, memcpy; a project function defined in another file): it touches memory
  // the model does not follow. Named in the kernel's coverage note, not counted as analysed.
  if (anyActive() && fd) {
    m_.reached_.insert(ce);
    for (const auto& a : v)
      if (a.isPtr && a.space != MemSpace::Local) {
        m_.unmodelled_.emplace(ce, fd->getQualifiedNameAsString());
        break;
      }
  }
  // A project function whose body is in another file (`getLowerDiagonal(seed)` declared in a
  // header, defined in seed.cu) is taken to depend on its arguments only: its result, and what it
  // leaves in the per-thread objects and variables it gets a non-const reference to, are numbered
  // from the arguments' values (an object's from its members), so threads calling it on equal
  // inputs hold equal outputs. Not one without arguments (`laneId()`: the thread is its input) and
  // not one whose name says it reads a clock or random state. The inputs are read before any
  // output is forgotten.
  const bool external = fd && !isSystem(fd) && ce->getNumArgs() > 0 && !namesClockOrRandom(name);
  std::vector<Value> extIn;
  if (external)
    for (unsigned i = 0; i < ce->getNumArgs(); ++i) {
      const clang::Expr* a = strip(ce->getArg(i));
      Value in = v[i];
      if (a->isGLValue() && a->getType()->isRecordType()) {  // an object: its value, as a copy reads it
        LVal lv = evalLValue(a);
        in = lv.kind == LVal::Var ? readVar(lv.var) : lv.kind == LVal::Mem && lv.ptr.space == MemSpace::Local ? readMem(lv) : unknown();
      }
      extIn.push_back(std::move(in));
    }
  forgetOutputs(fd, llvm::ArrayRef<const clang::Expr*>(ce->getArgs(), ce->getNumArgs()), v);
  Value r = unknown();  // a library or undefined function: data only if its inputs are
  for (const auto& a : v) r.data = r.data || a.data, r.block = r.block || a.block;  // another block's inputs: another value
  if (external) {
    std::vector<const Value*> ops;
    bool same = true;
    for (const auto& x : extIn) ops.push_back(&x), same = same && uniformish(x);
    const uint64_t what = mix(0x45585443414c4cull, reinterpret_cast<uintptr_t>(fd->getCanonicalDecl()));  // "EXTCALL"
    number(r, what, ops);
    r.same = same;
    for (unsigned i = 0; i < ce->getNumArgs() && i < fd->getNumParams(); ++i) {
      clang::QualType pt = fd->getParamDecl(i)->getType();
      if (!pt->isReferenceType() || pt.getNonReferenceType().isConstQualified()) continue;
      const clang::Expr* a = strip(ce->getArg(i));
      if (!llvm::isa<clang::DeclRefExpr>(a)) continue;
      LVal lv = evalLValue(a);
      Value out = unknown();
      out.data = r.data, out.block = r.block, out.same = same;
      number(out, mix(what, i + 1), ops);
      if (lv.kind == LVal::Var) writeVar(lv.var, out);
      else if (lv.kind == LVal::Mem && lv.ptr.space == MemSpace::Local && localAddress(lv)) storeLocal(lv, out);
    }
  }
  // A math function of the toolkit (sqrtf, fmaxf, __expf, ...) of the same arguments is the same value.
  if (fd && isSystem(fd) && !v.empty() && !namesClockOrRandom(name)) {
    std::vector<const Value*> ops;
    for (unsigned i = 0; i < v.size(); ++i)  // the inputs (not the pointers it writes through)
      if (!v[i].isPtr && !ce->getArg(i)->getType()->isPointerType()) ops.push_back(&v[i]);
    const uint64_t what = mix(0x43414c4cull, reinterpret_cast<uintptr_t>(fd->getCanonicalDecl()));  // "CALL"
    number(r, what, ops);
    // ... and of inputs the same for every thread (`__clz(n - 1)` of a size), the same for every thread.
    bool sameIn = !ops.empty();
    for (const Value* x : ops) sameIn = sameIn && uniformish(*x);
    if (sameIn) r.same = true;
    // Its outputs through pointers to scalar variables (`__sincosf(x, &s, &c)`): numbered the same way.
    for (unsigned i = 0; i < ce->getNumArgs(); ++i)
      if (auto* uo = llvm::dyn_cast<clang::UnaryOperator>(strip(ce->getArg(i))); uo && uo->getOpcode() == clang::UO_AddrOf)
        if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(strip(uo->getSubExpr())))
          if (auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl()); vd && vd->getType()->isScalarType() && !vd->getType()->isPointerType()) {
            LVal lv = evalLValue(dre);
            if (lv.kind != LVal::Var) continue;
            Value out = unknown();
            out.data = r.data;
            number(out, mix(what, i), ops);
            writeVar(vd, out);
          }
  }
  return r;
}

bool Builder::onlyDereferenced(const clang::FunctionDecl* def, const clang::ParmVarDecl* pd) {
  if (auto it = derefOnly_.find(pd); it != derefOnly_.end()) return it->second;
  struct Uses : clang::RecursiveASTVisitor<Uses> {
    const clang::ParmVarDecl* pd;
    unsigned all = 0, derefs = 0;
    bool VisitDeclRefExpr(clang::DeclRefExpr* d) {
      all += d->getDecl() == pd;
      return true;
    }
    bool VisitUnaryOperator(clang::UnaryOperator* u) {
      if (u->getOpcode() == clang::UO_Deref)
        if (auto* d = llvm::dyn_cast<clang::DeclRefExpr>(u->getSubExpr()->IgnoreParenImpCasts()); d && d->getDecl() == pd)
          ++derefs;
      return true;
    }
  } u;
  u.pd = pd;
  if (def->getBody()) u.TraverseStmt(def->getBody());
  bool only = def->getBody() && u.all > 0 && u.all == u.derefs;
  derefOnly_[pd] = only;
  return only;
}

Value Builder::inlineCall(const clang::FunctionDecl* def, const clang::Expr* call, llvm::ArrayRef<const clang::Expr*> args,
                          const Value* thisPtr) {
  bool recursive = false;
  for (const auto& f : frames_) recursive = recursive || f.fn == def;
  if (depth_ >= kMaxInlineDepth || !def->getBody() || recursive) {
    for (const auto* a : args) eval(a);
    if (def->getBody() && anyActive())
      m_.notInlined_.emplace(def->getCanonicalDecl(), recursive ? "it is called recursively (the model does not follow recursion)"
                                                                  : fmt::format("calls nested more than {} deep are not followed", kMaxInlineDepth));
    return dataOf(unknown());
  }
  Frame fr;
  fr.fn = def;
  fr.call = call;
  fr.uniformThis = nextUniformThis_;
  nextUniformThis_ = nullptr;
  if (call && call == pendingRetCall_) {
    fr.retSlot = pendingRetSlot_;
    fr.hasRetSlot = true;
    pendingRetCall_ = nullptr;
    retSlotTaken_ = true;
  }
  fr.returned.assign(N_, 0);
  fr.ret = unknown();
  if (thisPtr) {
    fr.thisPtr = *thisPtr;
    fr.hasThis = true;
    if (auto* md = llvm::dyn_cast<clang::CXXMethodDecl>(def))
      fr.thisPtr.pointee = ctx_.getTypeSizeInChars(ctx_.getCanonicalTagType(md->getParent())).getQuantity();
  }
  // The arguments, in the caller: a reference parameter is bound to its argument's lvalue (or to a
  // copy of a temporary), a parameter of record type is an object constructed from its argument.
  for (unsigned i = 0; i < args.size(); ++i) {
    if (i >= def->getNumParams()) {
      eval(args[i]);
      continue;
    }
    const clang::ParmVarDecl* pd = def->getParamDecl(i);
    clang::QualType pt = pd->getType();
    const clang::Expr* arg = strip(args[i]);
    // A closure the kernel got by value, handed on (moderngpu's restrict_forward(f, ...)).
    if (const clang::ParmVarDecl* root = uniformClosure(arg)) fr.uniformParams[pd] = root;
    if (pt->isReferenceType()) {
      clang::QualType rt = pt.getNonReferenceType();
      if (arg->isGLValue()) {
        LVal lv = evalLValue(arg);
        if (lv.kind != LVal::None) fr.refs[pd] = lv;
        continue;
      }
      if (rt->isRecordType() && !rt->isIncompleteType() && groupKind(rt) == GroupKind::None) {
        forgetLocal(pd);  // a temporary object the reference is bound to
        Value base = constant(0);
        base.isPtr = true, base.base = pd, base.baseName = pd->getNameAsString(), base.space = MemSpace::Local;
        LVal obj = objectAt(base, rt, arg);
        initObject(obj, arg);
        fr.refs[pd] = obj;
        continue;
      }
      LVal lv;
      lv.kind = LVal::Var;
      lv.var = pd;
      lv.expr = arg;
      fr.refs[pd] = lv;
      fr.vars[pd] = eval(arg);
      continue;
    }
    if (isObjectVar(pd)) {
      forgetLocal(pd);
      Value base = constant(0);
      base.isPtr = true, base.base = pd, base.baseName = pd->getNameAsString(), base.space = MemSpace::Local;
      initObject(objectAt(base, pt, arg), arg);
      fr.vars[pd] = unknown();
      continue;
    }
    // `&x` of a caller's scalar variable for a pointer only dereferenced in the body: `*p` is x
    // (the out-parameters of `decompose(idx, n, &row, &col)`), read and written as x itself.
    if (pt->isPointerType())
      if (auto* uo = llvm::dyn_cast<clang::UnaryOperator>(arg); uo && uo->getOpcode() == clang::UO_AddrOf)
        if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(strip(uo->getSubExpr())))
          if (auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl());
              vd && vd->getType()->isIntegralOrEnumerationType() && !vd->getType()->isReferenceType() &&
              onlyDereferenced(def, pd)) {
            LVal lv = evalLValue(dre);
            if (lv.kind == LVal::Var) {
              fr.pointees[pd] = lv;
              fr.vars[pd] = unknown();
              continue;
            }
          }
    Value v = eval(args[i]);
    if (pt->isPointerType() && v.isPtr) {
      clang::QualType pte = pt->getPointeeType();
      if (!pte->isIncompleteType() && !pte->isVoidType()) v.pointee = ctx_.getTypeSizeInChars(pte).getQuantity();
      v.ptrVolatile = v.ptrVolatile || pte.isVolatileQualified();
    }
    fr.vars[pd] = v;
  }
  Mask entry = active_;
  ++depth_;
  frames_.push_back(std::move(fr));
  // A constructor: its member and base initializers, on the object, before its body.
  if (auto* cd = llvm::dyn_cast<clang::CXXConstructorDecl>(def); cd && frames_.back().hasThis) {
    const auto& layout = ctx_.getASTRecordLayout(cd->getParent());
    for (const auto* init : cd->inits()) {
      if (!anyActive()) break;
      const clang::Expr* ie = init->getInit();
      Value p = frames_.back().thisPtr;
      int64_t off = 0;
      clang::QualType ft;
      if (init->isMemberInitializer()) {
        off = layout.getFieldOffset(init->getMember()->getFieldIndex()) / 8;
        ft = init->getMember()->getType();
      } else if (init->isBaseInitializer() && !init->isBaseVirtual()) {
        auto* b = init->getBaseClass()->getAsCXXRecordDecl();
        if (!b) { eval(ie); continue; }
        off = layout.getBaseClassOffset(b).getQuantity();
        ft = init->getTypeSourceInfo()->getType();
      } else {
        eval(ie);
        continue;
      }
      if (p.known)
        for (auto& x : p.v) x += off;
      LVal f = objectAt(p, ft, ie);
      if (ft->isRecordType()) initObject(f, ie);
      else if (ft->isScalarType()) {
        Value v = eval(ie);
        normalize(v, ft);
        retype(v, ft);
        writeLVal(f, v);
      } else {
        eval(ie);
        if (p.space == MemSpace::Local) forgetLocal(p.base);
      }
    }
  }
  walk(def->getBody());
  dropResiduals(false);  // a return that may have happened ends with the function
  endGotos(frames_.back());
  Frame done = std::move(frames_.back());
  frames_.pop_back();
  --depth_;
  // Threads that returned come back to the caller (those that exited the kernel do not).
  for (unsigned t = 0; t < N_; ++t) active_[t] = entry[t] && alive_[t];
  if (def->getReturnType()->isReferenceType()) {
    lastRetLVal_ = done.hasRetLVal ? done.retLVal : LVal{};
    lastRetCall_ = call;
  }
  return done.hasRet ? done.ret : unknown();
}

}  // namespace gpuopt::model_detail
