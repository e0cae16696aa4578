#include "analyzer/model/launch_eval.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>

#include "analyzer/frontend/program_calls.h"
#include "analyzer/model/ast_util.h"
#include "analyzer/model/launch_detail.h"

namespace gpuopt {

namespace {
const clang::FunctionDecl* canon(const clang::FunctionDecl* f) { return f ? f->getCanonicalDecl() : nullptr; }

// `e` names `v` (through parentheses and implicit casts).
bool refersTo(const clang::Expr* e, const clang::VarDecl* v) {
  auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts());
  return d && d->getDecl() == v;
}

// `v.member` or `v->member` (member empty: `v` itself).
bool isPath(const clang::Expr* e, const clang::VarDecl* v, const std::string& member) {
  e = e->IgnoreParenImpCasts();
  if (member.empty()) return refersTo(e, v);
  auto* me = llvm::dyn_cast<clang::MemberExpr>(e);
  return me && me->getMemberDecl()->getIdentifier() && me->getMemberDecl()->getName() == member &&
         refersTo(me->getBase(), v);
}

// The statements of a function that set `v` (member empty) or `v.member`: assignments (value =
// the right-hand side; nullptr for compound assignment, ++/--) and calls that pass `&v` or `v` by
// non-const reference to a function with a body (value nullptr, `helper` the call, `arg` its index).
struct Set {
  const clang::Stmt* stmt = nullptr;
  const clang::Expr* value = nullptr;
  bool whole = false;  // `v = x` while a member was asked for
  const clang::CallExpr* helper = nullptr;
  unsigned arg = 0;
};
// The last of `sets` before `use` in source order that can reach it (armExcludes), or null.
const Set* lastReachingSetBefore(const std::vector<Set>& sets, const clang::Expr* use, clang::ASTContext& ctx) {
  const auto& sm = ctx.getSourceManager();
  const Set* last = nullptr;
  for (const Set& s : sets)
    if (sm.isBeforeInTranslationUnit(s.stmt->getBeginLoc(), use->getBeginLoc()) &&
        (!last || sm.isBeforeInTranslationUnit(last->stmt->getBeginLoc(), s.stmt->getBeginLoc())) &&
        !armExcludes(s.stmt, use, ctx))
      last = &s;
  return last;
}

std::vector<Set> setsOf(const clang::Stmt* body, const clang::VarDecl* v, const std::string& member) {
  struct Finder : clang::RecursiveASTVisitor<Finder> {
    const clang::VarDecl* v;
    std::string member;
    std::vector<Set> sets;
    bool shouldVisitLambdaBody() const { return true; }
    void assign(const clang::Stmt* s, const clang::Expr* lhs, const clang::Expr* rhs, bool plain) {
      if (isPath(lhs, v, member)) sets.push_back({s, plain ? rhs : nullptr, false, nullptr, 0});
      else if (!member.empty() && refersTo(lhs, v)) sets.push_back({s, plain ? rhs : nullptr, true, nullptr, 0});
    }
    bool VisitBinaryOperator(clang::BinaryOperator* b) {
      if (b->isAssignmentOp()) assign(b, b->getLHS(), b->getRHS(), b->getOpcode() == clang::BO_Assign);
      return true;
    }
    bool VisitUnaryOperator(clang::UnaryOperator* u) {
      if (u->isIncrementDecrementOp()) assign(u, u->getSubExpr(), nullptr, false);
      return true;
    }
    bool VisitCallExpr(clang::CallExpr* c) {
      if (auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(c); oc && oc->isAssignmentOp() && oc->getNumArgs() == 2) {
        assign(c, oc->getArg(0), oc->getArg(1), oc->getOperator() == clang::OO_Equal);
        return true;
      }
      const clang::FunctionDecl* fd = c->getDirectCallee();
      if (!fd || llvm::isa<clang::CXXOperatorCallExpr>(c)) return true;
      for (unsigned i = 0; i < c->getNumArgs() && i < fd->getNumParams(); ++i) {
        const clang::Expr* a = c->getArg(i)->IgnoreParenImpCasts();
        clang::QualType pt = fd->getParamDecl(i)->getType();
        bool byPointer = false;
        if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(a); u && u->getOpcode() == clang::UO_AddrOf) {
          a = u->getSubExpr()->IgnoreParenImpCasts();
          byPointer = pt->isPointerType() && !pt->getPointeeType().isConstQualified();
        }
        bool byRef = pt->isReferenceType() && !pt.getNonReferenceType().isConstQualified();
        if ((byPointer || byRef) && refersTo(a, v)) sets.push_back({c, nullptr, false, c, i});
      }
      return true;
    }
  } f;
  f.v = v;
  f.member = member;
  f.TraverseStmt(const_cast<clang::Stmt*>(body));
  return f.sets;
}

