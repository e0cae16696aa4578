// The kernel model's value domain on its own (analyzer/model/value.h): no AST, no parse.
#include <gtest/gtest.h>

#include "analyzer/model/value.h"
#include "analyzer/rule/rule_context.h"

using namespace gpuopt;

namespace {

// A domain of 8 lanes with the given active mask.
struct Lanes : LaneDomain {
  explicit Lanes(Mask active = Mask(8, 1)) : LaneDomain(static_cast<unsigned>(active.size())) { setActive(active); }
  Value lanes(std::vector<int64_t> v) const {
    Value r = constant(0);
    r.v = std::move(v);
    return r;
  }
};

TEST(ValueDomain, ConstantsAndUnknowns) {
  Lanes d;
  Value c = d.constant(7);
  EXPECT_TRUE(c.known);
  EXPECT_EQ(c.v, std::vector<int64_t>(8, 7));
  EXPECT_FALSE(d.varying(c));
  EXPECT_TRUE(d.uniformish(c));
  Value u = d.unknown();
  EXPECT_FALSE(u.known);
  EXPECT_FALSE(d.varying(u));   // unknown is never "varying": nothing is known to differ
  EXPECT_FALSE(d.uniformish(u));
  u.same = true;                 // a float loaded from one address: the same, though not known
  EXPECT_TRUE(d.uniformish(u));
}

TEST(ValueDomain, VaryingLooksOnlyAtActiveLanes) {
  Lanes d(Mask{1, 0, 0, 0, 0, 0, 0, 1});
  Value v = d.lanes({5, 1, 2, 3, 4, 5, 6, 5});
  EXPECT_FALSE(d.varying(v));  // lanes 0 and 7 hold 5
  d.setActive(Mask{1, 1, 0, 0, 0, 0, 0, 0});
  EXPECT_TRUE(d.varying(v));
  d.setActive(Mask(8, 0));
  EXPECT_FALSE(d.anyActive());
}

TEST(ValueDomain, AssignMaskedWritesActiveLanesOnly) {
  Lanes d(Mask{1, 1, 0, 0, 1, 0, 0, 0});
  Value dst = d.constant(9);
  dst.same = true;
  Value src = d.lanes({0, 1, 2, 3, 4, 5, 6, 7});
  src.data = true;
  d.assignMasked(dst, src);
  EXPECT_EQ(dst.v, (std::vector<int64_t>{0, 1, 9, 9, 4, 9, 9, 9}));
  EXPECT_TRUE(dst.known);
  EXPECT_TRUE(dst.data);
  EXPECT_FALSE(dst.same);  // lanes hold values of different assignments now
  Value unk = d.unknown();
  d.assignMasked(dst, unk);
  EXPECT_FALSE(dst.known);
  // With every lane active the source is taken whole (flags too).
  Lanes all;
  Value whole = all.constant(1);
  all.assignMasked(whole, all.unknown());
  EXPECT_FALSE(whole.known);
  EXPECT_FALSE(whole.data);
}

TEST(ValueDomain, MergeFlagsKeepsTheFirstStrideSymbol) {
  Value a, b, r;
  a.data = true;
  b.symbolic = true;
  b.param = true;
  b.strideSym = "width";
  LaneDomain::mergeFlags(r, a, b);
  EXPECT_TRUE(r.data && r.symbolic && r.param);
  EXPECT_EQ(r.strideSym, "width");
  a.strideSym = "height";
  LaneDomain::mergeFlags(r, a, b);
  EXPECT_EQ(r.strideSym, "height");
}

TEST(ValueDomain, IntegerOperatorsPerLane) {
  Lanes d;
  Value a = d.lanes({0, 1, 2, 3, 4, 5, 6, -7});
  Value b = d.constant(2);
  Value r = d.unknown();
  ASSERT_TRUE(d.apply(clang::BO_Mul, a, b, false, false, r));
  EXPECT_EQ(r.v, (std::vector<int64_t>{0, 2, 4, 6, 8, 10, 12, -14}));
  ASSERT_TRUE(d.apply(clang::BO_Rem, a, b, false, false, r));
  EXPECT_EQ(r.v[7], -1);                      // C's truncating remainder
  ASSERT_TRUE(d.apply(clang::BO_Div, a, b, true, false, r));
  EXPECT_EQ(r.v[7], static_cast<int64_t>(static_cast<uint64_t>(-7) / 2));  // unsigned division
  ASSERT_TRUE(d.apply(clang::BO_Div, a, d.constant(0), false, false, r));
  EXPECT_EQ(r.v, std::vector<int64_t>(8, 0));  // division by zero: 0, never a trap
  ASSERT_TRUE(d.apply(clang::BO_Shl, d.constant(1), d.constant(70), false, false, r));
  EXPECT_EQ(r.v[0], 0);                        // shift past the width: 0
  ASSERT_TRUE(d.apply(clang::BO_LT, a, d.constant(3), false, false, r));
  EXPECT_EQ(r.v, (std::vector<int64_t>{1, 1, 1, 0, 0, 0, 0, 1}));
  ASSERT_TRUE(d.apply(clang::BO_LT, a, d.constant(3), false, true, r));
  EXPECT_EQ(r.v[7], 0);                        // -7 compared unsigned is huge
  EXPECT_FALSE(d.apply(clang::BO_Comma, a, b, false, false, r));
}

TEST(ValueDomain, TruncateWrapsLikeAConversion) {
  Lanes d;
  Value v = d.lanes({255, 256, -1, 128, 0, 1, 127, 65535});
  Value s = v;
  d.truncate(s, 8, true);
  EXPECT_EQ(s.v, (std::vector<int64_t>{-1, 0, -1, -128, 0, 1, 127, -1}));
  Value u = v;
  d.truncate(u, 8, false);
  EXPECT_EQ(u.v, (std::vector<int64_t>{255, 0, 255, 128, 0, 1, 127, 255}));
  Value w = v;
  d.truncate(w, 64, true);
  EXPECT_EQ(w.v, v.v);
}

TEST(ValueDomain, FloorDivision) {
  EXPECT_EQ(floorDiv(7, 4), 1);
  EXPECT_EQ(floorDiv(-1, 4), -1);
  EXPECT_EQ(floorDiv(-4, 4), -1);
  EXPECT_EQ(floorDiv(-5, 4), -2);
}

// Values in other blocks (Value::alt): how an address moves from block to block, in one walk.
TEST(ValueDomain, OtherBlocksValuesFollowOperatorsAndMaskedAssignment) {
  Lanes d;
  Value bx = d.constant(2);  // blockIdx.x with its values at +1, +2 and (y+1)
  bx.block = true;
  bx.alt = {std::vector<int64_t>(8, 3), std::vector<int64_t>(8, 4), std::vector<int64_t>(8, 2)};
  Value tid = d.lanes({0, 1, 2, 3, 4, 5, 6, 7});
  Value prod = d.unknown(), idx = d.unknown();
  ASSERT_TRUE(d.apply(clang::BO_Mul, bx, d.constant(8), false, false, prod));
  ASSERT_TRUE(d.apply(clang::BO_Add, prod, tid, false, false, idx));
  EXPECT_EQ(idx.v[1], 17);
  ASSERT_TRUE(Lanes::hasAlts(idx));
  EXPECT_EQ(Lanes::altOf(idx, 0)[1], 25);  // one block further in x: 8 elements on
  EXPECT_EQ(Lanes::altOf(idx, 1)[1], 33);
  EXPECT_EQ(Lanes::altOf(idx, 2)[1], 17);  // y does not move it
  // A value that does not depend on blockIdx is its own value in every block.
  EXPECT_EQ(&Lanes::altOf(tid, 2), &tid.v);
  // `bx / 2` is not linear: the alternatives say so (2/2 = 1, 3/2 = 1, 4/2 = 2).
  Value half = d.unknown();
  ASSERT_TRUE(d.apply(clang::BO_Div, bx, d.constant(2), false, false, half));
  EXPECT_EQ(Lanes::altOf(half, 0)[0] - half.v[0], 0);
  EXPECT_EQ(Lanes::altOf(half, 1)[0] - Lanes::altOf(half, 0)[0], 1);
  // Masked assignment keeps the inactive lanes' old values in every block too.
  Value dst = tid;
  d.setActive({1, 0, 1, 0, 1, 0, 1, 0});
  d.assignMasked(dst, idx);
  EXPECT_EQ(Lanes::altOf(dst, 0)[0], 24);
  EXPECT_EQ(Lanes::altOf(dst, 0)[1], 1);
  // A condition on blockIdx that other blocks decide differently: their threads take other paths.
  Value eq = d.constant(0);
  ASSERT_TRUE(d.apply(clang::BO_EQ, bx, d.constant(2), false, false, eq));
  EXPECT_TRUE(d.blockVariant(eq));
  Value lt = d.constant(0);
  ASSERT_TRUE(d.apply(clang::BO_LT, bx, d.constant(100), false, false, lt));
  EXPECT_FALSE(d.blockVariant(lt));
  // An operation that does not carry them leaves the step unknown, never zero.
  Value lost = bx;
  lost.alt = {};
  EXPECT_FALSE(Lanes::hasAlts(lost));
}

}  // namespace

// The figure another instantiation gives at the same place reads as a phrase: cut at the word limit
// it neither ends inside a parenthesis it opened nor on a joining word (sixth stop check: "15
// sectors for 2 useful (13.3% efficiency) (at").
TEST(FigureDifference, NeverEndsInsideAParenthesisOrOnAJoiningWord) {
  const std::string kept = "uncoalesced global load 'x[o]': a warp touches 32 sectors for 4 useful (12.5% efficiency) (at p = 0)";
  const std::string other = "uncoalesced global load 'x[o]': a warp touches 15 sectors for 2 useful (13.3% efficiency) (at p = 3)";
  const std::string d = figureDifference(kept, other);
  EXPECT_EQ(d, "touches 15 sectors for 2 useful (13.3% efficiency)");
  const std::string cut = figureDifference("a b c one two three four five six seven eight nine", "a b c uno dos tres cuatro cinco seis siete of ocho");
  EXPECT_EQ(cut, "uno dos tres cuatro cinco seis siete");
  EXPECT_EQ(figureDifference("16-way bank conflict on shared load", "2-way bank conflict on shared load"),
            "2-way bank conflict on shared load");
}
