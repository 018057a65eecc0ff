#include "runner/report/diff.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "runner/report/atomic_file.h"
#include "runner/report/diff_format.h"
#include "runner/report/diff_run.h"
#include "runner/report/report_io.h"
#include "runner/report/report_test_util.h"

namespace vmm::report {
namespace {

using testutil::SampleReport;

// Step of SampleReport() by name.
StepRecord& At(Report& r, const std::string& name) {
  for (StepRecord& s : r.steps)
    if (s.name == name) return s;
  ADD_FAILURE() << "no step " << name;
  return r.steps.front();
}

DiffResult Diff(const Report& base, const Report& now, const DiffConfig& config = {}) {
  DiffResult result;
  DiffReports(base, now, config, &result);
  return result;
}

// "kind|step|field|base|new|reason" of every row, for exact comparisons.
std::vector<std::string> Rows(const DiffResult& result) {
  std::vector<std::string> out;
  for (const DiffRow& r : result.rows) {
    out.push_back(std::string(RowKindName(r.kind)) + "|" + r.step + "|" + r.field + "|" +
                  r.base.value_or("<none>") + "|" + r.now.value_or("<none>") + "|" + r.reason);
  }
  return out;
}

using Lines = std::vector<std::string>;

TEST(DiffTest, ReportDiffedWithItselfIsClean) {
  const DiffResult r = Diff(SampleReport(), SampleReport());
  EXPECT_EQ(Rows(r), Lines{});
  EXPECT_EQ(r.scenarios, 1);
  EXPECT_EQ(r.steps, 13);  // 12 steps + the capture's body
  EXPECT_FALSE(DiffFails(r, DefaultFailOn()));
}

// A query's raw answers are device facts: the H200 and the host twin report different granted
// properties, granularities and free bytes for the same scenario. Only the verdict and the
// expectation (from the scenario) are compared; the actual of a query op is not.
TEST(DiffTest, QueryAnswersAreDeviceFactsNotCompared) {
  auto query = [](const std::string& op, const std::string& actual, Details details) {
    Report r = SampleReport();
    StepRecord s;
    s.index = 99;
    s.name = "the query";
    s.named = true;
    s.op = op;
    s.details = std::move(details);
    CheckRecord c;
    c.expected = "used at least 4 MiB";
    c.actual = actual;
    c.verdict = Verdict::kPass;
    s.check = c;
    r.steps.push_back(s);
    return r;
  };
  for (const char* op : {"check_memory", "check_granularity", "check_properties", "check_range"}) {
    const Report h200 = query(
        op, "used 6 MiB", {{"free_now_bytes", int64_t{1} << 37}, {"granted_compression", true}});
    const Report host = query(
        op, "used 4 MiB", {{"free_now_bytes", int64_t{1} << 34}, {"granted_compression", false}});
    EXPECT_EQ(Rows(Diff(h200, host)), Lines{}) << op;
  }
  Report failing = query("check_memory", "used 0 B", {});
  failing.steps.back().check->verdict = Verdict::kFail;
  EXPECT_EQ(Rows(Diff(query("check_memory", "used 4 MiB", {}), failing)).size(), 1u)
      << "a flipped verdict is still a row";
}

TEST(DiffTest, VolatileFieldsAreIgnored) {
  Report now = SampleReport();
  now.started_at = "2030-01-01T00:00:00Z";
  now.argv = {"other"};
  now.git_sha = "fff";
  now.backend_reason = "auto";
  now.device.total_memory = 1;
  for (StepRecord& s : now.steps) {
    s.line += 10;
    for (auto& [key, value] : s.addresses) value = std::string("0x1000");
  }
  At(now, "A kept its address").details.push_back({"note", std::string("x")});
  EXPECT_EQ(Rows(Diff(SampleReport(), now)), Lines{});
}

TEST(DiffTest, FlippedVerdictIsOneRegression) {
  Report now = SampleReport();
  StepRecord& s = At(now, "replay computes A·B");
  s.status = StepStatus::kFailed;
  s.check->verdict = Verdict::kFail;
  s.check->actual = "3 mismatches";
  const DiffResult r = Diff(SampleReport(), now);
  EXPECT_EQ(Rows(r), Lines{"regression|replay computes A·B|verdict|pass|fail|verdict pass → fail "
                           "(expected pass, got 3 mismatches)"});
  EXPECT_TRUE(DiffFails(r, DefaultFailOn()));
}

TEST(DiffTest, FixedCheckIsAnImprovement) {
  Report now = SampleReport();
  StepRecord& s = At(now, "new result differs from the old");
  s.check->actual = "different";
  s.check->verdict = Verdict::kPass;
  const DiffResult r = Diff(SampleReport(), now);
  EXPECT_EQ(Rows(r), Lines{"improvement|new result differs from the old|actual|equal|different|"
                           "data equal → different (verdict fail → pass)"});
  EXPECT_FALSE(DiffFails(r, DefaultFailOn()));
}

TEST(DiffTest, ChangedUpdateResultCode) {
  Report now = SampleReport();
  StepRecord& s = At(now, "update e1 from g2");
  s.status = StepStatus::kFailed;
  s.check->actual = "error_topology_changed";
  s.check->verdict = Verdict::kFail;
  EXPECT_EQ(Rows(Diff(SampleReport(), now)),
            Lines{"regression|update e1 from g2|actual|success|error_topology_changed|update "
                  "result success → error_topology_changed (verdict pass → fail)"});
}

// A step with expect_error: the error the driver returned is compared exactly, whatever the op.
TEST(DiffTest, ChangedDriverErrorOfAnExpectedRefusal) {
  Report base = SampleReport();
  StepRecord& map = At(base, "map A (first)");
  map.expected_error = map.actual_error = "CUDA_ERROR_INVALID_VALUE";
  map.check = CheckRecord{map.expected_error, map.actual_error, Verdict::kPass, 0, {}};
  EXPECT_EQ(Rows(Diff(base, base)), Lines{});
  Report now = base;
  StepRecord& changed = At(now, "map A (first)");
  changed.status = StepStatus::kFailed;
  changed.actual_error = changed.check->actual = "CUDA_SUCCESS";
  changed.check->verdict = Verdict::kFail;
  EXPECT_EQ(Rows(Diff(base, now)),
            Lines{"regression|map A (first)|actual|CUDA_ERROR_INVALID_VALUE|CUDA_SUCCESS|driver "
                  "error CUDA_ERROR_INVALID_VALUE → CUDA_SUCCESS (verdict pass → fail)"});
}

TEST(DiffTest, ChangedResultCodeFailsEvenWhenTheVerdictHolds) {
  Report base = SampleReport(), now = SampleReport();
  At(base, "update e1 from g2").check->expected = "any";
  At(now, "update e1 from g2").check->expected = "any";
  At(now, "update e1 from g2").check->actual = "error_parameters_changed";
  EXPECT_EQ(Rows(Diff(base, now)),
            Lines{"regression|update e1 from g2|actual|success|error_parameters_changed|update "
                  "result success → error_parameters_changed"});
}

TEST(DiffTest, ChangedAddressRelationAndKernelParams) {
  Report now = SampleReport();
  StepRecord& a = At(now, "A kept its address");
  a.status = StepStatus::kFailed;
  a.check->actual = "different";
  a.check->verdict = Verdict::kFail;
  StepRecord& k = At(now, "captures are identical");
  k.status = StepStatus::kFailed;
  k.check->actual = "different";
  k.check->verdict = Verdict::kFail;
  EXPECT_EQ(Rows(Diff(SampleReport(), now)),
            (Lines{"regression|A kept its address|actual|same|different|address relation same → "
                   "different (verdict pass → fail)",
                   "regression|captures are identical|actual|identical|different|kernel params "
                   "identical → different (verdict pass → fail)"}));
}

TEST(DiffTest, MismatchCountsOfFailingDataChecks) {
  Report now = SampleReport();
  At(now, "updated exec computes A·B with the new data").check->mismatch_count = 5;
  EXPECT_EQ(Rows(Diff(SampleReport(), now)),
            Lines{"regression|updated exec computes A·B with the new data|mismatch_count|2|5|more "
                  "elements differ from the reference"});
  Report base = SampleReport();
  At(base, "A kept its address").check->mismatch_count = 7;  // passing: hashes decide
  EXPECT_EQ(Rows(Diff(base, SampleReport())), Lines{});
}

TEST(DiffTest, ChangedOrMissingHash) {
  Report now = SampleReport();
  At(now, "replay computes A·B").details[0].second = std::string("0x1");
  Report gone = SampleReport();
  At(gone, "replay computes A·B").details.erase(At(gone, "replay computes A·B").details.begin());
  EXPECT_EQ(Rows(Diff(SampleReport(), now)),
            Lines{"regression|replay computes A·B|c_hash|0x9e3779b97f4a7c15|0x1|data hash 'c_hash' "
                  "changed: the step saw or produced different data"});
  EXPECT_EQ(Rows(Diff(SampleReport(), gone)),
            Lines{"regression|replay computes A·B|c_hash|0x9e3779b97f4a7c15|<none>|data hash "
                  "'c_hash' is missing in NEW"});
  EXPECT_EQ(Rows(Diff(gone, SampleReport())),
            Lines{"info|replay computes A·B|c_hash|<none>|0x9e3779b97f4a7c15|data hash 'c_hash' "
                  "is new"});
}

// Data hashes of two schemes (kernels/datagen.h) are not compared: one info row says so, and
// everything else still is: a verdict, a graph's structure_hash (no data hash), a data hash gone
// missing. A report that names no scheme (before 1.3) is scheme 1; one scheme named on one side
// and implied on the other compares as usual.
TEST(DiffTest, DataHashesOfAnotherSchemeAreNotComparedTheRestIs) {
  auto with_structure = [](std::string hash) {
    Report r = SampleReport();
    At(r, "capture #2").details.push_back({"structure_hash", std::move(hash)});
    return r;
  };
  Report old_scheme = with_structure("0xaa");  // names no scheme: 1
  At(old_scheme, "replay computes A·B").details[0].second = std::string("0x1");
  Report now = with_structure("0xbb");
  now.data_hash_scheme = 2;
  StepRecord& a = At(now, "A kept its address");
  a.status = StepStatus::kFailed;
  a.check->actual = "different";
  a.check->verdict = Verdict::kFail;
  EXPECT_EQ(Rows(Diff(old_scheme, now)),
            (Lines{"info||data_hash_scheme|1|2|the data hashes were computed differently "
                   "(kernels/datagen.h) and are not compared: record the baseline again with "
                   "this vmm-run to compare them",
                   "regression|capture #2|structure_hash|0xaa|0xbb|data hash 'structure_hash' "
                   "changed: the step saw or produced different data",
                   "regression|A kept its address|actual|same|different|address relation same → "
                   "different (verdict pass → fail)"}));
  Report gone = with_structure("0xaa");
  gone.data_hash_scheme = 2;
  StepRecord& r = At(gone, "replay computes A·B");
  r.details.erase(r.details.begin());
  EXPECT_EQ(Rows(Diff(old_scheme, gone)),
            (Lines{"info||data_hash_scheme|1|2|the data hashes were computed differently "
                   "(kernels/datagen.h) and are not compared: record the baseline again with "
                   "this vmm-run to compare them",
                   "regression|replay computes A·B|c_hash|0x1|<none>|data hash 'c_hash' is "
                   "missing in NEW"}));
  Report named_one = SampleReport();
  named_one.data_hash_scheme = 1;
  At(old_scheme, "capture #2").details.clear();
  EXPECT_EQ(Rows(Diff(SampleReport(), named_one)), Lines{});
  EXPECT_EQ(Rows(Diff(old_scheme, named_one)),
            Lines{"regression|replay computes A·B|c_hash|0x1|0x9e3779b97f4a7c15|data hash 'c_hash' "
                  "changed: the step saw or produced different data"});
}

// Compares steps that ran once too (off by default).
DiffConfig SingleRuns() {
  DiffConfig config;
  config.timing.single_runs = true;
  return config;
}

TEST(DiffTest, SingleRunTimingsAreNotComparedByDefault) {
  Report base = SampleReport(), now = SampleReport();
  At(now, "map A (first)").wall_us = 1000;
  At(now, "replay g1").gpu_us = 1000;  // the one-shot value of a repeated step: stats decide
  EXPECT_EQ(Rows(Diff(base, now)), Lines{});
  EXPECT_EQ(Diff(base, now, SingleRuns()).Count(RowKind::kRegression), 1);
}

TEST(DiffTest, TimingBeyondThresholdRegresses) {
  Report base = SampleReport(), now = SampleReport();
  At(base, "map A (first)").wall_us = 12.1;
  At(now, "map A (first)").wall_us = 19.8;
  const DiffResult r = Diff(base, now, SingleRuns());
  EXPECT_EQ(Rows(r), Lines{"regression|map A (first)|wall_us|12.1|19.8|wall_us 12.1 → 19.8: +64% "
                           "> 25% and +7.7 µs > 5 µs floor"});
  EXPECT_TRUE(DiffFails(r, DefaultFailOn()));
}

TEST(DiffTest, TimingNoiseInsideTheThresholdPasses) {
  Report base = SampleReport(), now = SampleReport();
  At(base, "map A (first)").wall_us = 1.0;
  At(now, "map A (first)").wall_us = 5.5;  // +450% but under the 5 µs floor
  At(base, "captures are identical").wall_us = 100;
  At(now, "captures are identical").wall_us = 124;  // +24 µs but under 25%
  At(now, "replay g1").gpu_us = 16.5;               // gpu_us noise
  EXPECT_EQ(Rows(Diff(base, now, SingleRuns())), Lines{});
}

TEST(DiffTest, RepeatedStepsCompareMediansWithTheirSpread) {
  Report base = SampleReport(), now = SampleReport();
  // Base median 16.2, p99 19.0: spread 2.8, 3 x spread = 8.4 µs dominates 25% (4.05) and 5 µs.
  At(now, "replay g1").wall_stats->median_us = 24.0;  // +7.8: noise
  EXPECT_EQ(Rows(Diff(base, now)), Lines{});
  At(now, "replay g1").wall_stats->median_us = 25.0;  // +8.8: beyond
  EXPECT_EQ(
      Rows(Diff(base, now)),
      Lines{"regression|replay g1|wall_us median|16.2|25.0|wall_us median 16.2 → 25.0: +54% > "
            "25% and +8.8 µs > 5 µs floor and > 8.4 µs (3 × p99-median spread 2.8 µs)"});
}

TEST(DiffTest, FoldedRecordsCompareTheirCounts) {
  Report base = SampleReport(), now = SampleReport();
  At(base, "replay g1").folded = FoldRecord{10000, 90, "replay g1 (cycle 9999)", {}};
  At(now, "replay g1").folded = FoldRecord{10000, 90, "replay g1 (cycle 9999)", {}};
  EXPECT_EQ(Rows(Diff(base, now)), Lines{});
  At(now, "replay g1").folded->count = 9999;
  EXPECT_EQ(Rows(Diff(base, now)),
            Lines{"regression|replay g1|folded count|10000|9999|the record stands for 10000 "
                  "runs in BASE and 9999 in NEW"});
}

TEST(DiffTest, ImprovementsAreReportedAndPass) {
  Report base = SampleReport(), now = SampleReport();
  At(now, "replay g1").gpu_stats->median_us = 5.0;
  const DiffResult r = Diff(base, now);
  EXPECT_EQ(Rows(r), Lines{"improvement|replay g1|gpu_us median|15.8|5.0|gpu_us median 15.8 → "
                           "5.0: -68% beyond 25% and -10.8 µs beyond 5 µs floor and beyond 4.5 µs "
                           "(3 × p99-median spread 1.5 µs)"});
  EXPECT_FALSE(DiffFails(r, DefaultFailOn()));
}

TEST(DiffTest, ThresholdsComeFromTheConfig) {
  Report base = SampleReport(), now = SampleReport();
  At(now, "map A (first)").wall_us = 100;
  DiffConfig off = SingleRuns();
  off.timing.enabled = false;
  EXPECT_EQ(Rows(Diff(base, now, off)), Lines{});
  DiffConfig wall_off = SingleRuns();
  wall_off.metrics["wall_us"].enabled = false;
  EXPECT_EQ(Rows(Diff(base, now, wall_off)), Lines{});
  DiffConfig strict;
  strict.metrics["wall_us"] =
      TimingThreshold{.single_runs = true, .relative = 0.1, .floor_us = 0.1, .spread_factor = 0};
  At(now, "map A (first)").wall_us = 1.7;
  EXPECT_EQ(Rows(Diff(base, now, strict)),
            Lines{"regression|map A (first)|wall_us|1.5|1.7|wall_us 1.5 → 1.7: +13% > 10% and "
                  "+0.20 µs > 0.1 µs floor"});
}

TEST(DiffTest, MissingAddedAndAmbiguousSteps) {
  Report now = SampleReport();
  now.steps.erase(now.steps.begin() + 6);  // "A kept its address"
  StepRecord extra = now.steps[0];
  extra.name = "extra";
  extra.named = true;
  now.steps.push_back(extra);
  now.steps.push_back(now.steps[1]);  // "map A (first)" twice
  const DiffResult r = Diff(SampleReport(), now);
  EXPECT_EQ(Rows(r), (Lines{"ambiguous|map A (first)|step|1 step|2 steps|'map A (first)' names 1 "
                            "step in BASE and 2 steps in NEW: give the steps unique names to "
                            "compare them",
                            "missing|A kept its address|step|check_address|<none>|step 'A kept "
                            "its address' is in BASE only",
                            "added|extra|step|<none>|reserve|step 'extra' is in NEW only"}));
  EXPECT_TRUE(DiffFails(r, DefaultFailOn()));
  EXPECT_FALSE(DiffFails(r, {RowKind::kRegression}));
  EXPECT_TRUE(DiffFails(r, {RowKind::kAmbiguous}));
}

TEST(DiffTest, UnnamedStepsMatchByOpAndIndex) {
  Report now = SampleReport();
  now.steps[0].op = "create";  // "reserve #0" becomes "create #0"
  now.steps[0].name = "create #0";
  EXPECT_EQ(Rows(Diff(SampleReport(), now)),
            (Lines{"missing|reserve #0|step|reserve|<none>|step 'reserve #0' is in BASE only",
                   "added|create #0|step|<none>|create|step 'create #0' is in NEW only"}));
}

TEST(DiffTest, StatusChangesAndCaptureBodies) {
  Report now = SampleReport();
  now.steps[2].body[0].details.push_back({"out_hash", std::string("0x2")});
  now.steps[10].status = StepStatus::kOk;      // the failed unmap now works
  now.steps[11].status = StepStatus::kFailed;  // the skipped free now fails
  now.steps[11].error = "free: still mapped";
  EXPECT_EQ(Rows(Diff(SampleReport(), now)),
            (Lines{"info|capture #2 / matmul #0|out_hash|<none>|0x2|data hash 'out_hash' is new",
                   "improvement|unmap #10|status|failed|ok|status failed → ok",
                   "regression|free #11|status|skipped|failed|status skipped → failed: free: "
                   "still mapped"}));
}

TEST(DiffTest, BackendAndDeviceMismatchFailUnlessIgnored) {
  Report now = SampleReport();
  now.backend = "cuda";
  now.device.name = "NVIDIA H200";
  now.device.driver_version = "13.0";
  EXPECT_EQ(Rows(Diff(SampleReport(), now)),
            (Lines{"regression||backend|host|cuda|backend differs: results and timings are "
                   "specific to it (--ignore-device compares anyway)",
                   "regression||device|host (x86_64, Linux 6.1)|NVIDIA H200|device differs: "
                   "results and timings are specific to it (--ignore-device compares anyway)",
                   "info||driver_version|6.1.0|13.0|the driver changed: differences below may "
                   "come from it"}));
  DiffConfig ignore;
  ignore.ignore_device = true;
  const DiffResult r = Diff(SampleReport(), now, ignore);
  EXPECT_EQ(r.Count(RowKind::kInfo), 3);
  EXPECT_FALSE(DiffFails(r, DefaultFailOn()));
}

TEST(DiffTest, ParseFailOn) {
  StatusOr<FailOn> f = ParseFailOn("regression, ambiguous");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, (FailOn{RowKind::kRegression, RowKind::kAmbiguous}));
  EXPECT_EQ(ParseFailOn("regresion").status().message(),
            "--fail-on: unknown kind 'regresion', did you mean 'regression'? (expected a "
            "comma-separated list of regression, missing, added, ambiguous)");
  EXPECT_EQ(ParseFailOn("improvement").status().message(),
            "--fail-on: 'improvement' rows never fail a diff (expected a comma-separated list of "
            "regression, missing, added, ambiguous)");
  EXPECT_EQ(ParseFailOn("missing,").status().message(),
            "--fail-on: empty kind (expected a comma-separated list of regression, missing, "
            "added, ambiguous)");
}

}  // namespace
}  // namespace vmm::report