// The record field named `member` and its index among the record's fields, or -1.
int fieldIndex(clang::QualType t, const std::string& member) {
  const clang::RecordDecl* rd = t.getNonReferenceType()->getAsRecordDecl();
  if (!rd) return -1;
  int i = 0;
  for (const clang::FieldDecl* f : rd->fields()) {
    if (f->getName() == member) return i;
    ++i;
  }
  return -1;
}
}  // namespace

void HostValues::noteGlobalSet(const clang::VarDecl* v, const std::string& member, const clang::Expr* value) {
  globalSets_[v->getCanonicalDecl()].push_back({member, value});
}

const std::vector<const clang::CallExpr*>& HostValues::callsOf(const clang::FunctionDecl* fn) const {
  static const std::vector<const clang::CallExpr*> none;
  if (!fn) return none;
  const std::vector<const clang::CallExpr*>* here = &none;
  if (calls_)
    if (auto it = calls_->find(canon(fn)); it != calls_->end()) here = &it->second;
  if (!program_) return *here;
  return programCallsOf(fn, *here);
}

const std::vector<const clang::CallExpr*>& HostValues::programCallsOf(const clang::FunctionDecl* fn,
                                                                     const std::vector<const clang::CallExpr*>& here) const {
  fn = canon(fn);
  if (auto it = withProgram_.find(fn); it != withProgram_.end()) return it->second;
  std::vector<const clang::CallExpr*>& out = withProgram_[fn];
  out = here;
  // Only a function the other files can call by its name: not static, not in an unnamed namespace,
  // not a member (`o.f(...)` is not read from the other files).
  if (!fn->getIdentifier() || llvm::isa<clang::CXXMethodDecl>(fn) || !fn->isExternallyVisible() ||
      fn->isInAnonymousNamespace())
    return out;
  if (fn->hasAttr<clang::CUDAGlobalAttr>() || (fn->hasAttr<clang::CUDADeviceAttr>() && !fn->hasAttr<clang::CUDAHostAttr>()))
    return out;
  const std::string name = fn->getName().str();
  programFacts_[name] = program_->fingerprint(name);
  if (!unitFiles_) {
    unitFiles_.emplace();
    const auto& sm = ctx_.getSourceManager();
    for (auto it = sm.fileinfo_begin(); it != sm.fileinfo_end(); ++it) {
      std::error_code ec;
      std::filesystem::path c = std::filesystem::weakly_canonical(std::string(it->first.getName()), ec);
      if (!ec) unitFiles_->insert(c.string());
    }
  }
  auto& ctx = ctx_;
  auto make = [&](const std::vector<std::optional<int64_t>>* args) {
    auto* f = const_cast<clang::FunctionDecl*>(fn);
    auto* ref = clang::DeclRefExpr::Create(ctx, clang::NestedNameSpecifierLoc(), clang::SourceLocation(), f, false,
                                           clang::SourceLocation(), f->getType(), clang::VK_LValue);
    std::vector<clang::Expr*> as;
    const unsigned n = args ? static_cast<unsigned>(args->size()) : f->getNumParams();
    for (unsigned i = 0; i < n; ++i) {
      clang::QualType t = i < f->getNumParams() ? f->getParamDecl(i)->getType().getNonReferenceType() : ctx.IntTy;
      if (args && (*args)[i] && t->isIntegerType() && !t->isEnumeralType() && !t->isBooleanType())
        as.push_back(clang::IntegerLiteral::Create(ctx, llvm::APInt(ctx.getIntWidth(t), static_cast<uint64_t>(*(*args)[i]), true), t,
                                                   clang::SourceLocation()));
      else
        as.push_back(new (ctx) clang::OpaqueValueExpr(clang::SourceLocation(), t, clang::VK_PRValue));
    }
    auto* call = clang::CallExpr::Create(ctx, ref, as, f->getReturnType().getNonReferenceType(), clang::VK_PRValue,
                                         clang::SourceLocation(), clang::FPOptionsOverride());
    externalCalls_.insert(call);
    out.push_back(call);
  };
  for (const ProgramCallSite& s : program_->callsOf(name)) {
    if (unitFiles_->count(s.file)) continue;  // this parse's own calls are in `here`
    const size_t n = s.args.size();
    if (n < fn->getMinRequiredArguments() || (n > fn->getNumParams() && !fn->isVariadic())) continue;  // another overload
    make(&s.args);
  }
  for (const std::string& f : program_->otherUsesOf(name))
    if (!unitFiles_->count(f)) make(nullptr);
  return out;
}

const clang::FunctionDecl* HostValues::enclosingFunction(const clang::Stmt* s) const {
  clang::DynTypedNodeList ps = ctx_.getParents(*s);
  for (int hops = 0; hops < 256 && !ps.empty(); ++hops) {
    const clang::DynTypedNode& n = ps[0];
    // A lambda's body: the function around the lambda (its captures are that function's values).
    if (auto* fd = n.get<clang::FunctionDecl>()) {
      if (auto* md = llvm::dyn_cast<clang::CXXMethodDecl>(fd); md && md->getParent()->isLambda()) {
        ps = ctx_.getParents(*md->getParent());
        continue;
      }
      return fd;
    }
    ps = ctx_.getParents(n);
  }
  return nullptr;
}

