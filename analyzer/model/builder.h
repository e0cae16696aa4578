// The kernel model's builder (private to analyzer/model): one walk of a kernel over every thread
// of a block. Like Clang's Sema, one class whose methods live in several files by what they do:
//   expressions.cpp  expressions: constants, parameters, built-in variables, members of values, casts
//   operators.cpp    operators: arithmetic per lane, bounds from comparisons, binary/unary/conditional
//   lvalues.cpp      lvalues, per-thread objects (construction, copies), variables
//   memory.cpp       memory reads and writes, per-thread arrays and objects, the Access records
//   calls.cpp        calls: inlining __device__ functions, member and operator calls, atomics, library calls
//   intrinsics.cpp   barriers, cooperative-groups methods, warp votes, group reductions, shuffles
//   walker.cpp       statements and control flow: if/switch/loops/return/break, active masks, branches
// The per-thread value domain it computes in is analyzer/model/value.h (LaneDomain).
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/Stmt.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/model/kernel_model.h"
#include "analyzer/model/ast_util.h"
#include "analyzer/model/value.h"

namespace gpuopt::model_detail {

// Representative values of uniform symbols and the walk's limits.
constexpr int64_t kParamRep = int64_t(1) << 12;  // representative value of an integer parameter
constexpr int64_t kBlockIdxRep = 2;
constexpr int64_t kGridDimRep = 64;
constexpr unsigned kMaxConcreteIters = 64;
constexpr unsigned kSymbolicIters = 2;
constexpr size_t kMaxSteps = 400000;
// The work bound on loops (issue 33): loop bodies walked per kernel, all loops together. Past it,
// each loop walks its first iteration only (every statement is still seen) and what the iterations
// not walked would assign becomes a guess (Value::symbolic); KernelModel::loopCuts() says so.
constexpr unsigned kMaxLoopWalks = 4096;
// Calls followed inside one another. Header-only libraries nest deep: moderngpu's launch box calls
// the kernel's lambda, which calls a CTA collective, an iterate<> template, a lambda, an operator
// and a shuffle (9 to 12 deep; with 8, 64% of its accesses were not reached, eleventh stop check).
constexpr int kMaxInlineDepth = 16;

class Builder : public LaneDomain {
 public:
  Builder(KernelModel& m, clang::ASTContext& ctx);
  // Walks the kernel's body, recording accesses, branches and barriers into the model.
  void run(const clang::FunctionDecl* k);
  // Whether blockIdx values carry their values in other blocks (ModelOptions::blockSteps).
  void setBlockSteps(bool on) { blockSteps_ = on; }
  // gridDim along an axis: the launch's when known and large enough to hold the representative
  // blocks (blockIdx kBlockIdxRep and the blocks after it), else kGridDimRep; a uniform symbol
  // either way (another launch may use another grid).
  int64_t gridRep(int axis) const {
    int64_t g = m_.gridDim(axis);
    return g > kBlockIdxRep + 2 ? g : kGridDimRep;
  }

 private:
  struct LoopState {
    Mask broken, continued;
    // A `continue` or `break` taken on a condition over representative symbol values: the rest
    // of the body was skipped by a guess, so what it assigns is a guess too after the loop.
    bool symbolicSkip = false;
  };
  struct LVal {
    enum Kind { None, Var, Mem } kind = None;
    const clang::VarDecl* var = nullptr;
    Value ptr;
    unsigned size = 0;
    bool isVolatile = false;
    const clang::Expr* expr = nullptr;
    // Per thread: the index is past the bound of the constant array it subscripts (the outermost
    // dimension of a variable or member: `s.refIdx[i]`, i >= 256), empty when no thread's is.
    std::vector<uint8_t> outside;
  };

