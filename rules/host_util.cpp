#include "rules/host_util.h"

#include <clang/AST/DeclCXX.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Lex/Lexer.h>
#include <fmt/format.h>
#include <llvm/ADT/FoldingSet.h>

namespace gpuopt::host {

using namespace clang;

const Expr* strip(const Expr* e) {
  while (e) {
    e = e->IgnoreParenImpCasts();
    if (auto* c = dyn_cast<ExplicitCastExpr>(e)) { e = c->getSubExpr(); continue; }
    if (auto* u = dyn_cast<UnaryOperator>(e); u && (u->getOpcode() == UO_AddrOf || u->getOpcode() == UO_Deref)) {
      e = u->getSubExpr();
      continue;
    }
    // An element of an array of pointers (h[i] with float* h[4]) is a pointer whose storage we do
    // not know: stop there. Elements of data arrays lead to the array itself.
    if (auto* a = dyn_cast<ArraySubscriptExpr>(e)) {
      if (a->getType()->isPointerType()) break;
      e = a->getBase();
      continue;
    }
    if (auto* b = dyn_cast<BinaryOperator>(e); b && (b->getOpcode() == BO_Add || b->getOpcode() == BO_Sub)) {
      e = b->getLHS()->getType()->isPointerType() ? b->getLHS() : b->getRHS();
      continue;
    }
    if (auto* op = dyn_cast<CXXOperatorCallExpr>(e); op && op->getOperator() == OO_Subscript) {
      e = op->getArg(0);
      continue;
    }
    break;
  }
  return e;
}

const Expr* bare(const Expr* e) { return e ? e->IgnoreParenCasts()->IgnoreImplicit()->IgnoreParenCasts() : nullptr; }

std::string calleeName(const CallExpr* c) {
  if (auto* fd = c->getDirectCallee(); fd && fd->getDeclName().isIdentifier()) return fd->getNameAsString();
  return {};
}

const FunctionDecl* enclosingFunction(ASTContext& ctx, const Stmt* s) {
  DynTypedNodeList parents = ctx.getParents(*s);
  while (!parents.empty()) {
    if (auto* fd = parents[0].get<FunctionDecl>()) return fd;
    if (auto* st = parents[0].get<Stmt>()) parents = ctx.getParents(*st);
    else if (auto* d = parents[0].get<Decl>()) parents = ctx.getParents(*d);
    else break;
  }
  return nullptr;
}

bool isLoop(const Stmt* s) {
  return isa<ForStmt>(s) || isa<WhileStmt>(s) || isa<DoStmt>(s) || isa<CXXForRangeStmt>(s);
}

const Stmt* loopBody(const Stmt* loop) {
  if (auto* f = dyn_cast<ForStmt>(loop)) return f->getBody();
  if (auto* w = dyn_cast<WhileStmt>(loop)) return w->getBody();
  if (auto* d = dyn_cast<DoStmt>(loop)) return d->getBody();
  if (auto* r = dyn_cast<CXXForRangeStmt>(loop)) return r->getBody();
  return nullptr;
}

bool canRepeat(ASTContext& ctx, const Stmt* loop) {
  const Expr* cond = nullptr;
  if (auto* d = dyn_cast<DoStmt>(loop)) cond = d->getCond();
  else if (auto* w = dyn_cast<WhileStmt>(loop)) cond = w->getCond();
  else if (auto* f = dyn_cast<ForStmt>(loop)) cond = f->getCond();
  if (!cond || cond->isValueDependent()) return true;
  bool value = true;
  return !cond->EvaluateAsBooleanCondition(value, ctx) || value;
}

const Stmt* enclosingLoop(ASTContext& ctx, const Stmt* s) {
  DynTypedNodeList parents = ctx.getParents(*s);
  while (!parents.empty()) {
    if (auto* st = parents[0].get<Stmt>()) {
      if (isLoop(st) && canRepeat(ctx, st)) return st;
      if (isa<LambdaExpr>(st)) return nullptr;
      parents = ctx.getParents(*st);
    } else if (parents[0].get<FunctionDecl>() || parents[0].get<LambdaExpr>()) {
      return nullptr;
    } else if (auto* d = parents[0].get<Decl>()) {
      parents = ctx.getParents(*d);
    } else {
      break;
    }
  }
  return nullptr;
}

bool conditionalIn(ASTContext& ctx, const Stmt* s, const Stmt* loop) {
  const Stmt* child = s;
  DynTypedNodeList parents = ctx.getParents(*s);
  while (!parents.empty()) {
    const Stmt* p = parents[0].get<Stmt>();
    if (!p) {
      auto* d = parents[0].get<Decl>();
      if (!d || isa<FunctionDecl>(d)) return false;
      parents = ctx.getParents(*d);
      continue;
    }
    if (p == loop) return false;
    if (auto* i = dyn_cast<IfStmt>(p); i && (child == i->getThen() || child == i->getElse())) return true;
    if (isa<SwitchCase>(p)) return true;
    if (auto* c = dyn_cast<AbstractConditionalOperator>(p); c && child != c->getCond()) return true;
    if (auto* b = dyn_cast<BinaryOperator>(p); b && b->isLogicalOp() && child == b->getRHS()) return true;
    if (isa<LambdaExpr>(p)) return false;
    child = p;
    parents = ctx.getParents(*p);
  }
  return false;
}

bool sameExpr(ASTContext& ctx, const Expr* a, const Expr* b) {
  if (!a || !b) return false;
  llvm::FoldingSetNodeID x, y;
  a->IgnoreParenImpCasts()->Profile(x, ctx, /*Canonical=*/true);
  b->IgnoreParenImpCasts()->Profile(y, ctx, /*Canonical=*/true);
  return x == y;
}

std::optional<int64_t> constInt(ASTContext& ctx, const Expr* e) {
  if (!e || e->isValueDependent() || e->containsErrors()) return std::nullopt;
  Expr::EvalResult r;
  if (!e->EvaluateAsInt(r, ctx)) return std::nullopt;
  return r.Val.getInt().getExtValue();
}

namespace {
const VarDecl* declOf(const Expr* e) {
  if (auto* dre = dyn_cast_or_null<DeclRefExpr>(e ? e->IgnoreParenImpCasts() : nullptr))
    return dyn_cast<VarDecl>(dre->getDecl());
  return nullptr;
}
}  // namespace

const VarDecl* unitCounter(const Stmt* loop) {
  auto* f = dyn_cast<ForStmt>(loop);
  if (!f || !f->getInc()) return nullptr;
  const Expr* inc = f->getInc()->IgnoreParenImpCasts();
  if (auto* u = dyn_cast<UnaryOperator>(inc); u && u->isIncrementOp()) return declOf(u->getSubExpr());
  if (auto* op = dyn_cast<CXXOperatorCallExpr>(inc); op && op->getOperator() == OO_PlusPlus) return declOf(op->getArg(0));
  if (auto* c = dyn_cast<CompoundAssignOperator>(inc); c && c->getOpcode() == BO_AddAssign) {
    if (auto* lit = dyn_cast<IntegerLiteral>(c->getRHS()->IgnoreParenImpCasts()); lit && lit->getValue() == 1)
      return declOf(c->getLHS());
  }
  if (auto* b = dyn_cast<BinaryOperator>(inc); b && b->getOpcode() == BO_Assign) {
    const VarDecl* v = declOf(b->getLHS());
    if (auto* add = dyn_cast<BinaryOperator>(b->getRHS()->IgnoreParenImpCasts()); v && add && add->getOpcode() == BO_Add) {
      auto* lit = dyn_cast<IntegerLiteral>(add->getRHS()->IgnoreParenImpCasts());
      if (declOf(add->getLHS()) == v && lit && lit->getValue() == 1) return v;
    }
  }
  return nullptr;
}

std::optional<int64_t> tripCount(ASTContext& ctx, const Stmt* loop) {
  auto* f = dyn_cast<ForStmt>(loop);
  const VarDecl* v = unitCounter(loop);
  if (!f || !v || !f->getCond()) return std::nullopt;
  std::optional<int64_t> start;
  if (auto* ds = dyn_cast_or_null<DeclStmt>(f->getInit()); ds && ds->isSingleDecl() && ds->getSingleDecl() == v)
    start = v->hasInit() ? constInt(ctx, v->getInit()) : std::nullopt;
  else if (auto* b = dyn_cast_or_null<BinaryOperator>(f->getInit()); b && b->getOpcode() == BO_Assign && declOf(b->getLHS()) == v)
    start = constInt(ctx, b->getRHS());
  auto* cond = dyn_cast<BinaryOperator>(f->getCond()->IgnoreParenImpCasts());
  if (!start || !cond || declOf(cond->getLHS()) != v) return std::nullopt;
  auto end = constInt(ctx, cond->getRHS());
  if (!end) return std::nullopt;
  int64_t n = cond->getOpcode() == BO_LT || cond->getOpcode() == BO_NE ? *end - *start
              : cond->getOpcode() == BO_LE                             ? *end - *start + 1
                                                                       : -1;
  if (n <= 0) return std::nullopt;
  return n;
}

namespace {
// Variables a statement declares or changes.
class Changes : public RecursiveASTVisitor<Changes> {
 public:
  std::set<const VarDecl*> vars;
  bool addressTaken = true;
  bool shouldVisitLambdaBodies() const { return false; }
  bool VisitVarDecl(VarDecl* v) {
    vars.insert(v);
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator* b) {
    if (b->isAssignmentOp())
      if (auto* v = declOf(b->getLHS())) vars.insert(v);
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator* u) {
    if (u->isIncrementDecrementOp() || (addressTaken && u->getOpcode() == UO_AddrOf))
      if (auto* v = declOf(u->getSubExpr())) vars.insert(v);
    return true;
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr* c) {
    if (c->isAssignmentOp() || c->getOperator() == OO_PlusPlus || c->getOperator() == OO_MinusMinus)
      if (auto* v = declOf(c->getArg(0))) vars.insert(v);
    return true;
  }
};

class Refs : public RecursiveASTVisitor<Refs> {
 public:
  const std::set<const VarDecl*>* vars = nullptr;
  bool found = false;
  bool VisitDeclRefExpr(DeclRefExpr* d) {
    if (auto* v = dyn_cast<VarDecl>(d->getDecl()); v && vars->count(v)) found = true;
    return !found;
  }
};
}  // namespace

std::set<const VarDecl*> loopVaryingVars(const Stmt* loop, bool addressTaken) {
  Changes c;
  c.addressTaken = addressTaken;
  c.TraverseStmt(const_cast<Stmt*>(loop));
  return c.vars;
}

bool refersToAny(const Expr* e, const std::set<const VarDecl*>& vars) {
  if (!e) return false;
  Refs r;
  r.vars = &vars;
  r.TraverseStmt(const_cast<Expr*>(e));
  return r.found;
}

const Expr* fixedInit(ASTContext& ctx, const VarDecl* vd) {
  (void)ctx;
  if (!vd || !vd->hasInit() || !vd->isLocalVarDecl() || vd->getType()->isReferenceType()) return nullptr;
  auto* fn = dyn_cast_or_null<FunctionDecl>(vd->getParentFunctionOrMethod());
  if (!fn || !fn->getBody()) return nullptr;
  struct Assigned : RecursiveASTVisitor<Assigned> {
    const VarDecl* v;
    bool found = false;
    bool VisitBinaryOperator(BinaryOperator* b) {
      if (b->isAssignmentOp() && declOf(b->getLHS()) == v) found = true;
      return true;
    }
    bool VisitUnaryOperator(UnaryOperator* u) {
      if ((u->isIncrementDecrementOp() || u->getOpcode() == UO_AddrOf) && declOf(u->getSubExpr()) == v) found = true;
      return true;
    }
  } a;
  a.v = vd;
  a.TraverseStmt(fn->getBody());
  return a.found ? nullptr : vd->getInit();
}

std::string spelled(ASTContext& ctx, const Expr* e) {
  if (!e) return {};
  const SourceManager& sm = ctx.getSourceManager();
  SourceLocation b = sm.getSpellingLoc(e->getBeginLoc()), en = sm.getSpellingLoc(e->getEndLoc());
  if (b.isInvalid() || en.isInvalid() || sm.getFileID(b) != sm.getFileID(en) || sm.isBeforeInTranslationUnit(en, b))
    return {};
  std::string t = Lexer::getSourceText(CharSourceRange::getTokenRange(b, en), sm, ctx.getLangOpts()).str();
  std::string out;
  for (char c : t) {
    if (c == '\n' || c == '\t') c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(c);
  }
  return out.size() > 80 ? std::string() : out;
}

std::string bytesText(int64_t b) {
  auto num = [](double x) {
    std::string s = fmt::format("{:.1f}", x);
    if (s.size() > 2 && s.substr(s.size() - 2) == ".0") s.resize(s.size() - 2);
    return s;
  };
  if (b < 1024) return fmt::format("{} byte{}", b, b == 1 ? "" : "s");
  if (b < (1 << 20)) return num(b / 1024.0) + " KiB";
  if (b < (int64_t(1) << 30)) return num(b / 1048576.0) + " MiB";
  return num(b / 1073741824.0) + " GiB";
}

// ---- call index and loop sites ----------------------------------------------------------------

CallIndex::CallIndex(ASTContext& ctx) {
  struct V : RecursiveASTVisitor<V> {
    CallIndex* self;
    bool shouldVisitTemplateInstantiations() const { return true; }
    bool shouldVisitImplicitCode() const { return true; }
    bool VisitCallExpr(CallExpr* c) {
      if (auto* fd = c->getDirectCallee(); fd && !c->containsErrors()) self->calls_[fd->getCanonicalDecl()].push_back(c);
      return true;
    }
  } v;
  v.self = this;
  v.TraverseAST(ctx);
}

const std::vector<const CallExpr*>& CallIndex::callsOf(const FunctionDecl* fd) const {
  static const std::vector<const CallExpr*> none;
  auto it = calls_.find(fd ? fd->getCanonicalDecl() : nullptr);
  return it == calls_.end() ? none : it->second;
}

const Stmt* LoopSite::anchor() const { return via.empty() ? nullptr : via.front(); }

std::vector<LoopSite> loopSites(ASTContext& ctx, const CallIndex& index, const Stmt* s, unsigned depth) {
  std::vector<LoopSite> out;
  if (const Stmt* loop = enclosingLoop(ctx, s)) {
    out.push_back({loop, {}});
    return out;
  }
  const FunctionDecl* fn = enclosingFunction(ctx, s);
  if (!fn || depth == 0 || fn->hasAttr<CUDAGlobalAttr>()) return out;
  // A function template's pattern is called through its instantiations.
  const FunctionDecl* key = fn->getTemplateInstantiationPattern() ? fn : fn;
  std::set<std::pair<const Stmt*, const Stmt*>> seen;
  for (const CallExpr* call : index.callsOf(key)) {
    if (call == s) continue;
    for (LoopSite site : loopSites(ctx, index, call, depth - 1)) {
      site.via.push_back(call);
      if (seen.insert({site.loop, site.via.front()}).second) out.push_back(std::move(site));
    }
  }
  return out;
}

// ---- copies ----------------------------------------------------------------------------------

bool isCopyName(const std::string& fn) {
  static const std::set<std::string> names = {
      "cudaMemcpy",           "cudaMemcpyAsync",           "cudaMemcpy2D",         "cudaMemcpy2DAsync",
      "cudaMemcpy3D",         "cudaMemcpy3DAsync",         "cudaMemcpyToSymbol",   "cudaMemcpyToSymbolAsync",
      "cudaMemcpyFromSymbol", "cudaMemcpyFromSymbolAsync"};
  return names.count(fn) > 0;
}

bool describeCopy(ASTContext& ctx, const CallExpr* call, CopyInfo& c) {
  c.call = call;
  c.fn = calleeName(call);
  if (!isCopyName(c.fn)) return false;
  c.async = c.fn.find("Async") != std::string::npos;
  c.symbol = c.fn.find("Symbol") != std::string::npos;
  auto arg = [&](unsigned i) -> const Expr* {
    if (i >= call->getNumArgs()) return nullptr;
    const Expr* e = call->getArg(i);
    return e;
  };
  int kindIdx = -1, streamIdx = -1;
  if (c.fn == "cudaMemcpy" || c.fn == "cudaMemcpyAsync") {
    c.dst = arg(0), c.src = arg(1), c.bytes = arg(2), kindIdx = 3, streamIdx = 4;
  } else if (c.fn == "cudaMemcpy2D" || c.fn == "cudaMemcpy2DAsync") {
    c.dst = arg(0), c.src = arg(2), c.bytes = arg(4), c.rows = arg(5), kindIdx = 6, streamIdx = 7;
  } else if (c.fn == "cudaMemcpy3D" || c.fn == "cudaMemcpy3DAsync") {
    streamIdx = 1;
  } else if (c.fn == "cudaMemcpyToSymbol" || c.fn == "cudaMemcpyToSymbolAsync" || c.fn == "cudaMemcpyFromSymbol" ||
             c.fn == "cudaMemcpyFromSymbolAsync") {
    c.dst = arg(0), c.src = arg(1), c.bytes = arg(2), c.symOffset = arg(3), kindIdx = 4, streamIdx = 5;
  }
  if (c.async && streamIdx >= 0) {
    const Expr* s = arg(streamIdx);
    if (s && !isa<CXXDefaultArgExpr>(s)) c.stream = s;
  }
  if (kindIdx < 0) {
    c.dir = Dir::Default;
    return true;
  }
  std::optional<int64_t> kind;
  if (const Expr* k = arg(kindIdx)) kind = constInt(ctx, k);
  else if (c.symbol) kind = c.fn.find("To") != std::string::npos ? 1 : 2;
  if (!kind || *kind == 4) c.dir = Dir::Default;
  else if (*kind == 1) c.dir = Dir::HostToDevice;
  else if (*kind == 2) c.dir = Dir::DeviceToHost;
  else c.dir = Dir::Other;
  return true;
}

std::optional<int64_t> copyBytes(ASTContext& ctx, const CopyInfo& c) {
  auto w = constInt(ctx, c.bytes);
  if (!w) return std::nullopt;
  if (!c.rows) return w;
  auto h = constInt(ctx, c.rows);
  if (!h) return std::nullopt;
  return *w * *h;
}

bool isDefaultStream(ASTContext& ctx, const Expr* stream) {
  if (!stream || isa<CXXDefaultArgExpr>(stream)) return true;
  if (stream->isValueDependent()) return false;
  if (stream->isNullPointerConstant(ctx, Expr::NPC_ValueDependentIsNotNull)) return true;
  // cudaStreamLegacy is ((cudaStream_t)0x1).
  if (auto* lit = dyn_cast<IntegerLiteral>(stream->IgnoreParenCasts())) return lit->getValue() == 0 || lit->getValue() == 1;
  return false;
}

const Expr* launchStream(const CallExpr* launch) {
  if (auto* k = dyn_cast<CUDAKernelCallExpr>(launch)) {
    const CallExpr* cfg = k->getConfig();
    if (cfg && cfg->getNumArgs() > 3 && !isa<CXXDefaultArgExpr>(cfg->getArg(3))) return cfg->getArg(3);
    return nullptr;
  }
  std::string n = calleeName(launch);
  if ((n == "cudaLaunchKernel" || n == "cudaLaunchCooperativeKernel") && launch->getNumArgs() > 5 &&
      !isa<CXXDefaultArgExpr>(launch->getArg(5)))
    return launch->getArg(5);
  return nullptr;
}

const Expr* throughParams(const Expr* e, const std::vector<const CallExpr*>& via) {
  size_t level = via.size();
  while (e && level > 0) {
    auto* dre = dyn_cast<DeclRefExpr>(bare(e));
    auto* pv = dre ? dyn_cast<ParmVarDecl>(dre->getDecl()) : nullptr;
    const CallExpr* call = via[level - 1];
    const FunctionDecl* callee = call->getDirectCallee();
    if (!pv || !callee || pv->getDeclContext() != callee->getDefinition() ||
        pv->getFunctionScopeIndex() >= call->getNumArgs())
      return e;
    e = call->getArg(pv->getFunctionScopeIndex());
    --level;
  }
  return e;
}

const VarDecl* baseVar(const Expr* e) {
  for (int guard = 0; e && guard < 16; ++guard) {
    e = strip(e);
    if (auto* m = dyn_cast<MemberExpr>(e)) {
      e = m->getBase();
      continue;
    }
    if (auto* mc = dyn_cast<CXXMemberCallExpr>(e)) {
      e = mc->getImplicitObjectArgument();
      continue;
    }
    break;
  }
  return declOf(e);
}

bool writesTo(ASTContext& ctx, const Stmt* loop, const VarDecl* v) {
  (void)ctx;
  if (!v) return false;
  struct W : RecursiveASTVisitor<W> {
    const VarDecl* v;
    bool found = false;
    bool VisitBinaryOperator(BinaryOperator* b) {
      if (b->isAssignmentOp() && baseVar(b->getLHS()) == v) found = true;
      return !found;
    }
    bool VisitUnaryOperator(UnaryOperator* u) {
      if (u->isIncrementDecrementOp() && baseVar(u->getSubExpr()) == v) found = true;
      return !found;
    }
    bool VisitCallExpr(CallExpr* c) {
      if (isCopyName(calleeName(c))) return true;
      if (auto* op = dyn_cast<CXXOperatorCallExpr>(c)) {
        if ((op->isAssignmentOp() || op->getOperator() == OO_PlusPlus || op->getOperator() == OO_MinusMinus) &&
            baseVar(op->getArg(0)) == v)
          found = true;
        return !found;
      }
      if (auto* mc = dyn_cast<CXXMemberCallExpr>(c)) {
        auto* md = mc->getMethodDecl();
        if (md && !md->isConst() && baseVar(mc->getImplicitObjectArgument()) == v) found = true;
      }
      const FunctionDecl* fd = c->getDirectCallee();
      for (unsigned i = 0; i < c->getNumArgs() && !found; ++i) {
        if (baseVar(c->getArg(i)) != v) continue;
        QualType pt;
        if (fd && i < fd->getNumParams()) pt = fd->getParamDecl(i)->getType();
        if (pt.isNull()) {
          // Variadic or unknown: a pointer may be written through (scanf), a value is not.
          QualType at = c->getArg(i)->IgnoreParenImpCasts()->getType();
          if (at->isPointerType() || at->isArrayType()) found = true;
        } else if (pt->isPointerType() || pt->isReferenceType()) {
          if (!pt->getPointeeType().isConstQualified()) found = true;
        }
      }
      return !found;
    }
  } w;
  w.v = v;
  w.TraverseStmt(const_cast<Stmt*>(loopBody(loop)));
  return w.found;
}

// ---- the work of one iteration ----------------------------------------------------------------

namespace {
bool startsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

struct Walker {
  ASTContext& ctx;
  std::vector<HostEvent> events;
  std::vector<const CallExpr*> via;
  std::set<const FunctionDecl*> active;