std::optional<HostValues::Bound> HostValues::parameterValue(const clang::ParmVarDecl* p, const Env& env) {
  auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(p->getDeclContext());
  if (!fn) return std::nullopt;
  for (size_t k = 0; k < env.size(); ++k) {
    if (canon(env[k].fn) != canon(fn)) continue;
    const clang::CallExpr* call = env[k].call;
    if (!call) {
      if (k + 1 == env.size()) need(fn);
      return std::nullopt;
    }
    unsigned idx = p->getFunctionScopeIndex();
    // `obj(args)`: the object is argument 0 of the operator call.
    if (llvm::isa<clang::CXXOperatorCallExpr>(call) && llvm::isa<clang::CXXMethodDecl>(fn) &&
        !llvm::cast<clang::CXXMethodDecl>(fn)->isStatic())
      ++idx;
    if (idx >= call->getNumArgs()) return p->hasDefaultArg() ? std::optional<Bound>(Bound{p->getDefaultArg(), Env(env.begin() + k, env.end())}) : std::nullopt;
    const clang::Expr* a = call->getArg(idx);
    if (auto* da = llvm::dyn_cast<clang::CXXDefaultArgExpr>(a)) return Bound{da->getExpr(), Env(env.begin() + k, env.end())};
    return Bound{a, Env(env.begin() + k + 1, env.end())};
  }
  std::vector<Bound> args = lambdaArguments(p, env);
  if (args.size() == 1) return args.front();
  return std::nullopt;
}

std::vector<HostValues::Bound> HostValues::lambdaArguments(const clang::ParmVarDecl* p, const Env& env) {
  std::vector<Bound> out;
  auto* md = llvm::dyn_cast_or_null<clang::CXXMethodDecl>(p->getDeclContext());
  if (!md || !md->getParent()->isLambda()) return out;
  for (const clang::CallExpr* c : callsOf(md)) {
    unsigned i = p->getFunctionScopeIndex() + (llvm::isa<clang::CXXOperatorCallExpr>(c) ? 1 : 0);
    if (i >= c->getNumArgs()) continue;
    const clang::FunctionDecl* at = enclosingFunction(c);
    if (!env.empty() && canon(at) == canon(env.front().fn)) out.push_back({c->getArg(i), env});
    else out.push_back({c->getArg(i), Env{{at, nullptr}}});
  }
  return out;
}

// The value a local variable holds where `use` reads it: its initialiser when no assignment can
// reach `use`, the right-hand side of the last assignment before `use` when that assignment is a
// statement of a block enclosing `use` (so it always runs first), else nothing (an assignment in a
// branch or in a loop around `use`).
std::optional<HostValues::Bound> HostValues::variableValue(const clang::VarDecl* v, const clang::Expr* use, const Env& env) {
  // A parameter the function assigns (`M <<= 2` in a loop before the launch) holds the caller's
  // argument only until then: not followed.
  if (auto* p = llvm::dyn_cast<clang::ParmVarDecl>(v)) return launch_detail::reassigned(p) ? std::nullopt : parameterValue(p, env);
  if (!v->hasLocalStorage()) return std::nullopt;
  auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(v->getDeclContext());
  if (!fn || !fn->getBody()) return std::nullopt;
  std::vector<Set> sets = setsOf(fn->getBody(), v, "");
  if (sets.empty()) return v->getInit() ? std::optional<Bound>(Bound{v->getInit(), env}) : std::nullopt;
  const auto& sm = ctx_.getSourceManager();
  std::vector<const clang::Stmt*> around;
  for (clang::DynTypedNodeList ps = ctx_.getParents(*use); !ps.empty();) {
    const clang::Stmt* p = ps[0].get<clang::Stmt>();
    if (!p) break;
    around.push_back(p);
    ps = ctx_.getParents(*p);
  }
  auto encloses = [&](const clang::Stmt* outer, const clang::Stmt* inner) {
    return sm.isPointWithin(inner->getBeginLoc(), outer->getBeginLoc(), outer->getEndLoc());
  };
  for (const clang::Stmt* a : around)
    if (llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt, clang::CXXForRangeStmt>(a))
      for (const Set& s : sets)
        if (encloses(a, s.stmt)) return std::nullopt;
  const Set* last = nullptr;
  for (const Set& s : sets)
    if (sm.isBeforeInTranslationUnit(s.stmt->getBeginLoc(), use->getBeginLoc()) &&
        (!last || sm.isBeforeInTranslationUnit(last->stmt->getBeginLoc(), s.stmt->getBeginLoc())))
      last = &s;
  if (!last) return v->getInit() ? std::optional<Bound>(Bound{v->getInit(), env}) : std::nullopt;
  if (!last->value || last->helper) return std::nullopt;
  const clang::Stmt* parent = last->stmt;
  do {
    auto ps = ctx_.getParents(*parent);
    parent = ps.empty() ? nullptr : ps[0].get<clang::Stmt>();
  } while (parent && llvm::isa<clang::ExprWithCleanups>(parent));
  if (!parent || !llvm::isa<clang::CompoundStmt>(parent)) return std::nullopt;
  if (std::find(around.begin(), around.end(), parent) == around.end()) return std::nullopt;
  return Bound{last->value, env};
}

