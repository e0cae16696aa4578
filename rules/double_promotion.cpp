// double-promotion: `v * 1.1` on a float v converts v to double, multiplies in double (DMUL) and
// converts back (F2F twice). A purely syntactic fact about types, found with the AST.
#include "rules/double_promotion.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/ExprObjC.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Lex/Lexer.h>
#include <fmt/format.h>
#include <llvm/ADT/APFloat.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "analyzer/rule/rule_context.h"

namespace gpuopt {

namespace {
bool isFloat(clang::QualType t) { return t->isSpecificBuiltinType(clang::BuiltinType::Float); }
bool isDouble(clang::QualType t) { return t->isSpecificBuiltinType(clang::BuiltinType::Double); }

// A float value widened to double: `(double)v` as the implicit conversion the usual arithmetic
// conversions insert.
bool isWidenedFloat(const clang::Expr* e) {
  auto* ice = llvm::dyn_cast<clang::ImplicitCastExpr>(e->IgnoreParens());
  return ice && ice->getCastKind() == clang::CK_FloatingCast && isFloat(ice->getSubExpr()->getType());
}

// A double literal, possibly negated: `1.1`, `-0.5`.
const clang::FloatingLiteral* doubleLiteral(const clang::Expr* e) {
  e = e->IgnoreParens();
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u && (u->getOpcode() == clang::UO_Minus || u->getOpcode() == clang::UO_Plus))
    e = u->getSubExpr()->IgnoreParens();
  auto* fl = llvm::dyn_cast<clang::FloatingLiteral>(e);
  return fl && isDouble(fl->getType()) ? fl : nullptr;
}

bool exactInFloat(const clang::FloatingLiteral* fl) {
  llvm::APFloat v = fl->getValue();
  bool lost = false;
  v.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return !lost;
}

bool isArith(clang::BinaryOperatorKind op) {
  using BO = clang::BinaryOperatorKind;
  return op == BO::BO_Mul || op == BO::BO_Div || op == BO::BO_Add || op == BO::BO_Sub;
}

struct Visitor : clang::RecursiveASTVisitor<Visitor> {
  clang::ASTContext& ctx;
  RuleContext& rc;
  const RuleInfo& info;
  std::set<unsigned> seen;  // literal locations (template instantiations repeat them)
  const clang::FunctionDecl* fn = nullptr;
  Visitor(clang::ASTContext& c, RuleContext& r, const RuleInfo& i) : ctx(c), rc(r), info(i) {}
  bool shouldVisitTemplateInstantiations() const { return true; }

  bool TraverseFunctionDecl(clang::FunctionDecl* f) {
    bool device = f->hasAttr<clang::CUDAGlobalAttr>() || f->hasAttr<clang::CUDADeviceAttr>();
    if (!device || !f->hasBody() || f->isInvalidDecl()) return true;
    fn = f;
    TraverseStmt(f->getBody());
    fn = nullptr;
    return true;
  }
  bool TraverseCXXMethodDecl(clang::CXXMethodDecl* f) { return TraverseFunctionDecl(f); }
  bool TraverseLambdaExpr(clang::LambdaExpr*) { return true; }

  const clang::Expr* parentExpr(const clang::Expr* e) {
    auto parents = ctx.getParents(*e);
    return parents.size() == 1 ? parents[0].get<clang::Expr>() : nullptr;
  }

