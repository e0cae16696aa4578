// The per-thread value domain of the kernel model: one value per thread of a block, and the
// operations on such values under an active mask (the threads currently executing).
//
// Clang-free except for the operator kinds: unit-tested on its own (tests/unit/test_value.cpp).
#pragma once
#include <clang/AST/OperationKinds.h>
#include <llvm/ADT/ArrayRef.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace clang {
class NamedDecl;
class ValueDecl;
}

namespace gpuopt {

enum class MemSpace { Global, Shared, Local, Constant, Unknown };
std::string_view memSpaceName(MemSpace s);

// One flag per thread of the block.
using Mask = std::vector<uint8_t>;

// A per-thread value.
struct Value {
  std::vector<int64_t> v;   // one entry per thread of the block
  bool known = false;       // concrete for every active thread
  bool data = false;        // derived from a per-thread memory load (data-dependent)
  bool symbolic = false;    // depends on a uniform symbol's representative value
  bool param = false;       // ... of a kernel parameter or a uniform load (blockIdx/gridDim: symbolic only)
  // The stand-in shapes how threads' values differ, not only an offset every thread shares
  // (`tid * n`, `(tid + seed) % 64`, `min(tid, n)`): with `param` and this clear, the distance
  // between any two threads' values is what the code gives for every value of the parameter.
  bool paramLanes = false;
  // Computed from a parameter whose value every launch gives (LaunchIndex::argumentConstant):
  // known here, but a run-time value for the compiler (no unrolling, no constant index).
  bool launchArg = false;
  // The parameter (or the array a uniform load read) one such stand-in came from, for messages.
  const clang::NamedDecl* paramSrc = nullptr;
  bool block = false;       // depends on blockIdx (differs between blocks)
  std::string strideSym;    // uniform symbol scaling a thread-varying term ("height")
  const clang::NamedDecl* strideSrc = nullptr;  // the kernel parameter that symbol came from, if one
  int64_t strideVal = 0;  // the symbol's stand-in value where it scaled the term (0: not kept)
  // Pointers.
  bool isPtr = false;
  const clang::ValueDecl* base = nullptr;  // the array / pointer parameter the pointer is into
  std::string baseName;
  MemSpace space = MemSpace::Unknown;
  uint64_t pointee = 0;      // pointee size in bytes
  bool ptrVolatile = false;
  // Cooperative groups: the number of threads of the group this object is (0 = not known).
  unsigned group = 0;
  // The same for every thread, even when not known (a float loaded from one address).
  bool same = false;
  // Loaded from memory at a per-thread address and not computed on since (an index array's
  // element): what a selection by key compares (`rowIdx[e] == pivot`), unlike a computed minimum.
  bool loaded = false;
  // A key loaded per thread on one path and a constant on the other (`int col = -1; if (e < end)
  // col = cols[e];`): per thread the loaded key's number (empty when none), and the constant.
  // A comparison with a known value that never equals the constant selects like the key itself.
  std::vector<uint64_t> keyTag;
  int64_t keyOr = 0;
  // Read from shared memory or exchanged between lanes (a shuffle, a vote), or computed from such:
  // a value the block made (a minimum it reduced), not an input.
  bool blockMade = false;
  // A stand-in for an integer nothing is known about (a shared variable thread 0 set from an
  // atomic's old value): usable in addresses, but a condition on it is not decided.
  bool opaque = false;
  // Value numbers of values that are not known (floats, loaded data), per thread, 0 = none: two
  // threads whose numbers are equal hold the same value, because they computed it the same way
  // from the same loads (same address, memory not written in between) and constants. Empty when
  // no thread has one.
  std::vector<uint64_t> tag;
  // Not known, but a known distance from a value that is: thread t holds X + affOff[t], where X is
  // the value numbered affBase[t] (`token * width + col`: the token's row plus the lane's column).
  // Threads with equal bases hold values the known distance apart. Empty when not kept (cleared
  // by every operation that numbers a value; kept by +, - and scaling by a known uniform value).
  std::vector<uint64_t> affBase;
  std::vector<int64_t> affOff;
  // An unknown (data-dependent) integer with at most this many possible values (`v & 3`: 4,
  // `v % 8` for unsigned v: 8), else 0.
  int64_t values = 0;
  // An unknown integer with a known upper bound (`min(n, data)` <= n, `x & 7` <= 7, scaled or
  // shifted by constants), when `hasHi`.
  // Loaded from neighbouring elements of a prefix sum of 0/1 flags (LaunchIndex::prefixOfFlags):
  // neighbouring threads' values differ by 0 or 1 (1 here); as an address: at most this many bytes
  // between neighbouring threads. 0 = no such bound.
  int64_t stepBound = 0;
  bool hasHi = false;
  int64_t hi = 0;
  // An unknown condition that some threads are known to fail (`tid < k * min(1, data)` for tid >= k):
  // one flag per thread, empty when none.
  std::vector<uint8_t> falseFor;
  // The value in other blocks: per thread, what it is with blockIdx moved by kBlockAlts[k]
  // ((+1,0), (+2,0), (0,+1)), computed in the same walk; how an address moves from block to
  // block (races between blocks). Kept only for values that depend on blockIdx (`block`); empty
  // there when an operation did not carry them: the step is then not known.
  std::array<std::vector<int64_t>, 3> alt;
};

// The block-index moves the alternatives of Value::alt stand for: (dx, dy).
constexpr int kBlockAlts[3][2] = {{1, 0}, {2, 0}, {0, 1}};

// Floor division (addresses can be negative when index arithmetic wraps).
inline int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The threads of one block and which of them are active: makes values and combines them.
class LaneDomain {
 public:
  explicit LaneDomain(unsigned threads) : N_(threads), active_(threads, 1) {}