std::optional<int64_t> HostValues::guardedValue(const clang::VarDecl* v, const clang::Expr* use) {
  // `v == C` among the conjuncts of a condition.
  std::function<std::optional<int64_t>(const clang::Expr*)> equal = [&](const clang::Expr* c) -> std::optional<int64_t> {
    c = c->IgnoreParenImpCasts();
    auto* b = llvm::dyn_cast<clang::BinaryOperator>(c);
    if (!b) return std::nullopt;
    if (b->getOpcode() == clang::BO_LAnd) {
      if (auto x = equal(b->getLHS())) return x;
      return equal(b->getRHS());
    }
    if (b->getOpcode() != clang::BO_EQ) return std::nullopt;
    const clang::Expr *l = b->getLHS()->IgnoreParenImpCasts(), *r = b->getRHS()->IgnoreParenImpCasts();
    auto isV = [&](const clang::Expr* x) {
      auto* d = llvm::dyn_cast<clang::DeclRefExpr>(x);
      return d && d->getDecl()->getCanonicalDecl() == v->getCanonicalDecl();
    };
    clang::Expr::EvalResult res;
    if (isV(l) && !r->isValueDependent() && r->EvaluateAsInt(res, ctx_)) return res.Val.getInt().getExtValue();
    if (isV(r) && !l->isValueDependent() && l->EvaluateAsInt(res, ctx_)) return res.Val.getInt().getExtValue();
    return std::nullopt;
  };
  const clang::Stmt* child = use;
  for (clang::DynTypedNodeList ps = ctx_.getParents(*use); !ps.empty();) {
    const clang::Stmt* p = ps[0].get<clang::Stmt>();
    if (!p) break;
    std::optional<int64_t> c;
    const clang::Stmt* scope = nullptr;
    if (auto* is = llvm::dyn_cast<clang::IfStmt>(p); is && is->getThen() == child && is->getCond())
      c = equal(is->getCond()), scope = is->getThen();
    if (auto* cs = llvm::dyn_cast<clang::CaseStmt>(p); cs && cs->getSubStmt() == child && !cs->getRHS()) {
      // The switch this case belongs to, on v itself.
      for (auto sp = ctx_.getParents(*cs); !sp.empty();) {
        const clang::Stmt* up = sp[0].get<clang::Stmt>();
        if (!up) break;
        if (auto* sw = llvm::dyn_cast<clang::SwitchStmt>(up)) {
          auto* d = llvm::dyn_cast<clang::DeclRefExpr>(sw->getCond()->IgnoreParenImpCasts());
          clang::Expr::EvalResult res;
          if (d && d->getDecl()->getCanonicalDecl() == v->getCanonicalDecl() && !cs->getLHS()->isValueDependent() &&
              cs->getLHS()->EvaluateAsInt(res, ctx_))
            c = res.Val.getInt().getExtValue(), scope = cs->getSubStmt();
          break;
        }
        sp = ctx_.getParents(*up);
      }
    }
    if (c && scope && setsOf(scope, v, "").empty()) return c;
    if (llvm::isa<clang::LambdaExpr>(p)) break;
    child = p;
    ps = ctx_.getParents(*p);
  }
  return std::nullopt;
}

// What a call returns: its single return's value (a function returning a configuration struct or a
// block shape), evaluated with the callee's parameters bound to the call's arguments.
std::optional<HostValues::Bound> HostValues::returnedValue(const clang::CallExpr* call, const Env& env) {
  const clang::FunctionDecl* fd = call->getDirectCallee();
  const clang::FunctionDecl* def = nullptr;
  if (!fd || !fd->hasBody(def) || !def) return std::nullopt;
  auto& sm = ctx_.getSourceManager();
  if (sm.isInSystemHeader(sm.getExpansionLoc(def->getLocation()))) return std::nullopt;
  struct Returns : clang::RecursiveASTVisitor<Returns> {
    std::vector<const clang::ReturnStmt*> found;
    bool TraverseLambdaExpr(clang::LambdaExpr*) { return true; }
    bool VisitReturnStmt(clang::ReturnStmt* r) {
      found.push_back(r);
      return true;
    }
  } r;
  r.TraverseStmt(def->getBody());
  if (r.found.size() != 1 || !r.found[0]->getRetValue()) return std::nullopt;
  Env inner;
  inner.push_back({def, call});
  inner.insert(inner.end(), env.begin(), env.end());
  return Bound{r.found[0]->getRetValue(), inner};
}