  // Where the double result of `e` goes: up through double arithmetic and parentheses. True when
  // it is converted back to float (the double was not wanted), with `depth` the operators crossed.
  bool backToFloat(const clang::Expr* e, unsigned& depth) {
    depth = 0;
    viaCall.clear();
    while (const clang::Expr* p = parentExpr(e)) {
      if (llvm::isa<clang::ParenExpr>(p)) { e = p; continue; }
      if (auto* ice = llvm::dyn_cast<clang::ImplicitCastExpr>(p))
        return ice->getCastKind() == clang::CK_FloatingCast && isFloat(ice->getType());
      if (auto* bo = llvm::dyn_cast<clang::BinaryOperator>(p); bo && isArith(bo->getOpcode()) && isDouble(bo->getType())) {
        ++depth;
        e = p;
        continue;
      }
      if (auto* cao = llvm::dyn_cast<clang::CompoundAssignOperator>(p))
        return isFloat(cao->getLHS()->getType()) && cao->getRHS()->IgnoreParens() == e->IgnoreParens();
      // A double math function of the library (`exp(2.0 * x)` narrowed into a float): the
      // function runs in double too, and its result is narrowed as well (kaldi's _tanh).
      if (auto* call = llvm::dyn_cast<clang::CallExpr>(p); call && isDouble(call->getType()))
        if (const clang::FunctionDecl* f = call->getDirectCallee(); f && isDoubleMath(f)) {
          ++depth;
          viaCall = f->getNameAsString();
          e = p;
          continue;
        }
      return false;
    }
    return false;
  }
  // The last double math function a promotion's result went through (backToFloat), or empty.
  std::string viaCall;
  static bool isDoubleMath(const clang::FunctionDecl* f) {
    static const std::set<std::string> names = {"exp",  "exp2", "exp10", "expm1", "log",  "log2", "log10", "log1p",
                                                "pow",  "sqrt", "cbrt",  "rsqrt", "sin",  "cos",  "tan",   "sinh",
                                                "cosh", "tanh", "asin",  "acos",  "atan", "atan2", "erf",  "erfc",
                                                "hypot", "fmod"};
    if (!f->getIdentifier() || !names.count(f->getName().str())) return false;
    for (const auto* prm : f->parameters())
      if (!prm->getType()->isSpecificBuiltinType(clang::BuiltinType::Double)) return false;
    return f->getNumParams() > 0;
  }

  // The promotions found, reported after the traversal with their cost in their function.
  struct Found {
    const clang::Expr* op;
    const clang::FloatingLiteral* lit;
    const clang::Expr* floatSide;
    bool compound;
    unsigned depth;  // double operators above the first one before the result is narrowed
    const clang::FunctionDecl* fn;
    std::string viaCall;  // a double math function the result goes through (`exp`), or empty
  };
  std::vector<Found> found;
  void report(const clang::Expr* op, const clang::FloatingLiteral* lit, const clang::Expr* floatSide, bool compound,
              unsigned depth = 0) {
    if (!rc.inLintedFile(lit->getBeginLoc())) return;
    if (!seen.insert(lit->getBeginLoc().getRawEncoding()).second) return;
    found.push_back({op, lit, floatSide, compound, depth, fn, viaCall});
  }

  void emit(const Found& f, double impact, const std::string& impactText) {
    const clang::Expr* op = f.op;
    const clang::FloatingLiteral* lit = f.lit;
    const clang::Expr* floatSide = f.floatSide;
    const bool compound = f.compound;
    const clang::FunctionDecl* fn = f.fn;
    std::string text = rc.text(lit);
    // A literal spelled through a macro (`#define ETA 0.3`): name both.
    if (lit->getBeginLoc().isMacroID()) {
      llvm::SmallString<32> v;
      lit->getValue().toString(v, 15);
      text += " (" + std::string(v) + ")";
    }
    // The literal as spelled (in a macro's definition when it comes from one), with an 'f'.
    const auto& sm = ctx.getSourceManager();
    std::string fixed = clang::Lexer::getSourceText(clang::CharSourceRange::getTokenRange(sm.getSpellingLoc(lit->getBeginLoc())),
                                                    sm, ctx.getLangOpts()).str();
    if (fixed.empty()) fixed = rc.text(lit);
    if (!fixed.empty() && (fixed.back() == 'l' || fixed.back() == 'L')) fixed.pop_back();
    fixed += "f";
    std::string macro = lit->getBeginLoc().isMacroID()
                            ? clang::Lexer::getImmediateMacroName(lit->getBeginLoc(), sm, ctx.getLangOpts()).str()
                            : std::string();
    std::string msg = fmt::format(
        "'{}' is a double literal, so the float '{}' is converted to double and the {} runs in double precision "
        "({}{}); the result is rounded back to float anyway",
        text, rc.text(floatSide), compound ? "update" : "operation",
        !f.viaCall.empty() ? fmt::format("and the double result goes through '{}', the double-precision function, "
                                         "whose result is narrowed too", f.viaCall)
        : exactInFloat(lit) ? std::string("the literal is exact in float, but the double result feeds more double "
                                        "arithmetic, so the compiler keeps it in double")
                          : std::string("the literal is not exact in float, so the compiler must keep the double operation"),
        fn ? fmt::format(" in '{}'", fn->getNameAsString()) : "");
    if (fn) rc.setFunction(fn->getQualifiedNameAsString());
    Diagnostic d = rc.make(info, rc.span(lit), msg);
    d.notes.push_back({rc.span(op), "computed in double here"});
    d.fixHint = lit->getBeginLoc().isMacroID()
                    ? fmt::format("define '{}' as a float literal ('{}'); if double precision is meant, make the "
                                  "variables double", macro, fixed)
                    : fmt::format("write the literal as a float ('{}'); if double precision is meant, make the variables "
                                  "double", fixed);
    d.impact = impact;
    d.impactText = impactText;
    rc.report(std::move(d));
    if (fn) rc.setFunction({});
  }

