// Host-code helpers: what a cudaMemcpy* call copies (describeCopy, copyBytes) and which stream a
// copy or launch uses (see host_util.h).
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

namespace {
// A constant, also through local variables whose function never changes them after their
// initialiser (`unsigned sz = 32 * sizeof(unsigned); cudaMemcpy(d, h, sz, ...)`), a few levels deep.
std::optional<int64_t> constThroughLocals(ASTContext& ctx, const Expr* e, int depth = 4) {
  if (auto v = constInt(ctx, e)) return v;
  if (!e || depth == 0) return std::nullopt;
  const auto* dre = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts());
  const auto* vd = dre ? dyn_cast<VarDecl>(dre->getDecl()) : nullptr;
  if (const Expr* init = fixedInit(ctx, vd)) return constThroughLocals(ctx, init, depth - 1);
  // size * sizeof(T) and the like, with a fixed local on either side.
  if (const auto* b = dyn_cast<BinaryOperator>(e->IgnoreParenImpCasts())) {
    if (b->getOpcode() != BO_Mul && b->getOpcode() != BO_Add) return std::nullopt;
    auto l = constThroughLocals(ctx, b->getLHS(), depth - 1), r = constThroughLocals(ctx, b->getRHS(), depth - 1);
    if (!l || !r) return std::nullopt;
    return b->getOpcode() == BO_Mul ? *l * *r : *l + *r;
  }
  return std::nullopt;
}
}  // namespace

std::optional<int64_t> copyBytes(ASTContext& ctx, const CopyInfo& c) {
  auto w = constThroughLocals(ctx, c.bytes);
  if (!w) return std::nullopt;
  if (!c.rows) return w;
  auto h = constThroughLocals(ctx, c.rows);
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

}  // namespace gpuopt::host