  HostEvent::Kind classify(const CallExpr* c, std::string& name, bool& enter) {
    enter = false;
    if (isa<CUDAKernelCallExpr>(c)) {
      name = calleeName(c);
      return HostEvent::Launch;
    }
    const FunctionDecl* fd = c->getDirectCallee();
    name = calleeName(c);
    // A call through a function pointer may launch anything: count it as device work.
    if (!fd && !isa<CXXPseudoDestructorExpr>(c->getCallee()->IgnoreParenImpCasts()) && !c->isTypeDependent()) {
      name = "an indirect call";
      return HostEvent::Library;
    }
    static const std::set<std::string> launches = {"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cudaGraphLaunch",
                                                   "cuLaunchKernel", "cudaLaunchKernelEx"};
    static const std::set<std::string> syncs = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaThreadSynchronize",
                                                "cudaEventSynchronize"};
    static const std::set<std::string> allocs = {"cudaMalloc",      "cudaMallocHost",  "cudaHostAlloc",
                                                 "cudaMallocManaged", "cudaMallocPitch", "cudaMalloc3D",
                                                 "cudaMallocArray", "cudaMalloc3DArray", "cudaHostRegister"};
    static const std::set<std::string> frees = {"cudaFree", "cudaFreeHost", "cudaFreeArray", "cudaHostUnregister"};
    if (launches.count(name)) return HostEvent::Launch;
    if (isCopyName(name)) return HostEvent::Copy;
    if (syncs.count(name)) return HostEvent::Sync;
    if (allocs.count(name)) return HostEvent::Alloc;
    if (frees.count(name)) return HostEvent::Free;
    if (startsWith(name, "cudaMemset")) return HostEvent::Memset;
    std::string q = fd ? fd->getQualifiedNameAsString() : std::string();
    for (const char* p : {"cublas", "cufft", "cusparse", "cusolver", "curandGenerate", "nccl", "cudnn", "thrust::", "cub::",
                          "MPI_"})
      if (startsWith(name, p) || startsWith(q, p)) return HostEvent::Library;
    enter = fd && fd->getDefinition() && fd->getDefinition()->hasBody() && !fd->hasAttr<CUDAGlobalAttr>() &&
            !ctx.getSourceManager().isInSystemHeader(fd->getDefinition()->getLocation());
    return HostEvent::Call;
  }