  struct Frame {
    const clang::FunctionDecl* fn = nullptr;
    const clang::Expr* call = nullptr;  // the call that inlined it (none for the kernel)
    std::map<const clang::VarDecl*, Value> vars;
    Mask returned;
    // Threads that returned on a path of a condition the model could not decide: they go on (the
    // other path did not return), and a later return of theirs gives one value or the other.
    Mask maybeReturned;
    // Threads that took a forward `goto` and wait for its label (`goto end_lane;` to the empty
    // statement ending a loop body): inactive until the walk reaches the label, then back.
    std::map<const clang::LabelStmt*, Mask> gotos;
    Value ret;
    bool hasRet = false;
    // A return happened under a condition lanes may decide differently (dataGuards_): values
    // returned on different paths are then a per-thread choice.
    bool retByData = false;
    // The object a method or constructor runs on (`this`), when the model followed it.
    Value thisPtr;
    bool hasThis = false;
    // `this` is a lambda's closure held by value in a kernel parameter (moderngpu's and Thrust's
    // launch of a functor: `f(threadIdx.x, blockIdx.x)`), or one of its captured closures: its
    // fields are the kernel's arguments, the same for every thread (this parameter's).
    const clang::ParmVarDecl* uniformThis = nullptr;
    // This function's closure parameters bound to such a closure: the kernel parameter holding it.
    std::map<const clang::ParmVarDecl*, const clang::ParmVarDecl*> uniformParams;
    // References (parameters and `T& x = y` locals): the lvalue each is bound to.
    std::map<const clang::VarDecl*, LVal> refs;
    // Pointer parameters given the address of a caller's scalar variable (`split(i, &row, &col)`)
    // and only dereferenced in the body (`*col = i % n`): the variable each `*p` names.
    std::map<const clang::VarDecl*, LVal> pointees;
    // A function returning a reference: the lvalue it returns (a member, `*this`, an element).
    LVal retLVal;
    bool hasRetLVal = false;
    // A function returning a record by value into a per-thread object of the caller's (`range_t
    // tile = get_tile(cta, nv, count)`): its returns initialise that object field by field.
    LVal retSlot;
    bool hasRetSlot = false;
  };
  // ---- values (expressions.cpp) ----
  // Whether a condition is the same for every thread of the block by its form: block indices,
  // grid and block sizes, constants, globals and locals whose current value every active thread
  // shares; no thread index, load or call (walker.cpp).
  bool uniformByForm(const clang::Expr* e) const;
  void normalize(Value& v, clang::QualType t) const;
  // A pointer stored into a variable of another pointer type takes that type's pointee: `volatile
  // int* vs = sdata;` reads and writes volatile (the qualifying conversion is a no-op cast that
  // strip() looks through).
  void retype(Value& v, clang::QualType t) const;
  Value paramValue(const clang::ParmVarDecl* p);

  // ---- steps (walker.cpp) ----
  bool budget();
  std::string context() const;

  // ---- expressions (expressions.cpp, operators.cpp; helpers of memory.cpp, intrinsics.cpp) ----
  Value eval(const clang::Expr* e);
  Value dataOf(Value v);
  // threadIdx.x and friends (MSPropertyRefExpr inside a PseudoObjectExpr).
  Value builtinVar(const clang::PseudoObjectExpr* po);
  // blockIdx.x/y/z (or a group's group_index()): the representative value and, in Value::alt,
  // its values in the other blocks the walk follows.
  void numberAddress(Value& r, const Value& ptr, const Value& idx) const;
  void keepAffine(clang::BinaryOperatorKind op, const Value& a, const Value& b, Value& r) const;
  template <typename F>
  void mapAffine(const Value& x, Value& r, F f) const;
  void keepStepBound(clang::BinaryOperatorKind op, const Value& a, const Value& b, Value& r) const;
  bool sameInEachWarp(const Value& x) const;
  Value groupReduced(const clang::Expr* call, const Value& v, unsigned size) const;
  Value voted(const std::string& name, const Value& pred) const;
  Value shuffled(const std::string& name, const std::vector<Value>& args, const clang::Expr* call = nullptr) const;
  int64_t shuffleWidth(const Value* width) const;
  Value shuffledFromUnknownLane(const Value& val, const Value& sel, const Value* width, const clang::Expr* call) const;
  const int64_t* localAddress(const LVal& lv) const;
  void storeLocal(const LVal& lv, const Value& v);
  void forgetLocal(const clang::ValueDecl* base);
  void boundUnknown(clang::BinaryOperatorKind op, const Value& a, const Value& b, Value& r) const;
  void walkAsm(const clang::GCCAsmStmt* as);
  bool asmAccess(const clang::GCCAsmStmt* as, const AsmMemory& mem, const std::vector<Value>& ins);
  Value blockIndex(int axis) const;
  Value evalMemberOfValue(const clang::MemberExpr* me);
  const clang::ParmVarDecl* uniformClosure(const clang::Expr* obj) const;
  const clang::FieldDecl* uniformCaptureField(const clang::DeclRefExpr* dre) const;
  Value uniformCaptureValue(const clang::DeclRefExpr* dre);
  // `g.thread_index().x`, `g.group_index().y`, `g.group_dim().z` of a cooperative group, else none.
  std::optional<Value> groupDimMember(const clang::MemberExpr* me);
  Value evalCast(const clang::CastExpr* ce);
  Value decay(const LVal& lv);
  Value arith(clang::BinaryOperatorKind op, const Value& a, const Value& b, clang::QualType type, const clang::Expr* lhsE, const clang::Expr* rhsE);
  std::string text(const clang::Expr* e) const;
  std::string strideText(const clang::Expr* e) const;  // operators.cpp
  Value evalBinary(const clang::BinaryOperator* bo);
  bool casWinner(const clang::Expr* callE, const clang::Expr* otherE, size_t accessesBefore) const;
  void selectionsOf(const clang::BinaryOperator* bo, const Value& a, const Value& b, size_t accessesBefore);
  Value evalAssign(const clang::BinaryOperator* bo);
  Value evalUnary(const clang::UnaryOperator* uo);
  Value evalConditional(const clang::AbstractConditionalOperator* co);