  bool VisitBinaryOperator(clang::BinaryOperator* bo) {
    if (!fn || bo->containsErrors() || bo->isValueDependent()) return true;
    if (auto* cao = llvm::dyn_cast<clang::CompoundAssignOperator>(bo)) {
      // `v *= 1.1` on a float v: computed in double, stored as float.
      if (!isArith(clang::BinaryOperator::getOpForCompoundAssignment(cao->getOpcode()))) return true;
      if (!isFloat(cao->getLHS()->getType()) || !isDouble(cao->getComputationResultType())) return true;
      if (auto* lit = doubleLiteral(cao->getRHS()); lit && !exactInFloat(lit)) report(cao, lit, cao->getLHS(), true);
      return true;
    }
    if (!isArith(bo->getOpcode()) || !isDouble(bo->getType())) return true;
    const clang::Expr *l = bo->getLHS(), *r = bo->getRHS();
    const clang::FloatingLiteral* lit = nullptr;
    const clang::Expr* side = nullptr;
    if (isWidenedFloat(l) && (lit = doubleLiteral(r))) side = l;
    else if (isWidenedFloat(r) && (lit = doubleLiteral(l))) side = r;
    if (!lit) return true;
    unsigned depth = 0;
    // The double result used as a double (a double variable, a double function): on purpose.
    if (!backToFloat(bo, depth)) return true;
    // Converted straight back to float with a literal exact in float: the compiler folds it to
    // the float operation (the result is identical).
    if (depth == 0 && exactInFloat(lit)) return true;
    const clang::Expr* floatSide = llvm::cast<clang::ImplicitCastExpr>(side->IgnoreParens())->getSubExpr();
    // Every operand a compile-time constant (`T0 + 0.01f`): folded, nothing runs in double.
    if (floatSide->isEvaluatable(ctx)) return true;
    report(bo, lit, floatSide, false, depth);
    return true;
  }
};
}  // namespace

