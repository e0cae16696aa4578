// double-promotion: `v * 1.1` on a float v converts v to double, multiplies in double (DMUL) and
// converts back (F2F twice). A purely syntactic fact about types, found with the AST.
#include "rules/double_promotion.h"

#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Lex/Lexer.h>
#include <fmt/format.h>
#include <llvm/ADT/APFloat.h>

#include <set>

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
      return false;
    }
    return false;
  }

  void report(const clang::Expr* op, const clang::FloatingLiteral* lit, const clang::Expr* floatSide, bool compound) {
    if (!rc.inLintedFile(lit->getBeginLoc())) return;
    if (!seen.insert(lit->getBeginLoc().getRawEncoding()).second) return;
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
        exactInFloat(lit) ? std::string("the literal is exact in float, but the double result feeds more double "
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
    report(bo, lit, floatSide, false);
    return true;
  }
};
}  // namespace

void DoublePromotionRule::checkTranslationUnit(clang::ASTContext& ctx, RuleContext& rc) {
  Visitor v(ctx, rc, kInfo);
  v.TraverseAST(ctx);
}

}  // namespace gpuopt
