// The buffer facts of the launch index: how many bytes each buffer a launch passes was allocated
// with, and whether it is a prefix sum of 0/1 flags (see launch_index.h).
#include "analyzer/model/launch_index.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <fmt/format.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Support/Path.h>

#include "analyzer/model/ast_util.h"
#include "analyzer/model/launch_detail.h"

#include <functional>
#include <set>

namespace gpuopt {

using namespace launch_detail;

namespace {
// The buffer a host expression names: a device_vector (`d`, `d.begin()`, `&d[0]`,
// `thrust::raw_pointer_cast(&d[0])`) or a pointer variable initialised from one.
const clang::VarDecl* bufferOf(const clang::Expr* e, int depth = 0) {
  if (!e || depth > 4) return nullptr;
  struct Find : clang::RecursiveASTVisitor<Find> {
    const clang::VarDecl* found = nullptr;
    bool VisitDeclRefExpr(clang::DeclRefExpr* d) {
      auto* vd = llvm::dyn_cast<clang::VarDecl>(d->getDecl());
      if (!vd) return true;
      auto* rd = vd->getType().getNonReferenceType()->getAsCXXRecordDecl();
      if (rd && (rd->getName() == "device_vector" || rd->getName() == "universal_vector")) { found = vd; return false; }
      return true;
    }
  } f;
  f.TraverseStmt(const_cast<clang::Expr*>(e));
  if (f.found) return f.found;
  // `p + n` of an iterator or pointer: the buffer of `p`.
  e = e->IgnoreParenCasts();
  if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e); b && b->isAdditiveOp()) e = b->getLHS()->IgnoreParenCasts();
  if (auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e); oc && oc->getNumArgs() == 2 &&
      (oc->getOperator() == clang::OO_Plus || oc->getOperator() == clang::OO_Minus))
    e = oc->getArg(0)->IgnoreParenCasts();
  if (auto* ce = llvm::dyn_cast<clang::CXXConstructExpr>(e); ce && ce->getNumArgs() >= 1) return bufferOf(ce->getArg(0), depth + 1);
  auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e);
  auto* vd = dre ? llvm::dyn_cast<clang::VarDecl>(dre->getDecl()) : nullptr;
  if (!vd || reassigned(vd)) return nullptr;
  auto* rd = vd->getType().getNonReferenceType()->getAsCXXRecordDecl();
  if (rd && rd->getName() == "device_ptr" && vd->hasInit()) return bufferOf(vd->getInit(), depth + 1);
  if (vd->getType()->isPointerType()) {
    if (vd->hasInit())
      if (const clang::VarDecl* b = bufferOf(vd->getInit(), depth + 1)) return b;
    return vd;  // a raw device pointer: the buffer itself
  }
  return nullptr;
}

// Whether every store to parameter `p` in kernel `k`'s body stores 0 or 1 (a literal, a bool, a
// comparison or a logical operator, or a ?: of those), and there is at least one.
bool storesOnlyFlags(const clang::FunctionDecl* k, const clang::ParmVarDecl* p) {
  const clang::FunctionDecl* def = nullptr;
  if (!k->hasBody(def) || !def) return false;
  if (def != k && def->getNumParams() > p->getFunctionScopeIndex()) p = def->getParamDecl(p->getFunctionScopeIndex());
  struct Check : clang::RecursiveASTVisitor<Check> {
    const clang::ParmVarDecl* p;
    unsigned stores = 0;
    bool bad = false;
    static bool flag(const clang::Expr* e) {
      e = e->IgnoreParenImpCasts();
      if (auto* il = llvm::dyn_cast<clang::IntegerLiteral>(e)) return il->getValue() == 0 || il->getValue() == 1;
      if (llvm::isa<clang::CXXBoolLiteralExpr>(e)) return true;
      if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e)) return b->isComparisonOp() || b->isLogicalOp();
      if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e)) return u->getOpcode() == clang::UO_LNot;
      if (auto* c = llvm::dyn_cast<clang::ConditionalOperator>(e)) return flag(c->getTrueExpr()) && flag(c->getFalseExpr());
      return false;
    }
    bool refers(const clang::Expr* e) const {
      e = e->IgnoreParenImpCasts();
      if (auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) e = a->getBase()->IgnoreParenImpCasts();
      else if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u && u->getOpcode() == clang::UO_Deref) e = u->getSubExpr()->IgnoreParenImpCasts();
      else return false;
      auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e);
      return d && d->getDecl() == p;
    }
    bool VisitBinaryOperator(clang::BinaryOperator* b) {
      if (b->isAssignmentOp() && refers(b->getLHS())) {
        ++stores;
        if (b->getOpcode() != clang::BO_Assign || !flag(b->getRHS())) bad = true;
      }
      return true;
    }
    bool VisitUnaryOperator(clang::UnaryOperator* u) {
      if (u->isIncrementDecrementOp() && refers(u->getSubExpr())) bad = true;
      return true;
    }
    bool VisitCallExpr(clang::CallExpr* c) {  // passed on (to a helper or an atomic): not followed
      for (const auto* a : c->arguments())
        if (auto* d = llvm::dyn_cast<clang::DeclRefExpr>(a->IgnoreParenImpCasts()); d && d->getDecl() == p) bad = true;
      return true;
    }
  } c;
  c.p = p;
  c.TraverseStmt(def->getBody());
  return c.stores > 0 && !c.bad;
}
}  // namespace