namespace {
// What a promotion costs in its function (issue 28): a roofline estimate of the function's time per
// warp from its source, in SM clock cycles at the H100's documented throughput per SM and clock
// (CUDA C++ Programming Guide, arithmetic instructions, compute capability 9.0: 128 FP32, 64 FP64,
// 64 INT32, 16 conversions to or from 64-bit types, 16 special functions; HBM3 3.35 TB/s over 132
// SMs at 1.98 GHz, about 12.8 bytes per clock per SM). The demo's `v * 1.1 - 0.1` (two conversions
// and a DFMA per step instead of an FFMA) is predicted 18x here, measured 12.3x.
// Each statement counts once per execution: the trips of the loops around it (a constant count, else
// kUnknownTrips); a device function's cost counts at each call (two calls deep).
constexpr double kFp32 = 32.0 / 128, kFp64 = 32.0 / 64, kInt = 32.0 / 64, kConvert = 32.0 / 16, kSpecial = 32.0 / 16;
constexpr double kGlobalAccess = 128 / 12.8;  // a coalesced 4-byte access of a warp: 4 sectors
constexpr double kUnknownTrips = 16;

struct FnTime {
  double memory = 0, compute = 0;
};

double loopTrips(clang::ASTContext& ctx, const clang::Stmt* loop) {
  auto* f = llvm::dyn_cast<clang::ForStmt>(loop);
  auto* cond = f && f->getCond() ? llvm::dyn_cast<clang::BinaryOperator>(f->getCond()->IgnoreParenImpCasts()) : nullptr;
  if (!cond) return kUnknownTrips;
  auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(cond->getLHS()->IgnoreParenImpCasts());
  auto* v = dre ? llvm::dyn_cast<clang::VarDecl>(dre->getDecl()) : nullptr;
  auto* ds = llvm::dyn_cast_or_null<clang::DeclStmt>(f->getInit());
  if (!v || !ds || !ds->isSingleDecl() || ds->getSingleDecl() != v || !v->getInit()) return kUnknownTrips;
  clang::Expr::EvalResult a, b;
  if (v->getInit()->isValueDependent() || cond->getRHS()->isValueDependent() || !v->getInit()->EvaluateAsInt(a, ctx) ||
      !cond->getRHS()->EvaluateAsInt(b, ctx))
    return kUnknownTrips;
  int64_t n = b.Val.getInt().getExtValue() - a.Val.getInt().getExtValue();
  if (cond->getOpcode() == clang::BO_LE) ++n;
  else if (cond->getOpcode() != clang::BO_LT && cond->getOpcode() != clang::BO_NE) return kUnknownTrips;
  return n > 0 ? static_cast<double>(n) : 1.0;
}

bool isLoopStmt(const clang::Stmt* s) {
  return llvm::isa<clang::ForStmt>(s) || llvm::isa<clang::WhileStmt>(s) || llvm::isa<clang::DoStmt>(s) ||
         llvm::isa<clang::CXXForRangeStmt>(s);
}

// Whether an index differs from thread to thread (it reads threadIdx or blockIdx, through local
// variables and, for a device function's parameter, through the arguments of its calls here): such
// accesses stream through DRAM, a warp's 4 sectors each; an index the same for every thread (a
// parameter's offset, a constant, a loop counter) is one broadcast line, served by the caches.
class ThreadDependence {
 public:
  explicit ThreadDependence(clang::ASTContext& ctx) : ctx_(ctx) {}
  bool of(const clang::Expr* e, int depth = 0) {
    if (!e || depth > 6) return false;
    e = e->IgnoreParenImpCasts();
    // threadIdx.x: a property of the builtin variable, a pseudo-object whose syntactic form names it.
    if (auto* po = llvm::dyn_cast<clang::PseudoObjectExpr>(e)) return of(po->getSyntacticForm(), depth);
    if (auto* pr = llvm::dyn_cast<clang::MSPropertyRefExpr>(e)) return of(pr->getBaseExpr(), depth);
    if (auto* ov = llvm::dyn_cast<clang::OpaqueValueExpr>(e)) return of(ov->getSourceExpr(), depth);
    if (auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
      // threadIdx.x is a property of the builtin variable (a pseudo-object around this reference).
      if (d->getDecl()->getIdentifier() && (d->getDecl()->getName() == "threadIdx" || d->getDecl()->getName() == "blockIdx"))
        return true;
      if (auto* p = llvm::dyn_cast<clang::ParmVarDecl>(d->getDecl())) return param(p, depth);
      if (auto* v = llvm::dyn_cast<clang::VarDecl>(d->getDecl()); v && v->hasLocalStorage()) return var(v, depth);
      return false;
    }
    for (const clang::Stmt* c : e->children())  // `depth` counts variables and calls followed
      if (auto* ce = llvm::dyn_cast_or_null<clang::Expr>(c); ce && of(ce, depth)) return true;
    return false;
  }

