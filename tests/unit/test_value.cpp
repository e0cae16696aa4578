// The kernel model's value domain on its own (analyzer/model/value.h): no AST, no parse.
#include <gtest/gtest.h>

#include "analyzer/model/value.h"

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

}  // namespace
