// The VMM rule table (runner/vocab/vmm_rules.h), row by row, on both sides: the validator gives the
// row's exact message, and the host engine, sent the same calls directly, refuses the last one with
// the CUDA error name the H200 driver returns (or accepts it where the driver does). The same rows
// go to the real driver in runner/engine/cuda/cuda_vmm_rules_test.cc.
#include "runner/vocab/vmm_rules.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "runner/engine/host/host_engine.h"
#include "runner/exec/executor.h"
#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"
#include "tests/vmm_rule_replay.h"

namespace vmm {

// Rows print as their id in gtest output.
void PrintTo(const VmmRule& rule, std::ostream* os) { *os << rule.id; }

namespace {

std::string ScenarioText(const VmmRule& rule, bool without_last_step = false) {
  std::string steps(rule.steps);
  if (without_last_step) steps.erase(steps.rfind("  - "));
  return std::string(kVmmRuleScenarioHeader) + steps;
}

// Parse + plan diagnostics, as the CLI prints them.
std::string Validate(const std::string& text) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(text, std::string(kVmmRuleScenarioFile), &d);
  if (s) BuildPlan(*s, &d);
  return FormatDiagnostics(d);
}

TEST(VmmRulesTable, RowsAreWellFormed) {
  std::set<std::string_view> ids;
  ASSERT_GE(VmmRules().size(), 15u);
  for (const VmmRule& rule : VmmRules()) {
    SCOPED_TRACE(std::string(rule.id));
    EXPECT_TRUE(ids.insert(rule.id).second) << "duplicate id";
    EXPECT_TRUE(std::regex_match(std::string(rule.id), std::regex("[a-z]+(_[a-z]+)*")));
    EXPECT_FALSE(rule.rule.empty());
    EXPECT_EQ(rule.steps.substr(0, 4), "  - ");
    EXPECT_EQ(rule.steps.back(), '\n');
    EXPECT_TRUE(std::regex_match(std::string(rule.validator_at), std::regex("[0-9]+:[0-9]+")));
    EXPECT_FALSE(rule.validator_message.empty());
    EXPECT_FALSE(rule.driver_call.empty());
    // Only a call the driver accepts has no error name.
    if (rule.driver == DriverVerdict::kAccepts) {
      EXPECT_TRUE(rule.error.empty());
    } else {
      EXPECT_TRUE(std::regex_match(std::string(rule.error), std::regex("CUDA_ERROR_[A-Z_]+")));
    }
    EXPECT_EQ(FindVmmRule(rule.id), &rule);
  }
  EXPECT_EQ(FindVmmRule("no_such_rule"), nullptr);
  EXPECT_STREQ(DriverVerdictName(DriverVerdict::kAcceptsUnsafely), "accepts_unsafely");
}

// docs/backends.md carries the table for people: one line per rule with its error and verdict.
TEST(VmmRulesTable, DocsListEveryRule) {
  std::ifstream in(std::string(VMMRUN_SOURCE_DIR) + "/docs/backends.md");
  std::stringstream docs;
  docs << in.rdbuf();
  std::map<std::string, std::string> lines;  // id -> its table line, in the rules section
  std::string line;
  bool in_section = false;
  while (std::getline(docs, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## The VMM rules, one table";
    std::smatch m;
    if (in_section && std::regex_search(line, m, std::regex("^\\| `([a-z_]+)` \\|"))) {
      lines[m[1]] = line;
    }
  }
  EXPECT_FALSE(lines.empty()) << "no section '## The VMM rules, one table' in docs/backends.md";
  for (const VmmRule& rule : VmmRules()) {
    SCOPED_TRACE(std::string(rule.id));
    auto it = lines.find(std::string(rule.id));
    ASSERT_NE(it, lines.end()) << "docs/backends.md has no table line for the rule";
    const std::string want_error =
        rule.error.empty() ? std::string("success") : "`" + std::string(rule.error) + "`";
    EXPECT_NE(it->second.find("`" + std::string(rule.driver_call) + "`"), std::string::npos)
        << it->second;
    EXPECT_NE(it->second.find(want_error), std::string::npos) << it->second;
    EXPECT_NE(it->second.find(DriverVerdictName(rule.driver)), std::string::npos) << it->second;
    const std::string with_expect_error = rule.blocks_only      ? "| in isolate blocks |"
                                          : rule.SafeOnDriver() ? "| let through |"
                                                                : "| never sent |";
    EXPECT_NE(it->second.find(with_expect_error), std::string::npos) << it->second;
    lines.erase(it);
  }
  for (const auto& [id, l] : lines) ADD_FAILURE() << "docs/backends.md lists unknown rule " << id;
}

class VmmRuleTest : public ::testing::TestWithParam<VmmRule> {};

TEST_P(VmmRuleTest, ValidatorGivesTheRowsMessage) {
  const VmmRule& rule = GetParam();
  EXPECT_EQ(Validate(ScenarioText(rule)),
            std::string(kVmmRuleScenarioFile) + ":" + std::string(rule.validator_at) +
                ": error: " + std::string(rule.validator_message) + "\n");
  // Every step before the last is legal: the row is about its last step alone.
  if (rule.steps.find("  - ", 1) != std::string_view::npos) {
    EXPECT_EQ(Validate(ScenarioText(rule, /*without_last_step=*/true)), "");
  }
}

TEST_P(VmmRuleTest, HostEngineAnswersAsTheDriver) {
  const VmmRule& rule = GetParam();
  std::vector<Diagnostic> d;
  std::optional<Scenario> scenario =
      ParseScenario(ScenarioText(rule), std::string(kVmmRuleScenarioFile), &d);
  ASSERT_TRUE(scenario.has_value()) << FormatDiagnostics(d);
  ASSERT_EQ(scenario->granularity.value, kVmmRuleGranularity);
  StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine({kVmmRuleGranularity});
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  Status last;
  ASSERT_TRUE(testing_rules::ReplayOnEngine(*scenario, engine->get(), &last).ok());
  if (rule.error.empty()) {
    EXPECT_TRUE(last.ok()) << last.message();
    return;
  }
  EXPECT_EQ(last.code(), Code::kRuntime) << last.message();
  const std::string prefix = std::string(rule.driver_call) + ": " + std::string(rule.error) + ": ";
  EXPECT_EQ(last.message().substr(0, prefix.size()), prefix) << last.message();
  // The name is a field of the Status too (what expect_error compares), not only text.
  ASSERT_NE(last.cuda_error(), nullptr);
  EXPECT_EQ(std::string(last.cuda_error()), rule.error);
  // Refused without effect: the engine still cleans up (its destructor releases what is left).
}

// With expect_error naming the row's error, the validator lets through what the driver refuses
// safely, and the whole run on the host twin passes: same code, state proven unchanged.
TEST_P(VmmRuleTest, ExpectErrorRunsTheRefusalOnTheTwin) {
  const VmmRule& rule = GetParam();
  if (rule.driver != DriverVerdict::kRefuses) GTEST_SKIP() << DriverVerdictName(rule.driver);
  if (rule.blocks_only) GTEST_SKIP() << "let through in isolate blocks only";
  std::string steps(rule.steps);
  steps.insert(steps.size() - 2, ", name: refused, expect_error: " + std::string(rule.error));
  std::vector<Diagnostic> d;
  std::optional<Scenario> scenario = ParseScenario(std::string(kVmmRuleScenarioHeader) + steps,
                                                   std::string(kVmmRuleScenarioFile), &d);
  ASSERT_TRUE(scenario.has_value()) << FormatDiagnostics(d);
  Plan plan = BuildPlan(*scenario, &d);
  ASSERT_EQ(FormatDiagnostics(d), "");
  StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine({kVmmRuleGranularity});
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  RunOutcome out = RunPlan(plan, **engine, nullptr);
  const report::StepRecord& last = out.steps.back();
  EXPECT_EQ(out.summary.exit_code, 0) << last.error;
  EXPECT_EQ(last.actual_error, rule.error);
  ASSERT_TRUE(last.check);
  EXPECT_EQ(last.check->verdict, report::Verdict::kPass);
}

INSTANTIATE_TEST_SUITE_P(Rows, VmmRuleTest, ::testing::ValuesIn(VmmRules()),
                         [](const ::testing::TestParamInfo<VmmRule>& info) {
                           return std::string(info.param.id);
                         });

}  // namespace
}  // namespace vmm
