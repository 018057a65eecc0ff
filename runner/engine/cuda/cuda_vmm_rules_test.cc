// The VMM rule table (runner/vocab/vmm_rules.h) against the real driver (binary vmm_gpu_tests,
// ctest label "gpu"): each row's scenario goes straight to the CUDA engine, without the validator,
// and the last call must come back with the row's CUDA error name (or succeed where the driver
// accepts it). Rows the driver cannot take safely are not sent: released or unknown handles (a
// segfault in driver 580) must be refused by the engine itself before any driver call; calls the
// driver accepts against its documentation, and kernel faults (which poison the context), are
// skipped. The host side of the same rows is tests/vmm_rules_test.cc.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "runner/engine/cuda/cuda_test_util.h"
#include "runner/scenario/parse.h"
#include "runner/vocab/vmm_rules.h"
#include "tests/vmm_rule_replay.h"

namespace vmm {

// Rows print as their id in gtest output.
void PrintTo(const VmmRule& rule, std::ostream* os) { *os << rule.id; }

namespace testing_cuda {
namespace {

class CudaVmmRuleTest : public CudaEngineTest, public ::testing::WithParamInterface<VmmRule> {};

TEST_P(CudaVmmRuleTest, DriverAnswersAsTheTableSays) {
  const VmmRule& rule = GetParam();
  if (gran_ != kVmmRuleGranularity) {
    GTEST_SKIP() << "the rows assume a " << kVmmRuleGranularity
                 << "-byte granularity; this device has " << gran_;
  }
  if (rule.driver == DriverVerdict::kAcceptsUnsafely || rule.driver == DriverVerdict::kFaults) {
    GTEST_SKIP() << "never sent to the driver (" << DriverVerdictName(rule.driver) << ")";
  }
  if (rule.blocks_only && rule.driver != DriverVerdict::kCrashes) {
    GTEST_SKIP() << "sent from isolate blocks' children only (scenarios/unsafe_calls_in_blocks)";
  }
  std::vector<Diagnostic> d;
  std::optional<Scenario> scenario =
      ParseScenario(std::string(kVmmRuleScenarioHeader) + std::string(rule.steps), "rule.yaml", &d);
  ASSERT_TRUE(scenario.has_value()) << FormatDiagnostics(d);
  Status last;
  ASSERT_OK(testing_rules::ReplayOnEngine(*scenario, engine_.get(), &last));
  std::printf("rule %s: %s\n", std::string(rule.id).c_str(),
              last.ok() ? "CUDA_SUCCESS" : last.message().c_str());
  if (rule.driver == DriverVerdict::kCrashes) {
    // The engine knows the handle is dead and never hands it to the driver.
    EXPECT_EQ(last.code(), Code::kRuntime) << last.message();
    EXPECT_NE(last.message().find("unknown allocation handle"), std::string::npos)
        << last.message();
    return;
  }
  if (rule.error.empty()) {
    EXPECT_TRUE(last.ok()) << last.message();
    return;
  }
  EXPECT_EQ(last.code(), Code::kRuntime) << last.message();
  // A driver call names itself and its CUresult; a runtime call (cudaGraphInstantiateWithFlags
  // for the row's cuGraphInstantiateWithFlags) its cudaError, which cuda_error() maps back.
  const std::string call(rule.driver_call);
  const bool runtime = last.message().find(": cuda" + call.substr(2) + "(") != std::string::npos;
  EXPECT_TRUE(runtime || last.message().find(": " + call + "(") != std::string::npos)
      << last.message();
  if (!runtime) {
    EXPECT_NE(last.message().find(" failed: " + std::string(rule.error) + " ("), std::string::npos)
        << last.message();
  }
  ASSERT_NE(last.cuda_error(), nullptr);
  EXPECT_EQ(std::string(last.cuda_error()), rule.error);
  // A refused call leaves nothing behind: the engine still computes.
  DevicePtr va = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(gran_, &va));
  ASSERT_OK(engine_->Fill(va, 1024, 3, nullptr));
  ASSERT_OK(engine_->Synchronize());
}

INSTANTIATE_TEST_SUITE_P(Rows, CudaVmmRuleTest, ::testing::ValuesIn(VmmRules()),
                         [](const ::testing::TestParamInfo<VmmRule>& info) {
                           return std::string(info.param.id);
                         });

}  // namespace
}  // namespace testing_cuda
}  // namespace vmm
