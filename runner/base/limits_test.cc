#include "runner/base/limits.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

class LimitsTest : public ::testing::Test {
 protected:
  ~LimitsTest() override { ResetLimits(); }
};

TEST_F(LimitsTest, TheTableIsInEnumOrderWithDefaultsUnderCeilings) {
  ASSERT_EQ(AllLimits().size(), kLimitCount);
  for (size_t i = 0; i < kLimitCount; ++i) {
    const LimitInfo& info = AllLimits()[i];
    EXPECT_EQ(static_cast<size_t>(info.limit), i) << info.name;
    EXPECT_EQ(LimitValue(info.limit), info.default_value) << info.name;
    EXPECT_LT(info.default_value, info.ceiling) << info.name;
  }
  EXPECT_EQ(LimitValue(Limit::kInputBytes), uint64_t{16} << 20);
  EXPECT_EQ(LimitValue(Limit::kExpandedSteps), 1000000u);
}

TEST_F(LimitsTest, SetChangesOneBoundAndChildrenGetIt) {
  EXPECT_TRUE(SetLimit("include_files=1000").ok());
  EXPECT_TRUE(SetLimit("input_bytes=64MiB").ok());
  EXPECT_EQ(LimitValue(Limit::kIncludeFiles), 1000u);
  EXPECT_EQ(LimitValue(Limit::kInputBytes), uint64_t{64} << 20);
  EXPECT_EQ(ChangedLimits(),
            (std::vector<std::string>{"input_bytes=67108864", "include_files=1000"}));
  // What a child is given reads back the same.
  for (const std::string& changed : ChangedLimits()) EXPECT_TRUE(SetLimit(changed).ok());
  EXPECT_EQ(LimitValue(Limit::kInputBytes), uint64_t{64} << 20);
  ResetLimits();
  EXPECT_TRUE(ChangedLimits().empty());
}

TEST_F(LimitsTest, BadAssignmentsSayWhatIsWrong) {
  EXPECT_EQ(SetLimit("include_file=3").message(),
            "--limit: there is no limit 'include_file', did you mean 'include_files'? (limits: "
            "input_bytes, report_bytes, yaml_values, yaml_depth, expanded_steps, include_files, "
            "include_depth, expression_depth, sweep_validate_steps, together_blocks, "
            "block_minutes, snapshot_bytes, snapshot_values, trace_bytes, trace_records)");
  EXPECT_EQ(SetLimit("include_files").message(), "--limit expects NAME=VALUE, got 'include_files'");
  EXPECT_EQ(SetLimit("include_files=lots").message(),
            "--limit include_files: expected a whole number greater than 0, got 'lots'");
  EXPECT_EQ(SetLimit("input_bytes=0").message(),
            "--limit input_bytes: expected a size such as 64MiB greater than 0, got '0'");
  EXPECT_EQ(SetLimit("expression_depth=100000").message(),
            "--limit expression_depth: 100000 is past the most vmm-run allows, 1000 "
            "(docs/limits-and-safety.md says why)");
  EXPECT_EQ(SetLimit("input_bytes=99999999999TiB").code(), Code::kInvalidInput);
  EXPECT_EQ(LimitValue(Limit::kExpressionDepth), 64u);  // nothing changed
}

}  // namespace
}  // namespace vmm