 private:
  bool var(const clang::VarDecl* v, int depth) {
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    memo_[v] = false;  // while it is being decided (a variable defined from itself)
    bool dep = v->getInit() && of(v->getInit(), depth + 1);
    if (!dep)
      if (auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(v->getDeclContext()); fn && fn->getBody()) {
        struct Sets : clang::RecursiveASTVisitor<Sets> {
          const clang::VarDecl* v;
          std::vector<const clang::Expr*> values;
          bool VisitBinaryOperator(clang::BinaryOperator* b) {
            auto* d = llvm::dyn_cast<clang::DeclRefExpr>(b->getLHS()->IgnoreParenImpCasts());
            if (b->isAssignmentOp() && d && d->getDecl() == v) values.push_back(b->getRHS());
            return true;
          }
        } sets;
        sets.v = v;
        sets.TraverseStmt(fn->getBody());
        for (const clang::Expr* x : sets.values)
          if ((dep = of(x, depth + 1))) break;
      }
    return memo_[v] = dep;
  }
  bool param(const clang::ParmVarDecl* p, int depth) {
    auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(p->getDeclContext());
    if (!fn || fn->hasAttr<clang::CUDAGlobalAttr>()) return false;  // a kernel's parameter: the same for all
    if (auto it = memo_.find(p); it != memo_.end()) return it->second;
    memo_[p] = false;
    if (!callsBuilt_) {
      struct Calls : clang::RecursiveASTVisitor<Calls> {
        std::map<const clang::FunctionDecl*, std::vector<const clang::CallExpr*>>* out;
        bool shouldVisitTemplateInstantiations() const { return true; }
        bool VisitCallExpr(clang::CallExpr* c) {
          if (auto* f = c->getDirectCallee()) (*out)[f->getCanonicalDecl()].push_back(c);
          return true;
        }
      } calls;
      calls.out = &calls_;
      calls.TraverseAST(ctx_);
      callsBuilt_ = true;
    }
    bool dep = false;
    unsigned i = p->getFunctionScopeIndex();
    for (const clang::CallExpr* c : calls_[fn->getCanonicalDecl()])
      if (i < c->getNumArgs() && (dep = of(c->getArg(i), depth + 1))) break;
    return memo_[p] = dep;
  }
  clang::ASTContext& ctx_;
  std::map<const clang::VarDecl*, bool> memo_;
  std::map<const clang::FunctionDecl*, std::vector<const clang::CallExpr*>> calls_;
  bool callsBuilt_ = false;
};

class TimeModel {
 public:
  explicit TimeModel(clang::ASTContext& ctx) : ctx_(ctx), threads_(ctx) {}
  const FnTime& of(const clang::FunctionDecl* fn) {
    auto it = cache_.find(fn);
    if (it != cache_.end()) return it->second;
    FnTime t;
    if (depth_ < 3 && fn->hasBody()) {
      ++depth_;
      add(fn->getBody(), 1, t);
      --depth_;
    }
    return cache_[fn] = t;
  }
  // Executions of `s` per run of `fn`: the trips of the loops around it.
  double weightOf(const clang::Stmt* s) {
    double w = 1;
    const clang::Stmt* child = s;
    auto parents = ctx_.getParents(*s);
    for (int guard = 0; !parents.empty() && guard < 512; ++guard) {
      const clang::Stmt* p = parents[0].get<clang::Stmt>();
      if (!p) {
        const clang::Decl* d = parents[0].get<clang::Decl>();
        if (!d || llvm::isa<clang::FunctionDecl>(d)) break;
        parents = ctx_.getParents(*d);
        continue;
      }
      auto* f = llvm::dyn_cast<clang::ForStmt>(p);
      if (isLoopStmt(p) && !(f && f->getInit() == child)) w *= loopTrips(ctx_, p);
      child = p;
      parents = ctx_.getParents(*p);
    }
    return w;
  }