  // ---- objects (per-thread structs: Local-space memory, lvalues.cpp) ----
  // A per-thread variable or parameter of record type (not a cooperative group): a Local object
  // whose members are Mem lvalues at their offsets, kept by storeLocal with their numbers.
  bool isObjectVar(const clang::VarDecl* vd) const;
  // Runs a constructor (or a copy) into the object `dst`.
  void construct(const LVal& dst, const clang::CXXConstructExpr* cce);
  // A temporary a constructor with a body of the project's builds (`out[i] = box(a, b)`): its own
  // per-thread object (a synthetic local variable per expression), or null when the constructor is
  // a library's, trivial or has no body here.
  bool userConstructed(const clang::CXXConstructExpr* cce) const;
  LVal temporaryObject(const clang::CXXConstructExpr* cce);
  std::map<const clang::Expr*, const clang::VarDecl*> temporaries_;
  // Copies the object `src` denotes into `dst` (a trivial copy or assignment): a recorded write of
  // the value read; per-thread slots copied member by member.
  Value copyObject(const LVal& dst, const clang::Expr* src);
  // Initializes the object `dst` from `init` (a declaration's or parameter's initializer).
  void initObject(const LVal& dst, const clang::Expr* init);
  bool initLocalArray(const LVal& dst, const clang::InitListExpr* ile);
  LVal objectAt(const Value& ptr, clang::QualType t, const clang::Expr* e) const;
  // The element a call's pointer argument `p` points at, as the call `e` touches it (an atomic, a
  // cache-hinted load or store): the pointee's size.
  LVal pointeeOf(const Value& p, const clang::Expr* e) const;

  // ---- lvalues and memory (lvalues.cpp, memory.cpp) ----
  LVal evalLValue(const clang::Expr* e);
  Value readVar(const clang::VarDecl* vd);
  void writeVar(const clang::VarDecl* vd, const Value& v);
  void writeLVal(const LVal& lv, const Value& v);
  Value readMem(const LVal& lv);
  Value readLocalPart(const LVal& lv, int64_t addr);
  void recordAccess(const LVal& lv, bool read, bool write, bool atomic, const Value* stored);

