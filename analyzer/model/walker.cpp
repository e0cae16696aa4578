// Statements and control flow of the kernel model: which threads run each statement, the
// branches they take and where they leave (see builder.h).
#include <clang/Basic/SourceManager.h>
#include <fmt/format.h>

#include "analyzer/model/builder.h"
#include "analyzer/model/coverage.h"

#include <algorithm>
#include <functional>
#include <regex>

namespace gpuopt::model_detail {

Builder::Builder(KernelModel& m, clang::ASTContext& ctx) : LaneDomain(m.threads()), m_(m), ctx_(ctx) {
  alive_.assign(N_, 1);
  warpEpoch_.assign(m.warps(), 0);
}

void Builder::run(const clang::FunctionDecl* k) {
  frames_.emplace_back();
  frames_.back().fn = k;
  for (const auto* p : k->parameters()) frames_.back().vars[p] = paramValue(p);
  walk(k->getBody());
  endGotos(frames_.back());
  frames_.pop_back();
}

bool Builder::budget() {
  if (++steps_ > kMaxSteps) {
    m_.truncated_ = true;
    return false;
  }
  return true;
}

std::string Builder::context() const {
  std::string s;
  for (const auto& c : ctxStack_)
    if (!c.empty()) s += (s.empty() ? "" : ", ") + c;
  return s;
}

void Builder::recordBranch(const clang::Stmt* s, const clang::Expr* cond, const Value& c, bool thenWork, bool elseWork, bool isLoop, const Mask* cont) {
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


void Builder::decided(const clang::Stmt* s) {
  if (!s || m_.truncated_) return;
  std::vector<const clang::Expr*> v;
  accessesIn(s, ctx_, v, /*calls=*/true);
  m_.decided_.insert(v.begin(), v.end());
}

namespace {
bool holds(const clang::Stmt* s, const clang::Stmt* target) {
  if (s == target) return true;
  for (const clang::Stmt* c : s->children())
    if (c && holds(c, target)) return true;
  return false;
}
}  // namespace

bool Builder::awaitsLabelIn(const clang::Stmt* s) const {
  if (frames_.empty()) return false;
  for (const auto& [label, waiting] : frames_.back().gotos)
    if (std::find(waiting.begin(), waiting.end(), 1) != waiting.end() && holds(s, label)) return true;
  return false;
}

void Builder::endGotos(Frame& f) {
  for (const auto& [label, waiting] : f.gotos)
    if (std::find(waiting.begin(), waiting.end(), 1) != waiting.end() && !m_.truncated_) {
      m_.truncated_ = true;
      m_.truncatedBy_ = fmt::format("the walk did not reach the label '{}' on line {} that a goto jumps to",
                                    label->getName(), ctx_.getSourceManager().getExpansionLineNumber(label->getBeginLoc()));
    }
  f.gotos.clear();
}

void Builder::walk(const clang::Stmt* s) {
  if (!s || m_.truncated_) return;
  // No thread runs it (under the shape walked), unless threads that jumped wait for a label in it.
  if (!anyActive() && (frames_.back().gotos.empty() || !awaitsLabelIn(s))) return decided(s);
  if (!budget()) return;
  if (auto* cs = llvm::dyn_cast<clang::CompoundStmt>(s)) {
    for (const auto* c : cs->body()) walk(c);
    return;
  }
  if (auto* ds = llvm::dyn_cast<clang::DeclStmt>(s)) {
    for (const auto* d : ds->decls()) {
      auto* vd = llvm::dyn_cast<clang::VarDecl>(d);
      if (!vd || vd->hasAttr<clang::CUDASharedAttr>() || vd->isStaticLocal()) continue;
      forgetLocal(vd);  // a per-thread array (re)declared: no element holds a value yet
      if (vd->getType()->isReferenceType()) {
        // `T& x = y`: bound to y's lvalue (a temporary: to a copy of its value).
        const clang::Expr* init = vd->hasInit() ? strip(vd->getInit()) : nullptr;
        if (init && init->isGLValue()) {
          LVal lv = evalLValue(init);
          if (lv.kind != LVal::None) frames_.back().refs[vd] = lv;
          else frames_.back().refs.erase(vd);
          continue;
        }
        LVal lv;
        lv.kind = LVal::Var;
        lv.var = vd;
        frames_.back().refs[vd] = lv;
        frames_.back().vars[vd] = init ? eval(init) : unknown();
        continue;
      }
      if (isObjectVar(vd)) {  // a per-thread object: constructed in place
        Value base = constant(0);
        base.isPtr = true, base.base = vd, base.baseName = vd->getNameAsString(), base.space = MemSpace::Local;
        if (vd->hasInit()) initObject(objectAt(base, vd->getType(), vd->getInit()), vd->getInit());
        frames_.back().vars[vd] = unknown();
        continue;
      }
      if (auto* ile = vd->hasInit() ? llvm::dyn_cast<clang::InitListExpr>(strip(vd->getInit())) : nullptr;
          ile && vd->getType()->isConstantArrayType()) {  // `float s[4] = {0.f}`: elements hold values
        Value base = constant(0);
        base.isPtr = true, base.base = vd, base.baseName = vd->getNameAsString(), base.space = MemSpace::Local;
        if (initLocalArray(objectAt(base, vd->getType(), vd->getInit()), ile)) {
          frames_.back().vars[vd] = unknown();
          continue;
        }
      }
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
    walkLoop(s, fs->getCond(), fs->getBody(), fs->getInc(), false);
    return gridSpinWait(s, fs->getCond());
  }
  if (auto* ws = llvm::dyn_cast<clang::WhileStmt>(s)) {
    walkLoop(s, ws->getCond(), ws->getBody(), nullptr, false);
    return gridSpinWait(s, ws->getCond());
  }
  if (auto* dos = llvm::dyn_cast<clang::DoStmt>(s)) {
    // `do { ... } while (0)` (macro bodies): the body once, not a loop; `break` still leaves it.
    bool again = true;
    if (!dos->getCond()->isValueDependent() && dos->getCond()->EvaluateAsBooleanCondition(again, ctx_) && !again) {
      Mask entry = active_;
      loops_.push_back({Mask(N_, 0), Mask(N_, 0)});
      walk(dos->getBody());
      dropResiduals(true);
      Mask out = loops_.back().broken, cont = loops_.back().continued;
      loops_.pop_back();
      Frame& f = frames_.back();
      for (unsigned t = 0; t < N_; ++t)
        active_[t] = (active_[t] || out[t] || cont[t]) && entry[t] && alive_[t] && (f.returned.empty() || !f.returned[t]);
      return;
    }
    walkLoop(s, dos->getCond(), dos->getBody(), nullptr, true);
    return gridSpinWait(s, dos->getCond());
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
    Frame& f0 = frames_.back();
    const bool refRet = frames_.size() > 1 && f0.fn && f0.fn->getReturnType()->isReferenceType() && rs->getRetValue();
    Value v = unknown();
    if (refRet) {
      // A reference returned: the lvalue (per thread, from every return that some thread takes).
      LVal lv = evalLValue(rs->getRetValue());
      Frame& f = frames_.back();
      if (!f.hasRetLVal) f.retLVal = lv, f.hasRetLVal = true;
      else if (lv.kind == LVal::Mem && f.retLVal.kind == LVal::Mem && lv.ptr.base == f.retLVal.ptr.base && lv.size == f.retLVal.size)
        assignMasked(f.retLVal.ptr, lv.ptr);
      else if (!(lv.kind == LVal::Var && f.retLVal.kind == LVal::Var && lv.var == f.retLVal.var))
        f.retLVal.kind = LVal::None;
    } else if (rs->getRetValue() && f0.hasRetSlot && rs->getRetValue()->getType()->isRecordType() && frames_.size() > 1) {
      LVal slot = f0.retSlot;  // (initObject may push frames: f0 is not used after it)
      initObject(slot, rs->getRetValue());
    } else if (rs->getRetValue()) {
      v = eval(rs->getRetValue());
    }
    Frame& f = frames_.back();
    if (frames_.size() == 1) {
      // Under a guard no thread passes, walked with every thread as a guess (approxMasks_), a
      // return ends the guessed path only: the threads did not leave the kernel.
      if (approxMasks_ == 0)
        for (unsigned t = 0; t < N_; ++t)
          if (active_[t]) alive_[t] = 0;
    } else {
      if (!f.hasRet) { f.ret = unknown(); f.ret.known = v.known; }
      // A thread that already returned: the paths of an undecided condition are both walked with
      // it, so it returns one value or the other (a hash lookup's loaded value or its "empty"
      // sentinel). Different values there: which one is data, not the last one walked.
      // (Under conditions every thread decides alike, `if (n <= 1) return 1;` with n a stand-in, each
      // thread gets the same one of them: one value for every thread, not known.)
      const bool byData = f.retByData || dataGuards_ > 0;
      f.retByData = byData;
      bool chosen = false;
      if (f.hasRet && !v.isPtr && !f.ret.isPtr)
        for (unsigned t = 0; t < N_ && !chosen; ++t)
          chosen = active_[t] && (f.returned[t] || (!f.maybeReturned.empty() && f.maybeReturned[t])) &&
                   laneNumber(f.ret, t) != laneNumber(v, t);
      if (chosen) {
        Value r = unknown();
        r.data = true;
        r.block = f.ret.block || v.block;
        if (!byData && uniformish(f.ret) && uniformish(v)) r.same = true, r.data = f.ret.data || v.data;
        f.ret = std::move(r);
      } else {
        assignMasked(f.ret, v);
      }
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
  if (auto* ls = llvm::dyn_cast<clang::LabelStmt>(s)) {
    // Threads that jumped here join the ones that got here in order.
    Frame& f = frames_.back();
    if (auto g = f.gotos.find(ls); g != f.gotos.end()) {
      for (unsigned t = 0; t < N_; ++t)
        if (g->second[t] && alive_[t] && (f.returned.empty() || !f.returned[t])) active_[t] = 1;
      f.gotos.erase(g);
    }
    return walk(ls->getSubStmt());
  }
  if (auto* as = llvm::dyn_cast<clang::AttributedStmt>(s)) return walk(as->getSubStmt());
  if (auto* gs = llvm::dyn_cast<clang::GotoStmt>(s)) {
    // A forward jump within the function being walked (`goto end_lane;`, `goto done;`): the threads
    // taking it skip to the label and go on from there. A jump backwards (a loop made of gotos)
    // is not followed: the walk stops, and says so.
    auto& sm = ctx_.getSourceManager();
    const clang::LabelStmt* target = gs->getLabel() ? gs->getLabel()->getStmt() : nullptr;
    Frame& f = frames_.back();
    const clang::Stmt* body = f.fn ? f.fn->getBody() : nullptr;
    if (target && body && sm.isBeforeInTranslationUnit(sm.getExpansionLoc(gs->getBeginLoc()), sm.getExpansionLoc(target->getBeginLoc())) &&
        holds(body, target)) {
      Mask& m = f.gotos[target];
      if (m.empty()) m.assign(N_, 0);
      for (unsigned t = 0; t < N_; ++t)
        if (active_[t]) m[t] = 1;
      std::fill(active_.begin(), active_.end(), 0);
      return;
    }
    m_.truncated_ = true;
    m_.truncatedBy_ = fmt::format("the walk stopped at the goto on line {} (the model follows forward jumps only)",
                                  ctx_.getSourceManager().getExpansionLineNumber(s->getBeginLoc()));
    return;
  }
  if (auto* asmS = llvm::dyn_cast<clang::GCCAsmStmt>(s)) return walkAsm(asmS);
  if (auto* e = llvm::dyn_cast<clang::Expr>(s)) {
    // A call returning a reference, as a statement (`seed[i] = mySeed;` with the struct's
    // operator=): its value is discarded, so the lvalue it returns is not read (a read of every
    // thread's slot after the store would race with the other threads' stores: HeCBench logan).
    const clang::Expr* x = e->IgnoreParens();
    if (auto* ewc = llvm::dyn_cast<clang::ExprWithCleanups>(x)) x = ewc->getSubExpr()->IgnoreParens();
    if (x->isGLValue() && llvm::isa<clang::CallExpr>(x)) {
      lastRetCall_ = nullptr;
      evalCallLike(x);
      lastRetCall_ = nullptr;
      return;
    }
    eval(e);
    return;
  }
}

// Inline PTX (`asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x))`): each output is unknown, but
// numbered from the instruction text and the inputs' numbers, so threads running it on equal inputs
// hold equal outputs. A read of the lane, a lane mask or a thread, block or size register is its
// value (below). Not for other text reading special registers (`%%clock`, `%%warpid`: per moment, per
// hardware slot) or touching memory (`ld`, `st`, `atom`, a "memory" clobber): those outputs get no
// number.
void Builder::walkAsm(const clang::GCCAsmStmt* as) {
  std::vector<Value> ins;
  for (unsigned i = 0; i < as->getNumInputs(); ++i) ins.push_back(eval(as->getInputExpr(i)));
  // Memory it touches: an access where the model reads the instruction and its address (asmAccess),
  // else named by the coverage as not evaluated (KernelModel::coverage).
  const AsmMemory mem = asmMemory(as);
  bool loaded = false;
  if (mem.address && anyActive()) {
    m_.reached_.insert(mem.address);
    if (!(mem.modelled && asmAccess(as, mem, ins))) m_.unmodelled_.emplace(mem.address, "inline PTX '" + mem.instruction + "'");
    else loaded = mem.read;
  }
  std::string text = as->getAsmString();
  // A barrier written in PTX: `bar.warp.sync %0;` (what __syncwarp(mask) compiles to: xmrig's
  // RandomX VM, tenth stop check) orders the warp; `bar.sync 0;` / `barrier.sync 0;` (named barrier
  // 0 with no thread count: __syncthreads) the block. A named barrier with a count syncs some warps
  // only and is left alone.
  {
    llvm::StringRef t = llvm::StringRef(text).trim();
    t.consume_back(";");
    t = t.trim();
    if (t.starts_with("bar.warp.sync ")) {
      barrier(as->getAsmStringExpr(), false, "bar.warp.sync (inline PTX)");
      return;
    }
    if (t == "bar.sync 0" || t == "barrier.sync 0" || t == "bar.sync 0x0" || t == "barrier.sync.aligned 0") {
      barrier(as->getAsmStringExpr(), true, "bar.sync 0 (inline PTX)");
      return;
    }
  }
  // The shared-window address of a generic pointer (`cvta.to.shared.u64`, CUTLASS's
  // cast_smem_ptr_to_uint): the pointer, counted in bytes, as __cvta_generic_to_shared gives it.
  if (as->getNumOutputs() == 1 && ins.size() == 1 && ins[0].isPtr && ins[0].space == MemSpace::Shared &&
      text.find("cvta.to.shared") != std::string::npos && !mem.address) {
    Value p = ins[0];
    p.pointee = 1;
    writeLVal(evalLValue(as->getOutputExpr(0)), p);
    return;
  }
  bool pure = text.find("%%") == std::string::npos && text.find("ld.") == std::string::npos &&
              text.find("st.") == std::string::npos && text.find("atom") == std::string::npos &&
              text.find("red.") == std::string::npos;
  for (unsigned i = 0; i < as->getNumClobbers(); ++i)
    if (as->getClobber(i) == "memory") pure = false;
  // A warp shuffle in PTX (`shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;`, a library's
  // wrapper of __shfl_xor_sync): the source lane's value, as the intrinsic.
  if (text.rfind("shfl.sync.", 0) == 0 && as->getNumOutputs() == 1 && ins.size() == 2) {
    static const std::pair<const char*, const char*> kinds[] = {{"shfl.sync.bfly.b32", "__shfl_xor_sync"},
                                                                 {"shfl.sync.down.b32", "__shfl_down_sync"},
                                                                 {"shfl.sync.up.b32", "__shfl_up_sync"},
                                                                 {"shfl.sync.idx.b32", "__shfl_sync"}};
    std::string ops;  // the operands without blanks
    for (char ch : text.substr(text.find(' ') == std::string::npos ? text.size() : text.find(' ')))
      if (!isspace(static_cast<unsigned char>(ch))) ops += ch;
    const bool up = text.rfind("shfl.sync.up.", 0) == 0;
    const bool fullWarp = ops.rfind(up ? "%0,%1,%2,0x0," : "%0,%1,%2,0x1f,", 0) == 0 ||
                          ops.rfind(up ? "%0,%1,%2,0," : "%0,%1,%2,31,", 0) == 0;
    for (const auto& [ptx, intrinsic] : kinds)
      if (fullWarp && text.rfind(ptx, 0) == 0) {
        Value r = shuffled(intrinsic, {constant(-1), ins[0], ins[1]});
        r.data = ins[0].data || ins[1].data;
        writeLVal(evalLValue(as->getOutputExpr(0)), r);
        return;
      }
  }
  // A special register read into a variable (`mov.u32 %0, %%laneid;`, a library's lane_id()): the
  // lane, a lane mask, the thread's or block's index or the block's size, as the built-ins give them.
  if (as->getNumOutputs() == 1 && ins.empty()) {
    static const std::regex kSpecial(R"(^\s*mov\.(u32|s32|b32)\s+%0\s*,\s*%%(laneid|lanemask_(lt|le|eq|gt|ge)|n?tid\.[xyz]|ctaid\.[xyz])\s*;?\s*$)");
    std::smatch m;
    if (std::regex_match(text, m, kSpecial)) {
      const std::string reg = m[2].str();
      const clang::Expr* out = as->getOutputExpr(0);
      const bool signed32 = out->getType()->isSignedIntegerType() && ctx_.getTypeSize(out->getType()) == 32;
      Value r = constant(0);
      const int axis = reg.back() - 'x';
      if (reg.rfind("ctaid.", 0) == 0) {
        r = blockIndex(axis);
      } else if (reg.rfind("ntid.", 0) == 0) {
        r = constant(axis == 0 ? m_.bx_ : axis == 1 ? m_.by_ : m_.bz_);
      } else if (reg.rfind("tid.", 0) == 0) {
        m_.threadAxes_[axis] = true;
        for (unsigned t = 0; t < N_; ++t) r.v[t] = axis == 0 ? m_.tx(t) : axis == 1 ? m_.ty(t) : m_.tz(t);
      } else {
        for (unsigned t = 0; t < N_; ++t) {
          const uint32_t lane = t % 32, below = lane ? (uint32_t(1) << lane) - 1 : 0u, bit = uint32_t(1) << lane;
          uint32_t x = lane;
          if (reg == "lanemask_lt") x = below;
          else if (reg == "lanemask_le") x = below | bit;
          else if (reg == "lanemask_eq") x = bit;
          else if (reg == "lanemask_gt") x = ~(below | bit);
          else if (reg == "lanemask_ge") x = ~below;
          r.v[t] = signed32 ? static_cast<int64_t>(static_cast<int32_t>(x)) : static_cast<int64_t>(x);
        }
      }
      writeLVal(evalLValue(out), r);
      return;
    }
  }
  std::vector<const Value*> ops;
  for (const auto& v : ins) ops.push_back(&v);
  const uint64_t what = mix(0x41534dull, std::hash<std::string>{}(text));  // "ASM"
  for (unsigned i = 0; i < as->getNumOutputs(); ++i) {
    LVal lv = evalLValue(as->getOutputExpr(i));
    Value r = unknown();
    for (const auto& v : ins) r.data = r.data || v.data, r.block = r.block || v.block;
    r.data = r.data || loaded;  // what a load from memory gives is data
    if (pure) number(r, mix(what, i), ops);
    writeLVal(lv, r);
  }
}

// One memory instruction of inline PTX (AsmMemory): its accesses, at the addresses its operands
// hold, when each is a pointer the model follows into the space the instruction names. False when
// one is not (an address computed from data, a shared-window integer the model did not see made).
bool Builder::asmAccess(const clang::GCCAsmStmt* as, const AsmMemory& mem, const std::vector<Value>& ins) {
  const unsigned outs = as->getNumOutputs();
  auto pointer = [&](const AsmMemory::Operand& o, char space, const clang::Expr*& e, Value& p) {
    if (o.index < static_cast<int>(outs) || o.index - outs >= ins.size()) return false;
    e = as->getInputExpr(o.index - outs);
    p = ins[o.index - outs];
    if (!p.isPtr) return false;
    const MemSpace want = space == 'g' ? MemSpace::Global : space == 's' ? MemSpace::Shared : MemSpace::Unknown;
    if (space ? p.space != want : p.space != MemSpace::Global && p.space != MemSpace::Shared) return false;
    if (o.offset) {
      p.pointee = 1;
      p = arith(clang::BO_Add, p, constant(o.offset), e->getType(), nullptr, nullptr);
    }
    return true;
  };
  unsigned bytes = mem.bytes;
  if (mem.sizeOperand >= 0) {  // cp.async's size as an "n" operand
    const int n = mem.sizeOperand - static_cast<int>(outs);
    clang::Expr::EvalResult r;
    if (n < 0 || n >= static_cast<int>(as->getNumInputs()) || as->getInputExpr(n)->isValueDependent() ||
        !as->getInputExpr(n)->EvaluateAsInt(r, ctx_))
      return false;
    bytes = static_cast<unsigned>(r.Val.getInt().getExtValue());
  }
  if (bytes == 0 || bytes > 16) return false;
  const clang::Expr* dstE = nullptr;
  const clang::Expr* srcE = nullptr;
  Value dst, src;
  if (!pointer(mem.dst, mem.space, dstE, dst)) return false;
  if (mem.src.index >= 0 && !pointer(mem.src, 'g', srcE, src)) return false;
  // ldmatrix .x1 / .x2 use the row addresses of lanes 0-7 / 0-15 only.
  const Mask saved = active_;
  if (mem.lanes < 32)
    for (unsigned t = 0; t < N_; ++t)
      if (t % 32 >= mem.lanes) active_[t] = 0;
  auto record = [&](const Value& p, const clang::Expr* e, bool read, bool write) {
    LVal lv = pointeeOf(p, e);
    lv.size = bytes;
    lv.isVolatile = mem.isVolatile && !srcE;  // cp.async.cg: L2 only, but no ordering of its own
    const size_t before = m_.accesses_.size();
    recordAccess(lv, read, write, mem.atomic, nullptr);
    if (m_.accesses_.size() > before) m_.accesses_.back().instruction = mem.instruction;
  };
  if (srcE) record(src, srcE, true, false);  // cp.async: the global load, then the shared store
  record(dst, dstE, mem.read, mem.write);
  active_ = saved;
  return true;
}

void Builder::gridSpinWait(const clang::Stmt* loop, const clang::Expr* cond) {
  if (!cond || frames_.empty() || !spinWaitsForGrid(loop, frames_.back().fn)) return;
  Barrier b;
  b.call = cond;
  b.blockLevel = false;  // not a __syncthreads(): the block's threads are ordered by the barriers around it
  b.gridLevel = true;
  b.name = "a spin-wait for the other blocks";
  b.active = active_;
  b.alive = alive_;
  b.seq = seq_++;
  b.context = context();
  m_.barriers_.push_back(std::move(b));
}

void Builder::walkLoop(const clang::Stmt* s, const clang::Expr* cond, const clang::Stmt* body, const clang::Expr* inc, bool isDo) {
  const clang::VarDecl* lv = loopVar_;
  loopVar_ = nullptr;
  const unsigned outerRuntimeIter = runtimeIter_;
  const unsigned outerLaterIterLine = laterIterLine_;
  loops_.push_back({Mask(N_, 0), Mask(N_, 0)});
  ++loopDepth_;
  ctxStack_.emplace_back();
  Mask entry = active_;
  bool work = doesRealWork(body);
  unsigned iter = 0;
  bool symbolicCond = false, launchArgCond = false, countedRuntime = false;
  bool variant = false;  // other blocks run other iterations (a trip count depending on blockIdx)
  bool approx = false;   // walked with threads the bound let none of in (a guess)
  bool capped = false;   // stopped by the walk's iteration limit, not by every thread leaving
  bool cut = false;      // stopped by the work bound (kMaxLoopWalks)
  const size_t firstBranch = m_.branches_.size();
  auto noteCond = [&](const Value& c) {
    if (!variant && blockVariant(c)) {
      variant = true;
      // A jump in the body (a return, or conservatively any break/continue) may change who runs
      // the code after the loop.
      enterBlockVariant(true, body);
    }
  };
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
      noteCond(c);
      if (!c.known || c.symbolic) symbolicCond = true;
      if (c.launchArg) launchArgCond = true;
      Mask cont(N_, 0);
      for (unsigned t = 0; t < N_; ++t) cont[t] = active_[t] && (!c.known || c.v[t] != 0);
      // A bound over representative symbol values (`i < n` with blockIdx and n stand-ins) that no
      // thread passes on entry must not hide the body: walk one iteration with every thread.
      if (iter == 0 && c.known && c.symbolic && std::find(cont.begin(), cont.end(), 1) == cont.end()) {
        cont = active_;
        if (!approx) approx = true, ++approxMasks_;
      }
      recordBranch(s, cond, c, work, false, true, &cont);
      active_ = cont;
      if (!anyActive()) {
        if (iter == 0) decided(body);  // no thread enters it
        break;
      }
    }
    unsigned cap = symbolicCond ? kSymbolicIters : kMaxConcreteIters;
    if (iter >= cap || (iter > 0 && loopWalks_ >= kMaxLoopWalks)) {
      capped = true;
      cut = iter < cap;
      break;
    }
    ++loopWalks_;
    // A loop without a constant trip count (or none found): not unrolled by the compiler.
    // (A bound every launch gives is still a run-time value for the compiler.)
    if ((symbolicCond || launchArgCond || !cond) && !countedRuntime) ++runtimeLoops_, countedRuntime = true;
    if (countedRuntime) runtimeIter_ = ++runtimeIters_;
    // Past the first iteration of a loop whose trip count is a run-time value: this iteration runs
    // only for some of those values.
    if (iter >= 1 && symbolicCond)
      laterIterLine_ = ctx_.getSourceManager().getExpansionLineNumber(s->getBeginLoc());
    walk(body);
    dropResiduals(true);  // a break or continue that may have happened ends with the iteration
    // Threads that hit `continue` take the increment too.
    for (unsigned t = 0; t < N_; ++t)
      if (loops_.back().continued[t]) active_[t] = 1, loops_.back().continued[t] = 0;
    if (inc && anyActive()) eval(inc);
    if (isDo && cond && anyActive()) {
      Value c = eval(cond);
      noteCond(c);
      if (!c.known || c.symbolic) symbolicCond = true;
      Mask cont(N_, 0);
      for (unsigned t = 0; t < N_; ++t) cont[t] = active_[t] && (!c.known || c.v[t] != 0);
      recordBranch(s, cond, c, work, false, true, &cont);
      active_ = cont;
    }
    ++iter;
    if (iter >= (symbolicCond ? kSymbolicIters : kMaxConcreteIters)) {
      capped = anyActive();
      break;
    }
  }
  // Every thread left on its own: the most iterations any thread ran this time (a loop each thread
  // runs at most once is a guard).
  if (!capped && !m_.truncated_)
    for (size_t i = firstBranch; i < m_.branches_.size(); ++i)
      if (m_.branches_[i].stmt == s && m_.branches_[i].maxTrips == 0) m_.branches_[i].maxTrips = iter;
  if (countedRuntime) --runtimeLoops_;
  runtimeIter_ = outerRuntimeIter;
  laterIterLine_ = outerLaterIterLine;
  leaveBlockVariant(variant);
  approxMasks_ -= approx;
  ctxStack_.pop_back();
  --loopDepth_;
  const bool symbolicSkip = loops_.back().symbolicSkip;
  loops_.pop_back();
  // Variables the body assigns, after a body whose rest was skipped on a guess (`cw++` after such
  // a `continue`): their values are guesses too (symbolic), so a condition on them (`if (cw)`)
  // does not hide what it guards (HeCBench word2vec: the barriers under `if (cw)`). The same after
  // a loop the work bound cut: the iterations not walked would have assigned them. And after a
  // loop the iteration limit stopped while its condition, over a stand-in, still held (`while (p <
  // n) p <<= 1;` with n a parameter's stand-in): p's value there is the limit's, not the code's.
  if (cut && m_.loopCuts_++ == 0) m_.firstLoopCut_ = s->getBeginLoc();
  // Such a value is a stand-in like a parameter's (`param`, named by the variable): a race that
  // depends on it is a possible one. An integer the whole block holds alike takes a parameter's
  // representative value too (kParamRep): the count where the walk stopped (2 after `while (n <
  // 64 && f[n] > 0) ++n;`) is no bound the code gives, and a later `for (b = threadIdx.x; b < n;
  // ...)` must not run with 2 lanes as if the program said so.
  const bool cappedOnStandIn = capped && !cut && symbolicCond;
  if (symbolicSkip || cut || cappedOnStandIn) {
    for (const clang::VarDecl* vd : assignedVars(body))
      for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
        if (auto f = it->vars.find(vd); f != it->vars.end()) {
          Value& x = f->second;
          if (x.known) x.symbolic = true;
          if (x.known && cappedOnStandIn && !x.param) {
            x.param = true, x.paramSrc = vd;
            x.paramLanes = x.paramLanes || varying(x);
            if (!x.isPtr && vd->getType()->isIntegralOrEnumerationType() && !varying(x) &&
                ctx_.getTypeSize(vd->getType()) >= 32)
              std::fill(x.v.begin(), x.v.end(), kParamRep);
          }
          break;
        }
  }
  // After the loop: every thread that entered and has neither returned nor exited.
  Frame& f = frames_.back();
  for (unsigned t = 0; t < N_; ++t)
    active_[t] = entry[t] && alive_[t] && (f.returned.empty() || !f.returned[t]);
}

void Builder::walkSwitch(const clang::SwitchStmt* ss) {
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
    b.thenWork = b.elseWork = switchArmsWork(ss, ctx_);
    b.context = context();
    b.path.assign(N_, 0);
    for (unsigned t = 0; t < N_; ++t) b.path[t] = target[t] + 1;
    if (anyActive()) m_.branches_.push_back(std::move(b));
  }
  if (!body) return;
  loops_.push_back({Mask(N_, 0), Mask(N_, 0)});  // `break` leaves the switch
  if (!c.known) guards_.push_back(ctx_.getSourceManager().getExpansionLineNumber(ss->getCond()->getBeginLoc()));
  const bool dataGuard = !c.known && !uniformish(c);
  dataGuards_ += dataGuard;
  bool variant = blockVariant(c);
  enterBlockVariant(variant, body);
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
  dataGuards_ -= dataGuard;
  leaveBlockVariant(variant);
  dropResiduals(true);
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
bool Builder::uniformByForm(const clang::Expr* e) const {
  if (!e) return false;
  e = e->IgnoreParenImpCasts();
  if (auto* po = llvm::dyn_cast<clang::PseudoObjectExpr>(e)) {
    auto* syn = llvm::dyn_cast<clang::MSPropertyRefExpr>(strip(po->getSyntacticForm()));
    auto* base = syn ? llvm::dyn_cast<clang::DeclRefExpr>(strip(syn->getBaseExpr())) : nullptr;
    if (!base) return false;
    std::string var = base->getDecl()->getNameAsString();
    return var == "blockIdx" || var == "gridDim" || var == "blockDim";
  }
  if (auto* dre = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (llvm::isa<clang::EnumConstantDecl>(dre->getDecl())) return true;
    auto* vd = llvm::dyn_cast<clang::VarDecl>(dre->getDecl());
    if (!vd) return false;
    if (!vd->hasLocalStorage()) return vd->getType().isConstQualified();  // a constant global
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
      if (auto f = it->vars.find(vd); f != it->vars.end()) return f->second.known && !varying(f->second);
    return false;
  }
  if (llvm::isa<clang::IntegerLiteral, clang::CharacterLiteral, clang::CXXBoolLiteralExpr, clang::FloatingLiteral>(e))
    return true;
  if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e))
    return !b->isAssignmentOp() && uniformByForm(b->getLHS()) && uniformByForm(b->getRHS());
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e))
    return (u->getOpcode() == clang::UO_Minus || u->getOpcode() == clang::UO_Not || u->getOpcode() == clang::UO_LNot ||
            u->getOpcode() == clang::UO_Plus) &&
           uniformByForm(u->getSubExpr());
  if (auto* co = llvm::dyn_cast<clang::ConditionalOperator>(e))
    return uniformByForm(co->getCond()) && uniformByForm(co->getTrueExpr()) && uniformByForm(co->getFalseExpr());
  if (auto* ce = llvm::dyn_cast<clang::CastExpr>(e)) return uniformByForm(ce->getSubExpr());
  return false;
}

}  // namespace gpuopt::model_detail