  void walk(const Stmt* s, const Stmt* nested, bool cond, unsigned depth) {
    if (!s || isa<LambdaExpr>(s)) return;
    if (auto* i = dyn_cast<IfStmt>(s)) {
      walk(i->getInit(), nested, cond, depth);
      if (i->getConditionVariableDeclStmt()) walk(i->getConditionVariableDeclStmt(), nested, cond, depth);
      walk(i->getCond(), nested, cond, depth);
      walk(i->getThen(), nested, true, depth);
      walk(i->getElse(), nested, true, depth);
      return;
    }
    if (auto* sw = dyn_cast<SwitchStmt>(s)) {
      walk(sw->getCond(), nested, cond, depth);
      walk(sw->getBody(), nested, true, depth);
      return;
    }
    if (auto* c = dyn_cast<AbstractConditionalOperator>(s)) {
      walk(c->getCond(), nested, cond, depth);
      walk(c->getTrueExpr(), nested, true, depth);
      walk(c->getFalseExpr(), nested, true, depth);
      return;
    }
    if (auto* b = dyn_cast<BinaryOperator>(s); b && b->isLogicalOp()) {
      walk(b->getLHS(), nested, cond, depth);
      walk(b->getRHS(), nested, true, depth);
      return;
    }
    const Stmt* inner = nested;
    if (!inner && isLoop(s) && canRepeat(ctx, s)) inner = s;
    if (auto* k = dyn_cast<CUDAKernelCallExpr>(s)) {
      for (unsigned a = 0; a < k->getNumArgs(); ++a) walk(k->getArg(a), inner, cond, depth);
    } else {
      for (const Stmt* child : s->children()) walk(child, inner, cond, depth);
    }
    auto* call = dyn_cast<CallExpr>(s);
    if (!call || call->containsErrors()) return;
    HostEvent ev;
    bool enter = false;
    ev.kind = classify(call, ev.name, enter);
    if (ev.kind == HostEvent::Call) {
      const FunctionDecl* def = call->getDirectCallee() ? call->getDirectCallee()->getDefinition() : nullptr;
      if (enter && depth > 0 && def && active.insert(def).second) {
        via.push_back(call);
        walk(def->getBody(), inner, cond, depth - 1);
        via.pop_back();
        active.erase(def);
      }
      return;
    }
    ev.call = call;
    ev.via = via;
    ev.nestedLoop = inner;
    ev.conditional = cond;
    if (ev.kind == HostEvent::Copy) describeCopy(ctx, call, ev.copy);
    events.push_back(std::move(ev));
  }
};
}  // namespace

std::vector<HostEvent> iterationEvents(ASTContext& ctx, const Stmt* loop, unsigned depth) {
  Walker w{ctx, {}, {}, {}};
  w.walk(loopBody(loop), nullptr, false, depth);
  return w.events;
}

}  // namespace gpuopt::host