  // ---- calls, intrinsics, cooperative groups (calls.cpp, intrinsics.cpp) ----
  void barrier(const clang::Expr* call, bool block, std::string name, bool grid = false);
  Value evalMemberCall(const clang::CXXMemberCallExpr* mce);
  void forgetOutputs(const clang::FunctionDecl* fd, llvm::ArrayRef<const clang::Expr*> args, llvm::ArrayRef<Value> values);
  // A cooperative-groups method (member or static) on a group of kind `gk` and type `t`.
  Value groupMethod(GroupKind gk, clang::QualType t, const std::string& name, const clang::Expr* call, unsigned knownSize = 0);
  bool isSystem(const clang::Decl* d) const;
  Value evalCall(const clang::CallExpr* ce);
  // Inlines `def` called by `call` with `args` (reference parameters bound to the arguments'
  // lvalues, by-value objects constructed from them) on the object `thisPtr` points to (methods,
  // constructors: member initializers first). A function returning a reference leaves the lvalue
  // it returns in lastRetLVal_ (for evalLValue of the call).
  Value inlineCall(const clang::FunctionDecl* def, const clang::Expr* call, llvm::ArrayRef<const clang::Expr*> args,
                   const Value* thisPtr);
  // The object a method is called on: a pointer to it (`p->f()`, `obj.f()`), when followed.
  std::optional<Value> objectPtr(const clang::Expr* obj, bool arrow);
  // A call of any kind (function, method, operator): evaluated, inlined where it has a body.
  Value evalCallLike(const clang::Expr* e);
  Value evalOperatorCall(const clang::CXXOperatorCallExpr* oce);

  // ---- statements (walker.cpp) ----
  void recordBranch(const clang::Stmt* s, const clang::Expr* cond, const Value& c, bool thenWork, bool elseWork, bool isLoop, const Mask* cont = nullptr);
  void walk(const clang::Stmt* s);
  void walkIf(const clang::IfStmt* is);
  // After a loop: a hand-written grid barrier (spinWaitsForGrid) orders the blocks as a grid-wide
  // sync does, for the races between blocks (a Barrier of grid level only).
  void gridSpinWait(const clang::Stmt* loop, const clang::Expr* cond);
  void walkLoop(const clang::Stmt* s, const clang::Expr* cond, const clang::Stmt* body, const clang::Expr* inc, bool isDo);
  void walkSwitch(const clang::SwitchStmt* ss);

