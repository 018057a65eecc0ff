#include "runner/plan/reservation_state.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

constexpr uint64_t kMiB = 1 << 20;

ReservationState EightMiBWithTwoMappings() {
  ReservationState r;
  r.Reserve(8 * kMiB);
  r.AddMapping({{4 * kMiB, 6 * kMiB}, 1, "second", 12});
  r.AddMapping({{0, 2 * kMiB}, 0, "first", 10});
  return r;
}

TEST(ReservationStateTest, MappingsStaySortedAndOverlapsAreFound) {
  ReservationState r = EightMiBWithTwoMappings();
  ASSERT_EQ(r.mappings().size(), 2u);
  EXPECT_EQ(r.mappings()[0].step_label, "first");
  EXPECT_EQ(r.FirstOverlap({kMiB * 1, kMiB * 5})->step_label, "first");
  EXPECT_EQ(r.FirstOverlap({2 * kMiB, 4 * kMiB}), nullptr);
  EXPECT_EQ(r.FirstCut({0, 5 * kMiB})->step_label, "second");
  EXPECT_EQ(r.FirstCut({0, 6 * kMiB}), nullptr);
}

TEST(ReservationStateTest, FirstUnmappedFindsHoles) {
  ReservationState r = EightMiBWithTwoMappings();
  std::optional<ByteRange> hole = r.FirstUnmapped({0, 8 * kMiB});
  ASSERT_TRUE(hole.has_value());
  EXPECT_EQ(FormatRange(*hole), "[2 MiB, 4 MiB)");
  EXPECT_FALSE(r.FirstUnmapped({0, 2 * kMiB}).has_value());
  EXPECT_EQ(FormatRange(*r.FirstUnmapped({4 * kMiB, 8 * kMiB})), "[6 MiB, 8 MiB)");
}

TEST(ReservationStateTest, AccessStartsUnsetAndFollowsSetAccess) {
  ReservationState r = EightMiBWithTwoMappings();
  const ByteRange first{0, 2 * kMiB};
  EXPECT_EQ(r.FirstProblem(first, Access::kRead, 0), AccessProblem::kNeverSet);
  r.SetAccess({0, kMiB}, 0, Access::kReadWrite);
  EXPECT_EQ(r.FirstProblem(first, Access::kRead, 0),
            AccessProblem::kNeverSet);  // second half unset
  r.SetAccess({kMiB, 2 * kMiB}, 0, Access::kRead);
  EXPECT_EQ(r.FirstProblem(first, Access::kRead, 0), AccessProblem::kNone);
  EXPECT_EQ(r.FirstProblem(first, Access::kReadWrite, 0), AccessProblem::kReadOnly);
  r.SetAccess({kMiB / 2, kMiB * 3 / 2}, 0, Access::kNone);
  EXPECT_EQ(r.FirstProblem({0, kMiB / 2}, Access::kReadWrite, 0), AccessProblem::kNone);
  EXPECT_EQ(r.FirstProblem(first, Access::kRead, 0), AccessProblem::kAccessNone);
  EXPECT_EQ(r.FirstProblem({0, 4 * kMiB}, Access::kRead, 0), AccessProblem::kPartlyMapped);
  EXPECT_EQ(r.FirstProblem({2 * kMiB, 4 * kMiB}, Access::kRead, 0), AccessProblem::kNotMapped);
}

TEST(ReservationStateTest, AccessIsPerDevice) {
  ReservationState r = EightMiBWithTwoMappings();
  const ByteRange first{0, 2 * kMiB};
  r.SetAccess(first, 1, Access::kRead);
  EXPECT_EQ(r.FirstProblem(first, Access::kRead, 0), AccessProblem::kNeverSet);
  EXPECT_EQ(r.FirstProblem(first, Access::kRead, 1), AccessProblem::kNone);
  EXPECT_EQ(r.FirstProblem(first, Access::kReadWrite, 1), AccessProblem::kReadOnly);
  EXPECT_EQ(r.FirstProblem(first, Access::kRead, 3), AccessProblem::kNeverSet);
  r.SetAccess(first, 0, Access::kReadWrite);
  EXPECT_EQ(r.FirstProblem(first, Access::kReadWrite, 0), AccessProblem::kNone);
  EXPECT_EQ(r.FirstProblem(first, Access::kReadWrite, 1), AccessProblem::kReadOnly);
  r.SetAccess(first, 1, Access::kNone);  // device 0 keeps its access
  EXPECT_EQ(r.FirstProblem(first, Access::kRead, 1), AccessProblem::kAccessNone);
  EXPECT_EQ(r.FirstProblem(first, Access::kReadWrite, 0), AccessProblem::kNone);
  r.RemoveMappings(first);  // unmapping clears every device's access
  r.AddMapping({first, 2, "again", 20});
  EXPECT_EQ(r.FirstProblem(first, Access::kRead, 0), AccessProblem::kNeverSet);
  EXPECT_EQ(r.FirstProblem(first, Access::kRead, 1), AccessProblem::kNeverSet);
}

TEST(ReservationStateTest, UnmapClearsMappingsAndAccess) {
  ReservationState r = EightMiBWithTwoMappings();
  r.SetAccess({0, 2 * kMiB}, 0, Access::kReadWrite);
  r.RemoveMappings({0, 2 * kMiB});
  ASSERT_EQ(r.mappings().size(), 1u);
  r.AddMapping({{0, 2 * kMiB}, 2, "again", 20});
  EXPECT_EQ(r.FirstProblem({0, 2 * kMiB}, Access::kRead, 0), AccessProblem::kNeverSet);
  r.Free();
  EXPECT_FALSE(r.reserved());
  EXPECT_TRUE(r.mappings().empty());
}

}  // namespace
}  // namespace vmm