void LaunchIndex::readBufferFacts(clang::ASTContext& ctx, const HostCalls& calls) {
  // Allocation sizes of the buffers each launch passes.
  std::function<uint64_t(const clang::Expr*)> constBytes = [&](const clang::Expr* e) -> uint64_t {
    e = e->IgnoreParenImpCasts();
    if (e->isValueDependent()) return 0;
    clang::Expr::EvalResult r;
    if (e->EvaluateAsInt(r, ctx)) return r.Val.getInt().isNegative() ? 0 : r.Val.getInt().getZExtValue();
    if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e)) {
      uint64_t x = constBytes(b->getLHS()), y = x ? constBytes(b->getRHS()) : 0;
      if (!x || !y) return 0;
      if (b->getOpcode() == clang::BO_Mul) return x * y;
      if (b->getOpcode() == clang::BO_Add) return x + y;
      return 0;
    }
    // `domain.ni` where `const int ni = NC + 1;` is a const member with an in-class initializer.
    if (auto* me = llvm::dyn_cast<clang::MemberExpr>(e))
      if (auto* fd = llvm::dyn_cast<clang::FieldDecl>(me->getMemberDecl()); fd && fd->getType().isConstQualified() && fd->getInClassInitializer())
        return constBytes(fd->getInClassInitializer());
    if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e))
      if (auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl()); vd && vd->getType().isConstQualified() && vd->hasInit())
        return constBytes(vd->getInit());
    return 0;
  };
  std::map<std::pair<const clang::VarDecl*, int>, uint64_t> extentOf;  // memo: a launch function passes
                                                                       // the same buffers to many launches
  std::function<uint64_t(const clang::Expr*, int)> extent = [&](const clang::Expr* e, int depth) -> uint64_t {
    auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenCasts());
    auto* var = dre ? llvm::dyn_cast<clang::VarDecl>(dre->getDecl()) : nullptr;
    if (!var) return 0;
    // Only buffers something allocates can have a size: skip the rest before any search.
    if (!llvm::isa<clang::ParmVarDecl>(var) && !calls.mallocs.count(var)) return 0;
    auto memo = extentOf.find({var, depth});
    if (memo != extentOf.end()) return memo->second;
    uint64_t& out = extentOf[{var, depth}];
    out = 0;
    if (reassigned(var)) return 0;
    if (auto* pv = llvm::dyn_cast<clang::ParmVarDecl>(var)) {  // through a host function's parameter
      auto* fn = llvm::dyn_cast<clang::FunctionDecl>(pv->getDeclContext());
      if (!fn || depth >= 3 || fn->hasAttr<clang::CUDAGlobalAttr>()) return 0;
      auto it = calls.callsOf.find(fn->getCanonicalDecl());
      if (it == calls.callsOf.end() || it->second.empty()) return 0;
      uint64_t most = 0;
      for (const clang::CallExpr* c : it->second) {
        unsigned i = pv->getFunctionScopeIndex();
        uint64_t b = i < c->getNumArgs() ? extent(c->getArg(i), depth + 1) : 0;
        if (!b) return 0;
        most = std::max(most, b);
      }
      return extentOf[{var, depth}] = most;
    }
    auto it = calls.mallocs.find(var);
    if (it == calls.mallocs.end()) return 0;
    uint64_t most = 0;
    for (const clang::Expr* size : it->second) {
      uint64_t b = constBytes(size);
      if (!b) return 0;
      most = std::max(most, b);
    }
    return extentOf[{var, depth}] = most;
  };
  // Scans of flags: per launch, for each argument naming a buffer, the events before it in its
  // function (source order): the last scan writing the buffer, and the launch before that scan
  // that wrote the scan's input.
  const auto& sm = ctx.getSourceManager();
  auto scanOutput = [&](const clang::CallExpr* c, const clang::VarDecl*& in) -> const clang::VarDecl* {
    const clang::FunctionDecl* fd = c->getDirectCallee();
    if (!fd || c->getNumArgs() < 3 || !fd->getIdentifier()) return nullptr;
    std::string n = fd->getName().str(), q = fd->getQualifiedNameAsString();
    if (n != "exclusive_scan" && n != "inclusive_scan") return nullptr;
    if (q.find("thrust") == std::string::npos && q.find("std") == std::string::npos) return nullptr;
    unsigned first = 0;  // thrust's execution-policy overloads take the policy first
    if (c->getNumArgs() >= 4 && !bufferOf(c->getArg(0))) first = 1;
    in = bufferOf(c->getArg(first));
    return bufferOf(c->getArg(first + 2));
  };
  // The scans of the translation unit (usually none: then nothing more is done).
  struct Scan {
    const clang::CallExpr* call;
    const clang::VarDecl* out;
    const clang::VarDecl* in;
  };
  std::vector<Scan> scans;
  for (const auto& [fn, calls] : calls.callsOf) {
    if (!fn->getIdentifier()) continue;
    std::string n = fn->getName().str();
    if (n != "exclusive_scan" && n != "inclusive_scan") continue;
    for (const clang::CallExpr* c : calls) {
      const clang::VarDecl* in = nullptr;
      if (const clang::VarDecl* out = scanOutput(c, in)) scans.push_back({c, out, in});
    }
  }
  auto flagsFact = [&](const clang::CallExpr* launch, unsigned i) {
    const clang::VarDecl* buf = bufferOf(launch->getArg(i));
    if (!buf) return false;
    const clang::CallExpr* lastScan = nullptr;
    const clang::VarDecl* scanIn = nullptr;
    for (const Scan& sc : scans) {
      if (sc.out != buf || !sm.isBeforeInTranslationUnit(sc.call->getBeginLoc(), launch->getBeginLoc())) continue;
      if (!lastScan || sm.isBeforeInTranslationUnit(lastScan->getBeginLoc(), sc.call->getBeginLoc())) lastScan = sc.call, scanIn = sc.in;
    }
    if (!lastScan || !scanIn) return false;
    // Nothing launched between the scan and this launch may write the buffer; the last launch
    // before the scan that gets its input must store only flags into it.
    const clang::CallExpr* producer = nullptr;
    unsigned producerArg = 0;
    for (const auto& [k2, call2] : calls.kernelCalls) {
      for (unsigned j = 0; j < call2->getNumArgs(); ++j) {
        const clang::VarDecl* b = bufferOf(call2->getArg(j));
        if (!b) continue;
        bool afterScan = sm.isBeforeInTranslationUnit(lastScan->getBeginLoc(), call2->getBeginLoc()) &&
                         sm.isBeforeInTranslationUnit(call2->getBeginLoc(), launch->getBeginLoc());
        if (afterScan && b == buf && j < k2->getNumParams() && !k2->getParamDecl(j)->getType()->getPointeeType().isConstQualified())
          return false;
        if (b == scanIn && sm.isBeforeInTranslationUnit(call2->getBeginLoc(), lastScan->getBeginLoc()) &&
            (!producer || sm.isBeforeInTranslationUnit(producer->getBeginLoc(), call2->getBeginLoc())))
          producer = call2, producerArg = j;
      }
    }
    if (!producer) return false;
    const clang::FunctionDecl* pk = producer->getDirectCallee();
    return pk && producerArg < pk->getNumParams() && storesOnlyFlags(pk, pk->getParamDecl(producerArg));
  };
  for (const auto& [k, call] : scans.empty() ? decltype(calls.kernelCalls){} : calls.kernelCalls) {
    std::vector<uint8_t> flags(call->getNumArgs(), 0);
    for (unsigned i = 0; i < call->getNumArgs(); ++i)
      if (call->getArg(i)->getType()->isPointerType()) flags[i] = flagsFact(call, i);
    forEachKernelKey(k, [&](const clang::FunctionDecl* key) {
      auto [it, inserted] = prefixOfFlags_.emplace(key, flags);
      if (!inserted)
        for (size_t i = 0; i < it->second.size(); ++i) it->second[i] = it->second[i] && i < flags.size() && flags[i];
    });
  }
  for (const auto& [k, call] : calls.kernelCalls) {
    std::vector<uint64_t> bytes(call->getNumArgs(), 0);
    for (unsigned i = 0; i < call->getNumArgs(); ++i)
      if (call->getArg(i)->getType()->isPointerType()) bytes[i] = extent(call->getArg(i), 0);
    forEachKernelKey(k, [&](const clang::FunctionDecl* key) {
      auto [it, inserted] = paramBytes_.emplace(key, bytes);
      if (!inserted)  // every launch must know it: the largest, or 0
        for (size_t i = 0; i < it->second.size(); ++i)
          it->second[i] = i < bytes.size() && it->second[i] && bytes[i] ? std::max(it->second[i], bytes[i]) : 0;
    });
  }
}

}  // namespace gpuopt
