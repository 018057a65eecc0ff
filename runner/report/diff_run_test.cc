// RunDiff end to end: files and directories on disk, exit codes, and the three renderings.
#include "runner/report/diff_run.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "runner/report/atomic_file.h"
#include "runner/report/report_io.h"
#include "runner/report/report_test_util.h"

namespace vmm::report {
namespace {

using testutil::SampleReport;
using testutil::TempDir;

struct Outcome {
  int code = -1;
  std::string out, err;
};

Outcome Diff(const std::string& base, const std::string& now,
             DiffOutput output = DiffOutput::kTable, bool explain = false,
             FailOn fail_on = DefaultFailOn()) {
  DiffRequest request;
  request.base = base;
  request.now = now;
  request.output = output;
  request.format.explain = explain;
  request.format.fail_on = std::move(fail_on);
  Outcome o;
  o.code = RunDiff(request, &o.out, &o.err);
  return o;
}

std::string Write(const std::string& path, const Report& r) {
  EXPECT_TRUE(WriteReport(r, path).ok());
  return path;
}

Report Named(const std::string& name) {
  Report r = SampleReport();
  r.scenario_name = name;
  return r;
}

// SampleReport with the update's result code changed and a replay 10 µs faster.
Report Regressed() {
  Report r = SampleReport();
  r.steps[8].status = StepStatus::kFailed;
  r.steps[8].check->actual = "error_topology_changed";
  r.steps[8].check->verdict = Verdict::kFail;
  r.steps[3].gpu_stats->median_us = 5.0;
  return r;
}

TEST(DiffRunTest, SelfDiffExitsZero) {
  const std::string dir = TempDir("self");
  const std::string a = Write(dir + "/a.json", SampleReport());
  const Outcome o = Diff(a, a);
  EXPECT_EQ(o.code, kDiffClean);
  EXPECT_EQ(o.out,
            "no differences\n1 scenario, 13 steps compared: 0 regressions, 0 improvements, 0 "
            "missing, 0 added, 0 ambiguous, 0 info; result: pass (fails on regression, missing)\n");
  EXPECT_EQ(o.err, "");
}

TEST(DiffRunTest, RegressionExitsOneWithAnAlignedTable) {
  const std::string dir = TempDir("table");
  const std::string a = Write(dir + "/a.json", SampleReport());
  const std::string b = Write(dir + "/b.json", Regressed());
  const Outcome o = Diff(a, b, DiffOutput::kTable, /*explain=*/true);
  EXPECT_EQ(o.code, kDiffFailed);
  EXPECT_EQ(o.out,
            "KIND         SCENARIO      STEP               FIELD          BASE     NEW\n"
            "improvement  graph_update  replay g1          gpu_us median  15.8     5.0\n"
            "    why: gpu_us median 15.8 → 5.0: -68% beyond 25% and -10.8 µs beyond 5 µs floor and "
            "beyond 4.5 µs (3 × p99-median spread 1.5 µs)\n"
            "regression   graph_update  update e1 from g2  actual         success  "
            "error_topology_changed\n"
            "    why: update result success → error_topology_changed (verdict pass → fail)\n"
            "1 scenario, 13 steps compared: 1 regression, 1 improvement, 0 missing, 0 added, 0 "
            "ambiguous, 0 info; result: fail (fails on regression, missing)\n");
}

TEST(DiffRunTest, Markdown) {
  const std::string dir = TempDir("markdown");
  const std::string a = Write(dir + "/a.json", SampleReport());
  const std::string b = Write(dir + "/b.json", Regressed());
  const Outcome o = Diff(a, b, DiffOutput::kMarkdown, /*explain=*/false);
  EXPECT_EQ(o.code, kDiffFailed);
  EXPECT_EQ(o.out, "### vmm-run diff: :x: fail\n\n`" + a + "` → `" + b +
                       "`: 1 scenario, 13 steps compared: 1 regression, 1 improvement, 0 missing, "
                       "0 added, 0 ambiguous, 0 info (fails on regression, missing).\n\n"
                       "| kind | scenario | step | field | base | new |\n"
                       "|---|---|---|---|---|---|\n"
                       "| improvement | graph_update | replay g1 | gpu_us median | 15.8 | 5.0 |\n"
                       "| **regression** | graph_update | update e1 from g2 | actual | success | "
                       "error_topology_changed |\n");
}

TEST(DiffRunTest, JsonValidatesAgainstItsSchema) {
  const std::string dir = TempDir("json");
  const std::string a = Write(dir + "/a.json", SampleReport());
  const std::string b = Write(dir + "/b.json", Regressed());
  const Outcome o = Diff(a, b, DiffOutput::kJson);
  EXPECT_EQ(o.code, kDiffFailed);
  EXPECT_EQ(testutil::SchemaErrors(o.out, "schemas/diff.schema.json"), "");
  EXPECT_EQ(o.out.rfind("{\n  \"schema_version\": \"1.0\",\n", 0), 0u) << o.out;
  EXPECT_NE(o.out.find(R"("counts": {
    "regression": 1,
    "improvement": 1,)"),
            std::string::npos)
      << o.out;
  // The schema is not vacuous.
  std::string bad = o.out;
  bad.replace(bad.find(R"("kind": "regression")"), 20, R"("kind": "worse")");
  EXPECT_NE(testutil::SchemaErrors(bad, "schemas/diff.schema.json"), "");
}

TEST(DiffRunTest, ColourOnlyWhenAsked) {
  const std::string dir = TempDir("colour");
  const std::string a = Write(dir + "/a.json", SampleReport());
  const std::string b = Write(dir + "/b.json", Regressed());
  DiffRequest request;
  request.base = a;
  request.now = b;
  std::string out, err;
  RunDiff(request, &out, &err);
  EXPECT_EQ(out.find('\033'), std::string::npos);
  request.format.color = true;
  out.clear();
  RunDiff(request, &out, &err);
  EXPECT_NE(out.find("\033[31mregression\033[0m  "), std::string::npos) << out;
  EXPECT_NE(out.find("\033[32mimprovement\033[0m "), std::string::npos) << out;
}

TEST(DiffRunTest, DirectoriesPairByScenarioName) {
  const std::string base = TempDir("dirs_base"), now = TempDir("dirs_new");
  Write(base + "/1.json", Named("reuse"));
  Write(base + "/2.json", Named("graph_update"));
  Write(base + "/3.json", Named("gone"));
  Write(base + "/notes.txt", Named("not a report"));
  Write(now + "/x.json", Named("graph_update"));
  Write(now + "/y.json", Named("reuse"));
  Write(now + "/z.json", Named("fresh"));
  Outcome o = Diff(base, now, DiffOutput::kTable, false, {RowKind::kAdded});
  EXPECT_EQ(o.code, kDiffFailed);
  EXPECT_EQ(o.out,
            "KIND     SCENARIO  STEP  FIELD     BASE    NEW\n"
            "missing  gone      -     scenario  3.json  -\n"
            "added    fresh     -     scenario  -       z.json\n"
            "2 scenarios, 26 steps compared: 0 regressions, 0 improvements, 1 missing, 1 added, 0 "
            "ambiguous, 0 info; result: fail (fails on added)\n");

  Write(now + "/w.json", Named("reuse"));
  o = Diff(base, now, DiffOutput::kTable, false, {RowKind::kAmbiguous});
  EXPECT_EQ(o.code, kDiffFailed);
  EXPECT_NE(o.out.find("ambiguous  reuse     -     scenario  1.json  w.json, y.json\n"),
            std::string::npos)
      << o.out;
}

Outcome DiffAllowingDuplicates(const std::string& base, const std::string& now) {
  DiffRequest request;
  request.base = base;
  request.now = now;
  request.format.config.allow_duplicates = true;
  Outcome o;
  o.code = RunDiff(request, &o.out, &o.err);
  return o;
}

// Two reports of one scenario and backend in a directory hide which one counts (a regression in
// either could be missed): the diff fails unless --allow-duplicates.
TEST(DiffRunTest, DuplicateReportsFailUnlessAllowed) {
  const std::string base = TempDir("dup_base"), now = TempDir("dup_new");
  Write(base + "/1.json", Named("reuse"));
  Write(now + "/y.json", Named("reuse"));
  Write(now + "/w.json", Named("reuse"));
  Outcome o = Diff(base, now);
  EXPECT_EQ(o.code, kDiffFailed);
  EXPECT_EQ(o.err,
            "error: 1 scenario(s) have duplicate reports (same scenario and backend in one "
            "directory; see the ambiguous rows): keep one report per scenario, or pass "
            "--allow-duplicates\n");
  EXPECT_NE(o.out.find("ambiguous  reuse     -     scenario  1.json  w.json, y.json\n"),
            std::string::npos)
      << o.out;
  o = DiffAllowingDuplicates(base, now);
  EXPECT_EQ(o.code, kDiffClean) << o.out << o.err;
  EXPECT_EQ(o.err, "");

  // Same name on two backends is not a duplicate (still ambiguous, not compared).
  const std::string mixed = TempDir("dup_mixed");
  Write(mixed + "/host.json", Named("reuse"));
  Report cuda = Named("reuse");
  cuda.backend = "cuda";
  Write(mixed + "/cuda.json", cuda);
  o = Diff(base, mixed);
  EXPECT_EQ(o.code, kDiffClean) << o.out << o.err;
}

TEST(DiffRunTest, AnInterruptedNewRunIsARegression) {
  const std::string dir = TempDir("interrupted");
  Report stopped = SampleReport();
  stopped.summary.interrupted = true;
  stopped.summary.signal = 2;
  stopped.summary.stopped_at_step = 5;
  stopped.summary.exit_code = 130;
  stopped.summary.result = "interrupted";
  const std::string a = Write(dir + "/a.json", SampleReport());
  const std::string b = Write(dir + "/b.json", stopped);
  Outcome o = Diff(a, b, DiffOutput::kTable, true);
  EXPECT_EQ(o.code, kDiffFailed);
  EXPECT_NE(o.out.find("interrupted  no    SIGINT before step 5"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("the new run was interrupted by SIGINT: the steps from 5 on did not run"),
            std::string::npos)
      << o.out;
  o = Diff(b, a, DiffOutput::kTable, true);
  EXPECT_NE(o.out.find("the base run was interrupted: its steps from 5 on did not run"),
            std::string::npos)
      << o.out;
}

TEST(DiffRunTest, BadInputExitsTwo) {
  const std::string dir = TempDir("bad");
  const std::string good = Write(dir + "/good.json", SampleReport());
  Outcome o = Diff(dir + "/none.json", good);
  EXPECT_EQ(o.code, kDiffBadInput);
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err,
            "error: " + dir + "/none.json: cannot read the file: No such file or directory\n");

  ASSERT_TRUE(WriteFileAtomically(dir + "/v2.json", R"({"schema_version": "2.0"})").ok());
  o = Diff(good, dir + "/v2.json");
  EXPECT_EQ(o.code, kDiffBadInput);
  EXPECT_EQ(o.err, "error: " + dir +
                       "/v2.json: schema_version 2.0 is not supported (this vmm-run reads 1.x)\n");

  std::string text = ReportToJson(SampleReport());
  text.replace(text.find(R"("status": "ok")"), 14, R"("status": "done")");
  text.replace(text.find(R"("named": true)"), 13, R"("named": "yes")");
  ASSERT_TRUE(WriteFileAtomically(dir + "/bad.json", text).ok());
  o = Diff(good, dir + "/bad.json");
  EXPECT_EQ(o.code, kDiffBadInput);
  EXPECT_EQ(o.err, "error: " + dir +
                       "/bad.json: /steps/0/status: expected one of ok, failed, skipped, "
                       "unchecked, got 'done'\nerror: " +
                       dir + "/bad.json: /steps/1/named: expected a boolean, got a string\n");

  o = Diff(dir, good);
  EXPECT_EQ(o.code, kDiffBadInput);
  EXPECT_EQ(o.err, "error: '" + dir + "' is a directory but '" + good +
                       "' is not: give two report files or two directories\n");

  // Nesting past the limit and numbers out of range are bad input (exit 2), not a crash or an
  // internal error.
  ASSERT_TRUE(WriteFileAtomically(dir + "/deep.json", std::string(200000, '[')).ok());
  o = Diff(good, dir + "/deep.json");
  EXPECT_EQ(o.code, kDiffBadInput);
  EXPECT_EQ(o.err, "error: " + dir +
                       "/deep.json:1:65: invalid JSON: arrays and objects are nested deeper than "
                       "64 levels\n");
  std::string huge = ReportToJson(SampleReport());
  huge.replace(huge.find(R"("wall_us": )"), 11, R"("wall_us": 6e906, "x": )");
  ASSERT_TRUE(WriteFileAtomically(dir + "/huge.json", huge).ok());
  o = Diff(good, dir + "/huge.json");
  EXPECT_EQ(o.code, kDiffBadInput);
  EXPECT_NE(o.err.find("invalid JSON: number '6e906' is out of range (larger than 1.8e308)\n"),
            std::string::npos)
      << o.err;
  std::remove((dir + "/deep.json").c_str());
  std::remove((dir + "/huge.json").c_str());

  // A malformed report inside a directory is an error too, not a skipped file.
  const std::string other = TempDir("bad_other");
  o = Diff(dir, other);
  EXPECT_EQ(o.code, kDiffBadInput);
  EXPECT_EQ(o.err.rfind("error: " + dir + "/bad.json: /steps/0/status: ", 0), 0u) << o.err;
}

}  // namespace
}  // namespace vmm::report
