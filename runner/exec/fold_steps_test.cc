#include "runner/exec/fold_steps.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

using report::CheckRecord;
using report::StepRecord;
using report::StepStatus;
using report::Verdict;

StepRecord Record(int index, const std::string& name, StepStatus status, double wall_us) {
  StepRecord r;
  r.index = index;
  r.name = name;
  r.named = true;
  r.op = "check_equal";
  r.status = status;
  r.wall_us = wall_us;
  return r;
}

// Three cycles of one loop template (1) after a step written once (0): records 1..3 fold.
std::vector<StepRecord> ThreeCycles() {
  std::vector<StepRecord> r;
  r.push_back(Record(0, "setup", StepStatus::kOk, 1));
  for (int i = 0; i < 3; ++i) {
    StepRecord c = Record(1 + i, "check " + std::to_string(i), StepStatus::kOk, 10.0 * (i + 1));
    c.details = {
        {"size_bytes", int64_t{64}}, {"c_hash", "0x" + std::to_string(i)}, {"seed", int64_t{i}}};
    c.addresses = {{"va", "0x1000"}};
    CheckRecord check;
    check.expected = check.actual = "equal";
    check.verdict = Verdict::kPass;
    c.check = check;
    r.push_back(c);
  }
  return r;
}

TEST(FoldRepeatedSteps, OneRecordPerTemplateWithSharedValuesKept) {
  std::vector<StepRecord> r = ThreeCycles();
  FoldRepeatedSteps({0, 1, 1, 1}, &r);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_FALSE(r[0].folded);
  const StepRecord& f = r[1];
  ASSERT_TRUE(f.folded);
  EXPECT_EQ(f.folded->count, 3u);
  EXPECT_EQ(f.index, 1);
  EXPECT_EQ(f.name, "check 0");
  EXPECT_EQ(f.folded->last_index, 3);
  EXPECT_EQ(f.folded->last_name, "check 2");
  ASSERT_TRUE(f.wall_stats);
  EXPECT_EQ(f.wall_stats->count, 3u);
  EXPECT_EQ(f.wall_stats->min_us, 10);
  EXPECT_EQ(f.wall_stats->max_us, 30);
  // Shared values kept, the varying hash combined, the varying seed dropped and named.
  ASSERT_EQ(f.details.size(), 2u);
  EXPECT_EQ(f.details[0].first, "size_bytes");
  EXPECT_EQ(f.details[1].first, "c_hash");
  EXPECT_EQ(std::get<std::string>(f.details[1].second).size(), 18u);
  EXPECT_EQ(f.folded->varying, std::vector<std::string>{"details.seed"});
  ASSERT_EQ(f.addresses.size(), 1u);
  ASSERT_TRUE(f.check);
  EXPECT_EQ(f.check->verdict, Verdict::kPass);
}

TEST(FoldRepeatedSteps, CombinedHashFollowsEveryIterationInOrder) {
  std::vector<StepRecord> a = ThreeCycles(), b = ThreeCycles(), c = ThreeCycles();
  std::get<std::string>(b[2].details[1].second) = "0xdifferent";
  std::swap(c[1].details[1].second, c[2].details[1].second);
  const std::vector<uint32_t> t = {0, 1, 1, 1};
  FoldRepeatedSteps(t, &a);
  FoldRepeatedSteps(t, &b);
  FoldRepeatedSteps(t, &c);
  auto hash = [](const std::vector<StepRecord>& r) {
    return std::get<std::string>(r[1].details[1].second);
  };
  std::vector<StepRecord> again = ThreeCycles();
  FoldRepeatedSteps(t, &again);
  EXPECT_EQ(hash(a), hash(again));
  EXPECT_NE(hash(a), hash(b));
  EXPECT_NE(hash(a), hash(c));
}

TEST(FoldRepeatedSteps, FailedRecordsStayWhereTheyAre) {
  std::vector<StepRecord> r = ThreeCycles();
  r[2].status = StepStatus::kFailed;
  r[2].check->verdict = Verdict::kFail;
  r.push_back(Record(4, "after", StepStatus::kSkipped, 0));
  r.push_back(Record(5, "after", StepStatus::kSkipped, 0));
  FoldRepeatedSteps({0, 1, 1, 1, 2, 2}, &r);
  // setup, the two passing cycles folded, the failed cycle, the skipped pair folded.
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[1].folded->count, 2u);
  EXPECT_EQ(r[1].folded->last_index, 3);
  EXPECT_EQ(r[2].index, 2);
  EXPECT_EQ(r[2].status, StepStatus::kFailed);
  EXPECT_FALSE(r[2].folded);
  EXPECT_EQ(r[3].status, StepStatus::kSkipped);
  EXPECT_EQ(r[3].folded->count, 2u);
  EXPECT_FALSE(r[3].wall_stats);  // skipped steps have no timings to summarise
}

TEST(FoldRepeatedSteps, NothingRepeatedNothingFolded) {
  std::vector<StepRecord> r = ThreeCycles();
  FoldRepeatedSteps({0, 1, 2, 3}, &r);
  ASSERT_EQ(r.size(), 4u);
  for (const StepRecord& s : r) EXPECT_FALSE(s.folded);
}

}  // namespace
}  // namespace vmm