std::optional<HostValues::Bound> HostValues::memberValue(const clang::Expr* base, const std::string& member,
                                                        const clang::Expr* use, const Env& env, int depth) {
  if (depth > kMaxDepth) return std::nullopt;
  base = strip(base)->IgnoreParenImpCasts();
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(base); u && (u->getOpcode() == clang::UO_Deref || u->getOpcode() == clang::UO_AddrOf))
    return memberValue(u->getSubExpr(), member, use, env, depth + 1);
  if (auto* ile = llvm::dyn_cast<clang::InitListExpr>(base)) {
    int i = fieldIndex(ile->getType(), member);
    if (i >= 0 && static_cast<unsigned>(i) < ile->getNumInits()) return Bound{ile->getInit(i), env};
    return std::nullopt;
  }
  if (auto* ce = llvm::dyn_cast<clang::CXXConstructExpr>(base)) {
    if (ce->getNumArgs() == 1 && ce->getConstructor()->isCopyOrMoveConstructor())
      return memberValue(ce->getArg(0), member, use, env, depth + 1);
    return std::nullopt;
  }
  if (auto* call = llvm::dyn_cast<clang::CallExpr>(base)) {
    auto r = returnedValue(call, env);
    if (!r) return std::nullopt;
    const clang::Expr* rv = strip(r->e);
    return memberValue(rv, member, rv, r->env, depth + 1);
  }
  auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(base);
  auto* v = dre ? llvm::dyn_cast<clang::VarDecl>(dre->getDecl()) : nullptr;
  if (!v) return std::nullopt;
  if (auto* p = llvm::dyn_cast<clang::ParmVarDecl>(v)) {
    // Set through the parameter in this function before `use` (`c->block = ...` in a helper that
    // fills the struct it gets): the last such set; else what the caller passed (`cfg`, `&cfg`),
    // read where the call is.
    if (auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(p->getDeclContext()); fn && fn->getBody()) {
      const std::vector<Set> sets = setsOf(fn->getBody(), v, member);
      const Set* last = lastReachingSetBefore(sets, use, ctx_);
      if (last) return last->value && !last->whole && !last->helper ? std::optional<Bound>(Bound{last->value, env}) : std::nullopt;
    }
    auto b = parameterValue(p, env);
    if (!b) return std::nullopt;
    return memberValue(b->e, member, b->e, b->env, depth + 1);
  }
  if (!v->hasLocalStorage()) {
    auto it = globalSets_.find(v->getCanonicalDecl());
    const clang::Expr* one = nullptr;
    if (it != globalSets_.end())
      for (const auto& [m, value] : it->second) {
        if (m != member && !m.empty()) continue;
        if (m.empty()) return std::nullopt;  // assigned whole somewhere: not followed
        if (one) return std::nullopt;        // several assignments: not one value
        one = value;
      }
    if (one) return Bound{one, {}};
    if (v->getInit()) return memberValue(v->getInit(), member, v->getInit(), {}, depth + 1);
    return std::nullopt;
  }
  auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(v->getDeclContext());
  if (!fn || !fn->getBody()) return std::nullopt;
  const auto& sm = ctx_.getSourceManager();
  const std::vector<Set> sets = setsOf(fn->getBody(), v, member);
  const Set* last = lastReachingSetBefore(sets, use, ctx_);
  // (A set in a branch or loop is taken as the value: configuration code sets each member once;
  // not one in the other arm of an if the use is under, or of one with the same condition.)
  if (!last) return v->getInit() ? memberValue(v->getInit(), member, use, env, depth + 1) : std::nullopt;
  if (last->helper) {
    // `fill(&cfg, ...)`: the last set of the member through the helper's parameter.
    const clang::FunctionDecl* fd = last->helper->getDirectCallee();
    const clang::FunctionDecl* def = nullptr;
    if (!fd || !fd->hasBody(def) || !def || last->arg >= def->getNumParams()) return std::nullopt;
    const clang::ParmVarDecl* p = def->getParamDecl(last->arg);
    const Set* inner = nullptr;
    const std::vector<Set> innerSets = setsOf(def->getBody(), p, member);
    for (const Set& s : innerSets)
      if (!inner || sm.isBeforeInTranslationUnit(inner->stmt->getBeginLoc(), s.stmt->getBeginLoc())) inner = &s;
    if (!inner || !inner->value || inner->whole) return std::nullopt;
    Env e2;
    e2.push_back({def, last->helper});
    e2.insert(e2.end(), env.begin(), env.end());
    return Bound{inner->value, e2};
  }
  if (!last->value) return std::nullopt;
  if (last->whole) return memberValue(last->value, member, last->value, env, depth + 1);
  return Bound{last->value, env};
}

