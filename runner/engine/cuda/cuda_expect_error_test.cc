// expect_error and shareable handles on the real driver (vmm_gpu_tests, label "gpu"; every test
// skips without a device):
//   - each rule of runner/vocab/vmm_rules.h that expect_error lets through, run through the whole
//     pipeline (validator, executor, CUDA engine): the driver returns the table's code and the
//     executor proves the state unchanged (inventory with cuMemGetAccess, checksums);
//   - scenarios/driver_refusals.yaml and scenarios/ipc_same_process.yaml pass on the device;
//   - export and import round-trip at the engine: two handles, two addresses, one memory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>

#include "runner/base/unique_fd.h"
#include "runner/engine/cuda/cuda_test_util.h"
#include "runner/exec/executor.h"
#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"
#include "runner/vocab/vmm_rules.h"

namespace vmm {

// Rows print as their id in gtest output.
void PrintTo(const VmmRule& rule, std::ostream* os);

namespace testing_cuda {
namespace {

std::string Detail(const report::StepRecord& r, const std::string& key) {
  for (const auto& [k, v] : r.details) {
    if (k != key) continue;
    if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
    if (const std::string* s = std::get_if<std::string>(&v)) return *s;
  }
  return "";
}

// Plans and runs `scenario` on `engine`; the plan must be clean.
RunOutcome PlanAndRun(const Scenario& scenario, Engine& engine) {
  std::vector<Diagnostic> d;
  Plan plan = BuildPlan(scenario, &d);
  EXPECT_EQ(FormatDiagnostics(d), "");
  return RunPlan(plan, engine, nullptr);
}

class CudaExpectErrorRuleTest : public CudaEngineTest,
                                public ::testing::WithParamInterface<VmmRule> {};

TEST_P(CudaExpectErrorRuleTest, TheDriverRefusesWithTheTablesCodeAndChangesNothing) {
  const VmmRule& rule = GetParam();
  if (gran_ != kVmmRuleGranularity) GTEST_SKIP() << "the rows assume a 2 MiB granularity";
  if (rule.blocks_only) GTEST_SKIP() << "sent from isolate blocks' children only";
  if (rule.driver != DriverVerdict::kRefuses) {
    GTEST_SKIP() << "expect_error "
                 << (rule.SafeOnDriver() ? "lets it through, but the driver "
                                           "accepts it"
                                         : "never sends it");
  }
  std::string steps(rule.steps);
  steps.insert(steps.size() - 2, ", name: refused, expect_error: " + std::string(rule.error));
  std::vector<Diagnostic> d;
  std::optional<Scenario> scenario =
      ParseScenario(std::string(kVmmRuleScenarioHeader) + steps, "rule.yaml", &d);
  ASSERT_TRUE(scenario.has_value()) << FormatDiagnostics(d);
  RunOutcome out = PlanAndRun(*scenario, *engine_);
  const report::StepRecord& last = out.steps.back();
  std::printf("rule %s: expected %s, driver returned %s%s\n", std::string(rule.id).c_str(),
              last.expected_error.c_str(), last.actual_error.c_str(),
              last.error.empty() ? "" : (" (" + last.error + ")").c_str());
  EXPECT_EQ(last.actual_error, rule.error);
  EXPECT_EQ(last.status, report::StepStatus::kOk) << last.error;
  EXPECT_EQ(Detail(last, "state_unchanged"), "true");
  EXPECT_EQ(Detail(last, "rule"), rule.id);
  EXPECT_EQ(out.summary.exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(Rows, CudaExpectErrorRuleTest, ::testing::ValuesIn(VmmRules()),
                         [](const ::testing::TestParamInfo<VmmRule>& info) {
                           return std::string(info.param.id);
                         });

class CudaScenarioTest : public CudaEngineTest,
                         public ::testing::WithParamInterface<const char*> {};

TEST_P(CudaScenarioTest, PassesOnTheDevice) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> scenario = LoadScenarioFile(
      std::string(VMMRUN_SOURCE_DIR) + "/scenarios/" + GetParam() + ".yaml", {}, &d);
  ASSERT_TRUE(scenario.has_value()) << FormatDiagnostics(d);
  RunOutcome out = PlanAndRun(*scenario, *engine_);
  for (const report::StepRecord& r : out.steps) {
    if (r.expected_error.empty() && r.status == report::StepStatus::kOk) continue;
    std::printf("%s: %s expected %s, got %s%s\n", GetParam(), r.name.c_str(),
                r.expected_error.c_str(), r.actual_error.c_str(),
                r.error.empty() ? "" : (": " + r.error).c_str());
    EXPECT_EQ(r.status, report::StepStatus::kOk) << r.name << ": " << r.error;
  }
  EXPECT_EQ(out.summary.exit_code, 0) << out.summary.result;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, CudaScenarioTest,
                         ::testing::Values("driver_refusals", "ipc_same_process"));

TEST_F(CudaEngineTest, ExportAndImportRoundTrip) {
  AllocProps props;
  props.size = gran_;
  props.handle_types = kHandleTypePosixFd;
  AllocHandle p;
  ASSERT_OK(engine_->Create(props, &p));
  int raw = -1;
  ASSERT_OK(engine_->Export(p, &raw));
  UniqueFd fd(raw);
  AllocHandle q;
  ASSERT_OK(engine_->Import(fd.get(), &q));
  fd.reset();  // the imported handle does not need the descriptor
  DevicePtr a = 0, b = 0;
  ASSERT_OK(engine_->Reserve(gran_, 0, &a));
  ASSERT_OK(engine_->Reserve(gran_, 0, &b));
  ASSERT_OK(engine_->Map(a, gran_, 0, p));
  ASSERT_OK(engine_->Map(b, gran_, 0, q));
  // A mapping without access: the driver answers with no access, or not at all.
  EngineInventory inv;
  ASSERT_OK(engine_->Inventory(&inv));
  ASSERT_EQ(inv.mappings.size(), 2u);
  const int own = engine_->info().ordinal;
  ASSERT_GT(inv.mappings[0].access.size(), static_cast<size_t>(own));
  std::printf("cuMemGetAccess before set_access: %s\n",
              inv.mappings[0].access_known ? AccessName(inv.mappings[0].access[own]) : "no answer");
  EXPECT_TRUE(!inv.mappings[0].access_known || inv.mappings[0].access[own] == Access::kNone);
  ASSERT_OK(engine_->SetAccess(a, gran_, Access::kReadWrite));
  ASSERT_OK(engine_->SetAccess(b, gran_, Access::kRead));
  ASSERT_OK(engine_->Inventory(&inv));
  EXPECT_EQ(inv.mappings[0].va < inv.mappings[1].va ? inv.mappings[0].va : inv.mappings[1].va,
            a < b ? a : b);
  for (const EngineInventory::Mapping& m : inv.mappings) {
    EXPECT_TRUE(m.access_known);
    ASSERT_GT(m.access.size(), static_cast<size_t>(own));
    EXPECT_EQ(m.access[own], m.va == a ? Access::kReadWrite : Access::kRead);
    EXPECT_EQ(m.handle, m.va == a ? p.value : q.value);
  }
  const uint64_t words = gran_ / 4;
  ASSERT_OK(engine_->Fill(a, words, 77, nullptr));
  DataCompareResult same;
  ASSERT_OK(engine_->CompareData(a, DataRef::Device(b), words, CompareOptions{}, &same));
  EXPECT_EQ(same.mismatches, 0u) << "the import is not the exported memory";
  SyncNote note;
  ASSERT_OK(engine_->Unmap(a, gran_, &note));
  ASSERT_OK(engine_->Release(p, &note));
  uint64_t hash = 0;
  ASSERT_OK(engine_->Checksum(b, words, &hash));  // the import keeps the memory
}

}  // namespace
}  // namespace testing_cuda
}  // namespace vmm