  // ---- state ----
  KernelModel& m_;
  clang::ASTContext& ctx_;
  Mask alive_;  // threads that have not exited the kernel (active_ is the domain's)
  std::vector<Frame> frames_;
  std::vector<LoopState> loops_;
  std::vector<std::string> ctxStack_;
  std::vector<unsigned> warpEpoch_;
  // Whether a kernel's pointer parameter is tested against null in its body (paramValue).
  std::map<const clang::ParmVarDecl*, bool> nullTested_;
  bool testsForNull(const clang::ParmVarDecl* p);
  std::map<std::pair<const clang::Expr*, uint64_t>, int64_t> uniformLoads_;
  std::map<const clang::ValueDecl*, uint64_t> memVersion_;  // writes recorded to each array so far
  // An unknown value (loaded data, a bool flag, an integer with no value number) stored at one
  // address by every thread that stored it (the shared flag thread 0 sets from an atomic's
  // ticket): (array, byte address) -> the array's memVersion_ right after that store. A uniform
  // load there while the version is unchanged reads an unknown value or an `opaque` stand-in
  // (readMem).
  struct DataScalar {
    uint64_t version = 0;
    bool data = false;    // the value was loaded data
    bool opaque = false;  // an integer nothing is known about: read back as an `opaque` stand-in
  };
  std::map<std::pair<const clang::ValueDecl*, int64_t>, DataScalar> dataScalars_;
  std::vector<unsigned> guards_;  // lines of undecided conditions being walked
  unsigned failureGuards_ = 0;    // enclosing then-paths of checks only a failure takes (Access::failureGuard)
  // Conditions the model could not decide whose one path left (return, break, continue) and the
  // other did not: the code after them runs for threads that may have left. Their lines are guards
  // of every access until the end of the loop iteration (break, continue) or the function (return).
  struct Residual {
    unsigned line = 0;
    size_t loops = 0;   // loops_.size() when made: a break/continue's ends with that loop level's iteration
    size_t frames = 0;  // frames_.size() when made: a return's ends with the frame
    bool loop = false;
  };
  std::vector<Residual> residual_;
  void dropResiduals(bool loopLevel) {
    residual_.erase(std::remove_if(residual_.begin(), residual_.end(),
                                   [&](const Residual& r) {
                                     return loopLevel ? r.loop && r.loops >= loops_.size() : r.frames >= frames_.size();
                                   }),
                    residual_.end());
  }
  // Statements no thread runs: their accesses are decided (not run, under the shape walked) unless
  // the walk was cut short.
  void decided(const clang::Stmt* s);
  // A forward goto's label within s that threads wait for (walk s although no thread runs its start).
  bool awaitsLabelIn(const clang::Stmt* s) const;
  // Threads still waiting for a label when their function's walk ends: the walk missed it.
  void endGotos(Frame& f);
  // Per undecided if: the variables its paths assign (assignedVars), memoised.
  std::unordered_map<const clang::Stmt*, std::vector<const clang::VarDecl*>> branchVars_;
  // Whether a parameter is used only as `*p` in its function's body (out-parameters).
  std::unordered_map<const clang::ParmVarDecl*, bool> derefOnly_;
  bool onlyDereferenced(const clang::FunctionDecl* def, const clang::ParmVarDecl* pd);
  // Lines of the selection guards being walked (their then-branch): `key[e] == k`, a loaded value
  // that differs per thread compared with one value of the block (Access::selectGuards).
  std::vector<unsigned> selectGuards_;
  // Access::uniformArms: the undecided ifs every thread of the block decides alike around the
  // walk, as (walk of the if, 1 then / 2 else); uniformIfWalks_ numbers the walks.
  std::vector<std::pair<unsigned, uint8_t>> uniformArms_;
  unsigned uniformIfWalks_ = 0;
  // Comparisons evaluated as such a selection.
  std::set<const clang::Expr*> selections_;
  // Set just before inlineCall of a const method on a uniform closure (uniformClosure): the new frame's.
  const clang::ParmVarDecl* nextUniformThis_ = nullptr;
  // The call whose record result initialises pendingRetSlot_ (initObject): the frame inlineCall
  // makes for it takes the slot; retSlotTaken_ says it did.
  const clang::Expr* pendingRetCall_ = nullptr;
  LVal pendingRetSlot_;
  bool retSlotTaken_ = false;
  // The same with one value per warp (`col == row`, row = blockIdx.x * W + warp): at most one
  // thread of each warp passes (Access::warpSelectGuards).
  std::vector<unsigned> warpSelectGuards_;
  // Per thread, whether the store being recorded writes back the value the thread read (`x += 0`).
  std::vector<uint8_t> unchangedStore_;
  std::set<const clang::Expr*> warpSelections_;
  std::unordered_map<const clang::Expr*, std::optional<int64_t>> folded_;
  const clang::VarDecl* loopVar_ = nullptr;
  unsigned epoch_ = 0, seq_ = 0, loopDepth_ = 0;
  unsigned runtimeLoops_ = 0;
  unsigned blockGuards_ = 0;   // enclosing ifs decided per block (by blockIdx), not per thread
  // Walking code that other blocks' threads run with other masks (under a condition on blockIdx
  // they decide differently): accesses there get no block steps (Access::stepX). After such a
  // condition whose paths jump (return, break, ...), every later access too.
  unsigned runtimeIter_ = 0, runtimeIters_ = 0;  // Access::runtimeIter: current, and how many so far
  unsigned laterIterLine_ = 0;  // Access::laterIterLine: the innermost run-time loop past its first iteration
  unsigned dataGuards_ = 0;   // enclosing undecided conditions that threads may decide differently
  unsigned approxMasks_ = 0;  // enclosing guards walked with threads none of which passes them
  // Values stored in per-thread arrays at addresses uniform across the active threads: (array,
  // byte address, size) -> value (storeLocal).
  std::map<std::tuple<const clang::ValueDecl*, int64_t, unsigned>, Value> localMem_;
  bool blockSteps_ = true;
  // The lvalue the last inlined reference-returning call returned, and that call.
  LVal lastRetLVal_;
  const clang::Expr* lastRetCall_ = nullptr;
  unsigned blockVariantDepth_ = 0;
  bool blockVariantAfter_ = false;
  void enterBlockVariant(bool variant, const clang::Stmt* paths) {
    if (!variant) return;
    ++blockVariantDepth_;
    if (hasJump(paths)) blockVariantAfter_ = true;
  }
  void leaveBlockVariant(bool variant) { blockVariantDepth_ -= variant; }
  int depth_ = 0;
  size_t steps_ = 0;
  unsigned loopWalks_ = 0;  // loop bodies walked so far (kMaxLoopWalks)
};

}  // namespace gpuopt::model_detail
