#include "runner/generate/content.h"

#include <gtest/gtest.h>

namespace vmm::gen {
namespace {

TEST(Content, NeighboursThatContinueMerge) {
  Content c = Normalize({Piece{8, PieceKind::kSeed, 3, 0}, Piece{8, PieceKind::kSeed, 3, 2},
                         Piece{4, PieceKind::kConst, 7, 0}, Piece{4, PieceKind::kConst, 7, 0},
                         Piece{4, PieceKind::kSeed, 3, 9}});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], (Piece{16, PieceKind::kSeed, 3, 0}));
  EXPECT_EQ(c[1], (Piece{8, PieceKind::kConst, 7, 0}));
  EXPECT_EQ(c[2], (Piece{4, PieceKind::kSeed, 3, 9}));  // index 9 does not continue index 4
}

TEST(Content, WritesSplitAndReadsRestoreElementIndices) {
  PhysContent p(64);
  EXPECT_TRUE(HasUnset(p.Read(0, 64)));
  p.Write(0, Uniform(64, PieceKind::kSeed, 5));
  p.Write(16, Uniform(8, PieceKind::kConst, 0xA5A5A5A5));
  const Content tail = p.Read(24, 16);  // elements 6..9 of the fill
  ASSERT_EQ(tail.size(), 1u);
  EXPECT_EQ(tail[0], (Piece{16, PieceKind::kSeed, 5, 6}));
  const Content all = p.Read(0, 64);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1], (Piece{8, PieceKind::kConst, 0xA5A5A5A5, 0}));
  EXPECT_FALSE(HasUnset(all));
  // Writing the fill's middle back makes the content one run again.
  p.Write(16, Content{Piece{8, PieceKind::kSeed, 5, 4}});
  EXPECT_EQ(p.Read(0, 64), Uniform(64, PieceKind::kSeed, 5));
}

TEST(Content, ConstAndTokens) {
  EXPECT_TRUE(IsConst(Uniform(8, PieceKind::kConst, 0), 0));
  EXPECT_FALSE(IsConst(Uniform(8, PieceKind::kConst, 1), 0));
  EXPECT_FALSE(IsConst({}, 0));
  const Content a = Uniform(8, PieceKind::kSeed, 1), b = Uniform(8, PieceKind::kSeed, 2);
  EXPECT_EQ(TokenOf({&a, &b}, 1), TokenOf({&a, &b}, 1));
  EXPECT_NE(TokenOf({&a, &b}, 1), TokenOf({&b, &a}, 1));
  EXPECT_NE(TokenOf({&a, &b}, 1), TokenOf({&a, &b}, 2));
}

TEST(Content, ElementwiseResultsAreNamedByOpFactorAndInputs) {
  const Content a = Uniform(8, PieceKind::kSeed, 1), b = Uniform(8, PieceKind::kSeed, 2);
  // fp32 addition commutes: one result either way; axpy does not.
  EXPECT_EQ(ElementwiseResult("add", "", a, b), ElementwiseResult("add", "", b, a));
  EXPECT_NE(ElementwiseResult("axpy", "0.5", a, b), ElementwiseResult("axpy", "0.5", b, a));
  EXPECT_NE(ElementwiseResult("axpy", "0.5", a, b), ElementwiseResult("axpy", "-2", a, b));
  EXPECT_NE(ElementwiseResult("add", "", a, b), ElementwiseResult("axpy", "0.5", a, b));
  // scale reads a alone.
  EXPECT_EQ(ElementwiseResult("scale", "3", a, b), ElementwiseResult("scale", "3", a, a));
  EXPECT_NE(ElementwiseResult("scale", "3", a, b), ElementwiseResult("scale", "0.75", a, b));
  const Content r = ElementwiseResult("add", "", a, b);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].kind, PieceKind::kOpaque);
  EXPECT_EQ(r[0].bytes, 8u);
  // The model follows computed and filled inputs, not constant or unwritten ones.
  EXPECT_TRUE(ElementwiseInput(a));
  EXPECT_TRUE(ElementwiseInput(Uniform(8, PieceKind::kOpaque, 12345)));  // a matmul's result
  EXPECT_FALSE(ElementwiseInput(r));  // no chains: they can give equal data under two names
  EXPECT_FALSE(ElementwiseInput({Piece{4, PieceKind::kSeed, 1, 0}, r[0]}));
  EXPECT_FALSE(ElementwiseInput(Uniform(8, PieceKind::kConst, 0)));
  EXPECT_FALSE(ElementwiseInput({Piece{4, PieceKind::kSeed, 1, 0}, Piece{4, PieceKind::kUnset}}));
  EXPECT_FALSE(ElementwiseInput({}));
}

}  // namespace
}  // namespace vmm::gen
