#include "runner/exec/timing_stats.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

TEST(ComputeStats, OddCount) {
  report::TimingStats s = ComputeStats({5, 1, 3});
  EXPECT_EQ(s.count, 3u);
  EXPECT_EQ(s.min_us, 1);
  EXPECT_EQ(s.median_us, 3);
  EXPECT_EQ(s.p99_us, 5);
  EXPECT_EQ(s.max_us, 5);
}

TEST(ComputeStats, EvenCountAndNearestRankP99) {
  std::vector<double> v;
  for (int i = 1; i <= 200; ++i) v.push_back(i);
  report::TimingStats s = ComputeStats(v);
  EXPECT_EQ(s.median_us, 100.5);
  EXPECT_EQ(s.p99_us, 198);
}

TEST(ComputeStats, Empty) { EXPECT_EQ(ComputeStats({}).count, 0u); }

}  // namespace
}  // namespace vmm