  unsigned lanes() const { return N_; }
  const Mask& active() const { return active_; }
  void setActive(Mask m) { active_ = std::move(m); }
  bool anyActive() const;

  // An unknown value (every flag clear) and a constant the same for every thread.
  Value unknown() const;
  Value constant(int64_t c) const;
  // Known and different between two active threads.
  bool varying(const Value& v) const;
  // Known and different between two active threads, or not known but at known distances that
  // differ between two active threads (Value::affOff: `base + threadIdx.x` with an unknown base).
  bool movesWithThread(const Value& v) const;
  // The same for every active thread (known, or marked so).
  bool uniformish(const Value& v) const { return v.same || (v.known && !varying(v)); }
  // The flags of a value computed from `a` and `b`.
  static void mergeFlags(Value& r, const Value& a, const Value& b);
  // Assigns `src` into `dst` for the active threads only.
  void assignMasked(Value& dst, const Value& src) const;
  // Wraps each thread's value to an integer of `bits` bits (signed or not), as C conversion does.
  void truncate(Value& v, unsigned bits, bool isSigned) const;
  // `a op b` per thread for an integer, comparison or logical operator; `isUnsigned`: the
  // operation's type, `compareUnsigned`: the operands' (for < <= > >=). Shift counts outside
  // 0..63 and division by zero give 0. Returns false for an operator it does not evaluate.
  bool apply(clang::BinaryOperatorKind op, const Value& a, const Value& b, bool isUnsigned, bool compareUnsigned,
             Value& out) const;

  // Values in other blocks (Value::alt). Whether `v`'s are known (always, for a value that does
  // not depend on blockIdx), and alternative k (its own values then).
  static bool hasAlts(const Value& v) { return !v.block || !v.alt[0].empty(); }
  static const std::vector<int64_t>& altOf(const Value& v, int k) { return v.block && !v.alt[0].empty() ? v.alt[k] : v.v; }
  // A known condition that some active thread decides differently in another block (or one whose
  // alternatives are not known): the threads taking each path differ from block to block.
  bool blockVariant(const Value& c) const;
  // `f(x)` per thread on v and its alternatives.
  template <class F>
  static void eachAlt(Value& v, F f) {
    if (v.block)
      for (auto& a : v.alt)
        for (auto& x : a) f(x);
  }

  // Value numbering. The number of thread t's value: its tag, or one made from the known value
  // (0 when neither is there).
  static uint64_t laneNumber(const Value& v, unsigned t);
  // Thread t's value as base + offset (Value::affBase): false when it has no number.
  static bool affineAt(const Value& v, unsigned t, uint64_t& base, int64_t& off);
  // Numbers `r` (not known) as `what` applied to `operands`, for every thread whose operands all
  // have numbers.
  // `commutative` (a + b, min(a, b)): the two operands' numbers in either order give one number,
  // so `a + b` in one thread and `b + a` in another (a butterfly's partners) hold equal values.
  void number(Value& r, uint64_t what, llvm::ArrayRef<const Value*> operands, bool commutative = false) const;
  void number(Value& r, uint64_t what, std::initializer_list<const Value*> operands, bool commutative = false) const {
    number(r, what, llvm::ArrayRef<const Value*>(operands.begin(), operands.size()), commutative);
  }
  // A number for an opaque thing (an operator kind, a function, a load's base) and for data.
  static uint64_t mix(uint64_t a, uint64_t b);
  // The number of a floating-point zero (the literal 0.0 or 0.0f, a default-initialised float, a
  // conversion of a zero): what `x += 0` adds.
  static uint64_t floatZeroTag() { return mix(0x464c54ull, 0); }
  // Whether thread t holds zero (a known integer 0 or a floating-point zero).
  static bool zeroAt(const Value& v, unsigned t) {
    return (v.known && t < v.v.size() && v.v[t] == 0) || (!v.known && t < v.tag.size() && v.tag[t] == floatZeroTag());
  }

 protected:
  unsigned N_;
  Mask active_;
};

}  // namespace gpuopt