 private:
  void add(const clang::Stmt* s, double w, FnTime& t) {
    if (!s) return;
    if (isLoopStmt(s)) {
      double trips = loopTrips(ctx_, s);
      for (const clang::Stmt* c : s->children()) {
        auto* f = llvm::dyn_cast<clang::ForStmt>(s);
        add(c, f && c == f->getInit() ? w : w * trips, t);
      }
      return;
    }
    if (auto* e = llvm::dyn_cast<clang::Expr>(s); e && e->isValueDependent()) return;
    if (auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(s)) {
      // Through a pointer: global memory as far as the source says; an array: shared or registers.
      // Each thread its own element: a warp's 4 sectors from DRAM; the same element for all: one
      // broadcast line from the caches (counted as an integer operation).
      if (a->getBase()->IgnoreParenImpCasts()->getType()->isPointerType() && threads_.of(a->getIdx()))
        t.memory += kGlobalAccess * w;
      else
        t.compute += kInt * w;
    } else if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(s); u && u->getOpcode() == clang::UO_Deref) {
      if (threads_.of(u->getSubExpr())) t.memory += kGlobalAccess * w;
      else t.compute += kInt * w;
    } else if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(s); b && !b->isAssignmentOp() && !b->isCommaOp()) {
      clang::QualType ty = b->getType();
      t.compute += (isDouble(ty) ? kFp64 : isFloat(ty) ? kFp32 : kInt) * w;
    } else if (auto* c = llvm::dyn_cast<clang::ImplicitCastExpr>(s); c && c->getCastKind() == clang::CK_FloatingCast) {
      t.compute += kConvert * w;
    } else if (auto* call = llvm::dyn_cast<clang::CallExpr>(s)) {
      if (const clang::FunctionDecl* fd = call->getDirectCallee()) {
        if (fd->hasBody() && !fd->getBuiltinID()) {
          const FnTime& callee = of(fd);
          t.memory += callee.memory * w;
          t.compute += callee.compute * w;
        } else if (isFloat(call->getType()) || isDouble(call->getType())) {
          t.compute += (isDouble(call->getType()) ? 4 : 1) * kSpecial * w;  // a math function
        }
      }
    }
    for (const clang::Stmt* c : s->children()) add(c, w, t);
  }
  clang::ASTContext& ctx_;
  ThreadDependence threads_;
  std::map<const clang::FunctionDecl*, FnTime> cache_;
  int depth_ = 0;
};
// The functions the translation unit's kernels reach through direct calls, constructors and
// functions named as values (a functor's operator() in a template instantiation is a direct call
// there), as canonical declarations and their template patterns. `open` when a kernel calls
// through a pointer the AST does not resolve (anything may run), or when the unit has no kernel.
struct KernelReach : clang::RecursiveASTVisitor<KernelReach> {
  const RuleContext* rc = nullptr;  // kernels it says nothing here runs are not roots
  std::set<const clang::FunctionDecl*> reached;
  std::vector<const clang::FunctionDecl*> todo;
  bool open = false;
  bool shouldVisitTemplateInstantiations() const { return true; }
  static const clang::FunctionDecl* key(const clang::FunctionDecl* f) { return f->getCanonicalDecl(); }
  void reach(const clang::FunctionDecl* f) {
    if (!f) return;
    const clang::FunctionDecl* def = f->getDefinition();
    if (!reached.insert(key(f)).second) return;
    if (auto* p = f->getTemplateInstantiationPattern()) reached.insert(key(p));
    if (def && def->hasBody()) todo.push_back(def);
  }
  bool VisitFunctionDecl(clang::FunctionDecl* f) {
    if (f->hasAttr<clang::CUDAGlobalAttr>() && f->hasBody() && !f->isDependentContext() && !(rc && rc->notRunKernel(f)))
      reach(f);
    return true;
  }
  void close() {
    if (reached.empty()) open = true;
    struct Body : clang::RecursiveASTVisitor<Body> {
      KernelReach* r;
      bool VisitCallExpr(clang::CallExpr* c) {
        if (auto* f = c->getDirectCallee()) r->reach(f);
        else if (!llvm::isa<clang::CXXPseudoDestructorExpr>(c->getCallee()->IgnoreParenImpCasts()) && !c->isTypeDependent())
          r->open = true;
        return true;
      }
      bool VisitCXXConstructExpr(clang::CXXConstructExpr* c) {
        r->reach(c->getConstructor());
        return true;
      }
      bool VisitDeclRefExpr(clang::DeclRefExpr* d) {
        if (auto* f = llvm::dyn_cast<clang::FunctionDecl>(d->getDecl())) r->reach(f);
        return true;
      }
      bool VisitLambdaExpr(clang::LambdaExpr* l) {
        r->reach(l->getCallOperator());
        return true;
      }
    } body;
    body.r = this;
    while (!todo.empty()) {
      const clang::FunctionDecl* f = todo.back();
      todo.pop_back();
      body.TraverseStmt(f->getBody());
      if (auto* cd = llvm::dyn_cast<clang::CXXConstructorDecl>(f))
        for (const auto* init : cd->inits())
          if (init->getInit()) body.TraverseStmt(init->getInit());
    }
  }
  bool reaches(const clang::FunctionDecl* f) const {
    if (open || reached.count(key(f))) return true;
    if (auto* p = f->getTemplateInstantiationPattern()) return reached.count(key(p)) > 0;
    return false;
  }
};
}  // namespace