bool HostValues::viewStrideAt(const clang::Expr* e, const Env& env, int depth) {
  if (!e || depth > kMaxDepth) return false;
  e = e->IgnoreParenImpCasts();
  if (auto* c = llvm::dyn_cast<clang::ExplicitCastExpr>(e)) return viewStrideAt(c->getSubExpr(), env, depth + 1);
  auto named = [](const clang::CallExpr* c, llvm::StringRef name) {
    const clang::FunctionDecl* f = c ? c->getDirectCallee() : nullptr;
    return f && f->getIdentifier() && f->getName() == name;
  };
  // `t.stride(0)`: a member call named stride with one argument, on an object of class type.
  if (auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(e))
    return mc->getNumArgs() == 1 && named(mc, "stride");
  // `t.strides()[k]`, `t.stride()[k]`: an element of what a strides accessor returns.
  const clang::Expr* array = nullptr;
  if (auto* op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e); op && op->getOperator() == clang::OO_Subscript && op->getNumArgs() == 2)
    array = op->getArg(0);
  else if (auto* as = llvm::dyn_cast<clang::ArraySubscriptExpr>(e))
    array = as->getBase();
  if (array) {
    auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(array->IgnoreParenImpCasts());
    return mc && mc->getNumArgs() == 0 && (named(mc, "strides") || named(mc, "stride"));
  }
  if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    auto* v = llvm::dyn_cast<clang::VarDecl>(dre->getDecl());
    if (!v || !v->hasLocalStorage()) return false;
    auto b = variableValue(v, dre, env);
    return b && viewStrideAt(b->e, b->env, depth + 1);
  }
  return false;
}

std::optional<int64_t> HostValues::integer(const clang::Expr* e, const Env& env) { return integerAt(e, env, 0); }

std::optional<int64_t> HostValues::integerAt(const clang::Expr* e, const Env& env, int depth) {
  if (!e || depth > kMaxDepth) return std::nullopt;
  e = strip(e);
  if (e->isValueDependent() || e->isTypeDependent()) return std::nullopt;
  clang::Expr::EvalResult r;
  if (e->getType()->isIntegralOrEnumerationType() && e->EvaluateAsInt(r, ctx_)) return r.Val.getInt().getExtValue();
  e = e->IgnoreParenImpCasts();
  // Through a conversion to or from floating point (`float length = 512;` passed as an `int`): the
  // integer, when the value is a whole number.
  if (e->getType()->isIntegralOrEnumerationType() && e->EvaluateAsInt(r, ctx_)) return r.Val.getInt().getExtValue();
  if (e->getType()->isRealFloatingType() && !e->isValueDependent()) {
    llvm::APFloat f(0.0);
    if (e->EvaluateAsFloat(f, ctx_) && f.isInteger() && f.isFinite()) {
      llvm::APSInt i(64, /*isUnsigned=*/false);
      bool exact = false;
      if (f.convertToInteger(i, llvm::APFloat::rmTowardZero, &exact) == llvm::APFloat::opOK) return i.getExtValue();
    }
  }
  if (auto* c = llvm::dyn_cast<clang::ExplicitCastExpr>(e)) return integerAt(c->getSubExpr(), env, depth + 1);
  if (auto* da = llvm::dyn_cast<clang::CXXDefaultArgExpr>(e)) return integerAt(da->getExpr(), env, depth + 1);
  if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    auto* v = llvm::dyn_cast<clang::VarDecl>(dre->getDecl());
    if (!v) return std::nullopt;
    if (!v->hasLocalStorage() && !llvm::isa<clang::ParmVarDecl>(v)) {
      // A variable at namespace scope: its one value over every assignment in the project.
      auto it = globalSets_.find(v->getCanonicalDecl());
      std::optional<int64_t> one;
      if (it != globalSets_.end())
        for (const auto& [m, value] : it->second) {
          if (!m.empty()) continue;
          auto x = value ? integerAt(value, {}, depth + 1) : std::nullopt;
          if (!x || (one && *one != *x)) return std::nullopt;
          one = x;
        }
      if (one) return one;
      if (v->getInit() && (it == globalSets_.end() || v->getType().isConstQualified())) return integerAt(v->getInit(), {}, depth + 1);
      return std::nullopt;
    }
    if (auto g = guardedValue(v, dre)) return g;
    auto b = variableValue(v, dre, env);
    return b ? integerAt(b->e, b->env, depth + 1) : std::nullopt;
  }
  if (auto* me = llvm::dyn_cast<clang::MemberExpr>(e)) {
    std::string m = me->getMemberDecl()->getNameAsString();
    std::string rec = recordName(me->getBase()->getType());
    if ((m == "x" || m == "y" || m == "z") && (rec == "dim3" || rec == "uint3" || rec == "int3")) {
      unsigned d[3];
      if (!shapeAt(me->getBase(), env, d, false, depth + 1)) return std::nullopt;
      return d[m == "x" ? 0 : m == "y" ? 1 : 2];
    }
    auto b = memberValue(me->getBase(), m, me, env, depth + 1);
    return b ? integerAt(b->e, b->env, depth + 1) : std::nullopt;
  }
  if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e)) {
    using BO = clang::BinaryOperatorKind;
    auto l = integerAt(b->getLHS(), env, depth + 1);
    if (b->getOpcode() == BO::BO_LAnd && l && !*l) return 0;
    if (b->getOpcode() == BO::BO_LOr && l && *l) return 1;
    auto rr = integerAt(b->getRHS(), env, depth + 1);
    if (b->getOpcode() == BO::BO_LAnd && rr && !*rr) return 0;
    if (b->getOpcode() == BO::BO_LOr && rr && *rr) return 1;
    if (!l || !rr) return std::nullopt;
    int64_t x = *l, y = *rr;
    switch (b->getOpcode()) {
      case BO::BO_Add: return x + y;
      case BO::BO_Sub: return x - y;
      case BO::BO_Mul: return x * y;
      case BO::BO_Div: return y ? std::optional<int64_t>(x / y) : std::nullopt;
      case BO::BO_Rem: return y ? std::optional<int64_t>(x % y) : std::nullopt;
      case BO::BO_Shl: return y >= 0 && y < 63 ? std::optional<int64_t>(x << y) : std::nullopt;
      case BO::BO_Shr: return y >= 0 && y < 63 ? std::optional<int64_t>(x >> y) : std::nullopt;
      case BO::BO_And: return x & y;
      case BO::BO_Or: return x | y;
      case BO::BO_Xor: return x ^ y;
      case BO::BO_LT: return x < y;
      case BO::BO_GT: return x > y;
      case BO::BO_LE: return x <= y;
      case BO::BO_GE: return x >= y;
      case BO::BO_EQ: return x == y;
      case BO::BO_NE: return x != y;
      case BO::BO_LAnd: return x && y;
      case BO::BO_LOr: return x || y;
      default: return std::nullopt;
    }
  }
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e)) {
    auto x = integerAt(u->getSubExpr(), env, depth + 1);
    if (!x) return std::nullopt;
    switch (u->getOpcode()) {
      case clang::UO_Minus: return -*x;
      case clang::UO_Plus: return *x;
      case clang::UO_Not: return ~*x;
      case clang::UO_LNot: return !*x;
      default: return std::nullopt;
    }
  }
  if (auto* co = llvm::dyn_cast<clang::ConditionalOperator>(e)) {
    auto c = integerAt(co->getCond(), env, depth + 1);
    if (c) return integerAt(*c ? co->getTrueExpr() : co->getFalseExpr(), env, depth + 1);
    auto t = integerAt(co->getTrueExpr(), env, depth + 1), f = integerAt(co->getFalseExpr(), env, depth + 1);
    return t && f && *t == *f ? t : std::nullopt;
  }
  if (auto* call = llvm::dyn_cast<clang::CallExpr>(e)) {
    const clang::FunctionDecl* fd = call->getDirectCallee();
    if (fd && fd->getIdentifier() && (fd->getName() == "min" || fd->getName() == "max") && call->getNumArgs() == 2) {
      auto x = integerAt(call->getArg(0), env, depth + 1), y = integerAt(call->getArg(1), env, depth + 1);
      if (!x || !y) return std::nullopt;
      return fd->getName() == "min" ? std::min(*x, *y) : std::max(*x, *y);
    }
    if (auto b = returnedValue(call, env)) return integerAt(b->e, b->env, depth + 1);
  }
  return std::nullopt;
}