void DoublePromotionRule::checkTranslationUnit(clang::ASTContext& ctx, RuleContext& rc) {
  Visitor v(ctx, rc, kInfo);
  v.TraverseAST(ctx);
  // The cost: what all of a function's promotions add to its estimated time (nothing while it stays
  // bound by its memory accesses), shared among them by what each one adds.
  TimeModel time(ctx);
  // A device function no kernel of this unit calls (a header's library function): how often it
  // runs is not known here, so its cost is not claimed (a note; a unit whose kernels call it
  // reports it as usual, and the header's place keeps the higher severity).
  KernelReach reach;
  reach.rc = &rc;
  if (!v.found.empty()) {
    reach.TraverseAST(ctx);
    reach.close();
  }
  std::map<const clang::FunctionDecl*, double> extraOf;
  std::map<const clang::FunctionDecl*, unsigned> countOf;
  std::vector<double> extra(v.found.size());
  for (size_t i = 0; i < v.found.size(); ++i) {
    const auto& f = v.found[i];
    // Two conversions (the float operand widened, the result narrowed) and the double operations,
    // instead of as many FP32 ones.
    extra[i] = v.found[i].fn ? time.weightOf(f.op) * (2 * kConvert + (f.depth + 1) * (kFp64 - kFp32)) : 0;
    if (f.fn) extraOf[f.fn] += extra[i], ++countOf[f.fn];
  }
  for (size_t i = 0; i < v.found.size(); ++i) {
    const auto& f = v.found[i];
    if (!f.fn) {
      v.emit(f, -1, "");
      continue;
    }
    // In a kernel this file launches only in code that never runs (dead_launches.cu): the kernel is
    // named as not analysed; nothing is said of it here either.
    if (rc.notRunKernel(f.fn)) continue;
    if (!reach.reaches(f.fn)) {
      v.emit(f, 0, fmt::format("no kernel of this file calls '{}': how often it runs is not known here",
                               f.fn->getNameAsString()));
      continue;
    }
    const FnTime& t = time.of(f.fn);
    double after = std::max(t.memory, t.compute), before = std::max(t.memory, t.compute - extraOf[f.fn]);
    // One cost for all of the function's promotions: the fix is the same edit to each literal.
    double share = after > 0 && extraOf[f.fn] > 0 ? (after - before) / after : 1;
    share = std::clamp(share, 0.0, 1.0);
    const unsigned n = countOf[f.fn];
    std::string what = n == 1 ? std::string("the double work") : fmt::format("the double work of its {} promotions", n);
    std::string text = share <= 0 ? fmt::format("'{}' stays bound by its memory accesses: {} adds no estimated time",
                                                f.fn->getNameAsString(), what)
                                  : fmt::format("{} is ~{:.0f}% of '{}''s estimated time", what,
                                                std::max(1.0, share * 100), f.fn->getNameAsString());
    v.emit(f, share, text);
  }
}

}  // namespace gpuopt