bool HostValues::shape(const clang::Expr* e, const Env& env, unsigned dims[3], bool partial, const clang::Expr** origin) {
  origin_ = origin;
  bool ok = shapeAt(e, env, dims, partial, 0);
  origin_ = nullptr;
  return ok;
}

bool HostValues::memberShape(const clang::Expr* base, const std::string& member, const clang::Expr* use, const Env& env,
                             unsigned dims[3], bool partial) {
  dims[0] = 0, dims[1] = 1, dims[2] = 1;
  auto b = memberValue(base, member, use, env, 0);
  return b && shapeAt(b->e, b->env, dims, partial, 1);
}

bool HostValues::shapeAt(const clang::Expr* e, const Env& env, unsigned dims[3], bool partial, int depth) {
  dims[0] = 0, dims[1] = 1, dims[2] = 1;
  if (!e || depth > kMaxDepth) return false;
  auto axis = [&](const clang::Expr* x, unsigned& out) {
    auto v = integerAt(x, env, depth + 1);
    if (v && *v >= 0 && *v <= (int64_t(1) << 31)) {
      out = static_cast<unsigned>(*v);
      return true;
    }
    if (partial) out = 0;
    return partial;
  };
  for (int hop = 0; hop < 8; ++hop) {
    e = strip(e);
    if (e->isInstantiationDependent() || e->getType().isNull()) return false;
    if (auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(e)) {
      if (c->getNumArgs() == 1 && !llvm::isa<clang::CXXDefaultArgExpr>(c->getArg(0))) {
        const clang::Expr* a = strip(c->getArg(0));
        if (a->getType()->isIntegralOrEnumerationType()) return axis(a, dims[0]);
        e = a;
        continue;
      }
      unsigned n = 0;
      for (const auto* a : c->arguments()) {
        if (n >= 3) break;
        if (llvm::isa<clang::CXXDefaultArgExpr>(a)) { ++n; continue; }
        if (!axis(a, dims[n])) return false;
        ++n;
      }
      return n > 0 && (partial || dims[0] > 0);
    }
    if (auto* ile = llvm::dyn_cast<clang::InitListExpr>(e); ile && ile->getNumInits() <= 3 && ile->getNumInits() > 0) {
      for (unsigned k = 0; k < ile->getNumInits(); ++k)
        if (!axis(ile->getInit(k), dims[k])) return false;
      return partial || dims[0] > 0;
    }
    if (auto* call = llvm::dyn_cast<clang::CallExpr>(e); call && call->getDirectCallee()) {
      std::string name = call->getDirectCallee()->getNameAsString();
      if (name == "make_uint3" || name == "make_int3" || name == "make_dim3") {
        for (unsigned k = 0; k < call->getNumArgs() && k < 3; ++k)
          if (!axis(call->getArg(k), dims[k])) return false;
        return partial || dims[0] > 0;
      }
      if (e->getType()->isIntegralOrEnumerationType()) return axis(e, dims[0]);
      auto b = returnedValue(call, env);
      if (!b) return false;
      return shapeAt(b->e, b->env, dims, partial, depth + 1);
    }
    if (auto* ce = llvm::dyn_cast<clang::CastExpr>(e); ce && !e->getType()->isIntegralOrEnumerationType()) {
      e = ce->getSubExpr();
      continue;
    }
    if (auto* me = llvm::dyn_cast<clang::MemberExpr>(e); me && !e->getType()->isIntegralOrEnumerationType()) {
      auto b = memberValue(me->getBase(), me->getMemberDecl()->getNameAsString(), me, env, depth + 1);
      return b && shapeAt(b->e, b->env, dims, partial, depth + 1);
    }
    if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e); dre && !e->getType()->isIntegralOrEnumerationType()) {
      auto* v = llvm::dyn_cast<clang::VarDecl>(dre->getDecl());
      if (!v) return false;
      if (!v->hasLocalStorage() && !llvm::isa<clang::ParmVarDecl>(v)) {
        // At namespace scope: one value over every assignment in the project, members set one by
        // one applied over it.
        auto it = globalSets_.find(v->getCanonicalDecl());
        const clang::Expr* whole = nullptr;
        bool any = false;
        if (it != globalSets_.end())
          for (const auto& [m, value] : it->second)
            if (m.empty()) {
              unsigned d2[3];
              if (!value || !shapeAt(value, {}, d2, false, depth + 1)) return false;
              if (whole) {
                unsigned d1[3];
                shapeAt(whole, {}, d1, false, depth + 1);
                if (!std::equal(d1, d1 + 3, d2)) return false;
              }
              whole = value, any = true;
            }
        if (!whole) whole = v->getInit();
        if (!whole || !shapeAt(whole, {}, dims, partial, depth + 1)) {
          if (!any && !(it != globalSets_.end())) return false;
          dims[0] = 1, dims[1] = 1, dims[2] = 1;
        }
        if (it != globalSets_.end())
          for (const auto& [m, value] : it->second) {
            int ax = m == "x" ? 0 : m == "y" ? 1 : m == "z" ? 2 : -1;
            if (ax < 0) continue;
            auto x = value ? integerAt(value, {}, depth + 1) : std::nullopt;
            if (!x) {
              if (!partial) return false;
              dims[ax] = 0;
            } else {
              dims[ax] = static_cast<unsigned>(*x);
            }
          }
        return partial || dims[0] > 0;
      }
      if (auto* p = llvm::dyn_cast<clang::ParmVarDecl>(v)) {
        auto b = parameterValue(p, env);
        if (b && origin_) *origin_ = b->e;
        return b && shapeAt(b->e, b->env, dims, partial, depth + 1);
      }
      auto b = variableValue(v, dre, env);
      // `dim3 block; block.x = 16; block.y = nw;`: the members set one by one in its function.
      auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(v->getDeclContext());
      std::vector<std::pair<int, const clang::Expr*>> members;
      if (fn && fn->getBody())
        for (const char* m : {"x", "y", "z"})
          for (const Set& s : setsOf(fn->getBody(), v, m))
            if (!s.whole && ctx_.getSourceManager().isBeforeInTranslationUnit(s.stmt->getBeginLoc(), dre->getBeginLoc()) &&
                !armExcludes(s.stmt, dre, ctx_))
              members.push_back({m[0] - 'x', s.value});
      if (!members.empty()) {
        if (!b || !shapeAt(b->e, b->env, dims, partial, depth + 1)) dims[0] = 1, dims[1] = 1, dims[2] = 1;
        for (const auto& [ax, rhs] : members)
          if (!rhs || !axis(rhs, dims[ax])) return false;
        return partial || dims[0] > 0;
      }
      return b && shapeAt(b->e, b->env, dims, partial, depth + 1);
    }
    if (e->getType()->isIntegralOrEnumerationType()) return axis(e, dims[0]);
    return false;
  }
  return false;
}

}  // namespace gpuopt
