#include "runner/report/report_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "runner/report/atomic_file.h"
#include "runner/report/report_test_util.h"

namespace vmm::report {
namespace {

using testutil::ReadAll;
using testutil::SampleReport;
using testutil::SchemaErrors;
using testutil::TempDir;

Report TinyReport() {
  Report r;
  r.tool_version = "0.1.0";
  r.git_sha = "abc";
  r.argv = {"vmm-run", "run", "s.yaml"};
  r.scenario_path = "s.yaml";
  r.scenario_sha256 = "ff";
  r.scenario_name = "tiny";
  r.backend = "host";
  r.backend_reason = "no CUDA device";
  r.device.name = "host";
  r.device.granularity_min = 4096;
  r.device.granularity_recommended = 2097152;
  r.device.total_memory = 18446744073709551615ull;
  r.granularity = 2097152;
  r.started_at = "2025-01-02T03:04:05Z";
  StepRecord s;
  s.index = 0;
  s.name = "keep";
  s.named = true;
  s.op = "check_address";
  s.line = 7;
  s.wall_us = 2.0;
  s.addresses = {{"va", std::string("0x7f0000000000")}};
  s.details = {{"n", int64_t{3}}, {"x", 0.5}, {"waited", false}};
  s.check = CheckRecord{"same", "same", Verdict::kPass, 0, {}};
  r.steps.push_back(s);
  r.summary.steps = 1;
  r.summary.ok = 1;
  r.summary.checks_passed = 1;
  r.summary.result = "pass";
  r.summary.duration_ms = 0.25;
  return r;
}

constexpr const char* kTinyJson = R"({
  "schema_version": "1.3",
  "tool": {
    "name": "vmm-run",
    "version": "0.1.0",
    "git_sha": "abc"
  },
  "argv": [
    "vmm-run",
    "run",
    "s.yaml"
  ],
  "scenario": {
    "path": "s.yaml",
    "sha256": "ff",
    "name": "tiny"
  },
  "backend": {
    "name": "host",
    "reason": "no CUDA device"
  },
  "device": {
    "name": "host",
    "ordinal": 0,
    "compute_capability": "",
    "driver_version": "",
    "runtime_version": "",
    "vmm_supported": false,
    "granularity_min_bytes": "4096",
    "granularity_recommended_bytes": "2097152",
    "total_memory_bytes": "18446744073709551615"
  },
  "granularity_bytes": "2097152",
  "started_at": "2025-01-02T03:04:05Z",
  "steps": [
    {
      "index": 0,
      "name": "keep",
      "named": true,
      "op": "check_address",
      "line": 7,
      "status": "ok",
      "wall_us": 2.0,
      "addresses": {
        "va": "0x7f0000000000"
      },
      "details": {
        "n": 3,
        "x": 0.5,
        "waited": false
      },
      "check": {
        "expected": "same",
        "actual": "same",
        "verdict": "pass",
        "mismatch_count": 0,
        "mismatches": []
      }
    }
  ],
  "summary": {
    "steps": 1,
    "ok": 1,
    "failed": 0,
    "skipped": 0,
    "unchecked": 0,
    "checks_passed": 1,
    "checks_failed": 0,
    "exit_code": 0,
    "failed_step": -1,
    "result": "pass",
    "duration_ms": 0.25
  }
}
)";

TEST(ReportIoTest, WritesTheDocumentedLayout) { EXPECT_EQ(ReportToJson(TinyReport()), kTinyJson); }

TEST(ReportIoTest, NamesOfEnums) {
  EXPECT_STREQ(StepStatusName(StepStatus::kUnchecked), "unchecked");
  EXPECT_STREQ(VerdictName(Verdict::kFail), "fail");
  StepStatus s = StepStatus::kOk;
  EXPECT_TRUE(ParseStepStatus("skipped", &s));
  EXPECT_EQ(s, StepStatus::kSkipped);
  EXPECT_FALSE(ParseStepStatus("done", &s));
  Verdict v = Verdict::kFail;
  EXPECT_TRUE(ParseVerdict("pass", &v));
  EXPECT_EQ(v, Verdict::kPass);
}

TEST(ReportIoTest, RoundTripIsByteIdentical) {
  const std::string first = ReportToJson(SampleReport());
  StatusOr<Report> back = ParseReportJson(first, "sample.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(ReportToJson(*back), first);
}

TEST(ReportIoTest, VarsAndSweepPointAreOptionalAndRoundTrip) {
  Report r = SampleReport();
  EXPECT_EQ(ReportToJson(r).find("\"vars\""), std::string::npos);
  EXPECT_EQ(ReportToJson(r).find("\"sweep_point\""), std::string::npos);
  r.vars = {{"pages", "512"}, {"page", "2097152"}, {"buf", "A"}};
  r.sweep_point = {{"page", "2MiB"}, {"pages", "4"}};
  const std::string text = ReportToJson(r);
  EXPECT_NE(text.find("  \"vars\": {\n    \"pages\": \"512\",\n    \"page\": \"2097152\",\n"),
            std::string::npos)
      << text;
  StatusOr<Report> back = ParseReportJson(text, "v.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->vars, r.vars);
  EXPECT_EQ(back->sweep_point, r.sweep_point);
  EXPECT_EQ(ReportToJson(*back), text);
}

// data_hash_scheme (1.3): absent in older reports (read back as 0, scheme 1), written when set,
// kept through a round trip, and refused outside 1..1000.
TEST(ReportIoTest, TheDataHashSchemeIsOptionalAndRoundTrips) {
  Report r = SampleReport();
  EXPECT_EQ(ReportToJson(r).find("\"data_hash_scheme\""), std::string::npos);
  StatusOr<Report> old = ParseReportJson(ReportToJson(r), "old.json");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->data_hash_scheme, 0);
  EXPECT_EQ(DataHashScheme(old->data_hash_scheme), 1);
  r.data_hash_scheme = 2;
  const std::string text = ReportToJson(r);
  EXPECT_NE(text.find("  \"granularity_bytes\": \"2097152\",\n  \"data_hash_scheme\": 2,\n"),
            std::string::npos)
      << text;
  StatusOr<Report> back = ParseReportJson(text, "v.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->data_hash_scheme, 2);
  EXPECT_EQ(ReportToJson(*back), text);
  std::string zero = text;
  zero.replace(zero.find("\"data_hash_scheme\": 2"), 21, "\"data_hash_scheme\": 0");
  EXPECT_FALSE(ParseReportJson(zero, "zero.json").ok());
}

TEST(ReportIoTest, DevicesAreOptionalRoundTripAndValidate) {
  Report r = SampleReport();
  EXPECT_EQ(ReportToJson(r).find("\"devices\""), std::string::npos);
  for (int d : {0, 1}) {
    DeviceRecord device = r.device;
    device.scenario_device = d;
    device.ordinal = 1 - d;  // --device 1 on two GPUs
    device.pci_bus_id = d == 0 ? "0000:19:00.0" : "0000:3b:00.0";
    r.devices.push_back(device);
  }
  const std::string text = ReportToJson(r);
  EXPECT_NE(text.find("\"pci_bus_id\": \"0000:3b:00.0\""), std::string::npos) << text;
  EXPECT_EQ(SchemaErrors(text, "schemas/report.schema.json"), "");
  StatusOr<Report> back = ParseReportJson(text, "d.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->devices.size(), 2u);
  EXPECT_EQ(back->devices[1].scenario_device, 1);
  EXPECT_EQ(back->devices[1].ordinal, 0);
  EXPECT_EQ(back->devices[1].pci_bus_id, "0000:3b:00.0");
  EXPECT_EQ(ReportToJson(*back), text);
}

TEST(ReportIoTest, FoldedRecordsRoundTripAndValidate) {
  Report r = TinyReport();
  r.steps[0].folded = FoldRecord{10000, 79999, "map A (cycle 9999)", {"addresses.va"}};
  const std::string text = ReportToJson(r);
  EXPECT_NE(text.find("\"last_index\": 79999"), std::string::npos) << text;
  EXPECT_EQ(SchemaErrors(text, "schemas/report.schema.json"), "");
  StatusOr<Report> back = ParseReportJson(text, "r.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(ReportToJson(*back), text);
}

TEST(ReportIoTest, ExpectedErrorsAreOptionalValidateAndRoundTrip) {
  Report r = SampleReport();
  EXPECT_EQ(ReportToJson(r).find("expected_error"), std::string::npos);
  r.steps[1].expected_error = "CUDA_ERROR_INVALID_VALUE";
  r.steps[1].actual_error = "CUDA_SUCCESS";
  const std::string text = ReportToJson(r);
  EXPECT_NE(text.find("\"expected_error\": \"CUDA_ERROR_INVALID_VALUE\",\n      \"actual_error\": "
                      "\"CUDA_SUCCESS\""),
            std::string::npos)
      << text;
  EXPECT_EQ(SchemaErrors(text, "schemas/report.schema.json"), "");
  StatusOr<Report> back = ParseReportJson(text, "e.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->steps[1].actual_error, "CUDA_SUCCESS");
  EXPECT_EQ(ReportToJson(*back), text);
}

TEST(ReportIoTest, RoundTripKeepsScalarTypes) {
  StepRecord step;
  step.details = {{"b", true},
                  {"i", int64_t{-5}},
                  {"big", int64_t{9007199254740993}},
                  {"min", INT64_MIN},
                  {"d", 2.0},
                  {"tiny", 1e-300},
                  {"s", std::string("12")},
                  {"h", std::string("0xdeadbeef")}};
  Report r = TinyReport();
  r.steps = {step};
  const std::string json = ReportToJson(r);
  EXPECT_NE(json.find(R"("big": "9007199254740993")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("d": 2.0)"), std::string::npos) << json;
  StatusOr<Report> back = ParseReportJson(json, "r.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->steps[0].details, step.details);
}

TEST(ReportIoTest, NonFiniteNumbersAreNull) {
  Report r = TinyReport();
  r.steps[0].details = {{"nan", std::nan("")}};
  r.steps[0].gpu_us = INFINITY;
  const std::string json = ReportToJson(r);
  EXPECT_NE(json.find(R"("gpu_us": null)"), std::string::npos) << json;
  StatusOr<Report> back = ParseReportJson(json, "r.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(std::isnan(*back->steps[0].gpu_us));
  EXPECT_EQ(ReportToJson(*back), json);
}

TEST(ReportIoTest, ReportsValidateAgainstTheSchema) {
  EXPECT_EQ(SchemaErrors(ReportToJson(SampleReport()), "schemas/report.schema.json"), "");
  EXPECT_EQ(SchemaErrors(kTinyJson, "schemas/report.schema.json"), "");
  // The schema is not vacuous: a wrong status is refused.
  std::string bad = kTinyJson;
  bad.replace(bad.find(R"("status": "ok")"), 14, R"("status": "done")");
  EXPECT_NE(SchemaErrors(bad, "schemas/report.schema.json"), "");
}

TEST(ReportIoTest, InterruptedRunsRoundTripAndValidate) {
  Report r = SampleReport();
  r.summary.interrupted = true;
  r.summary.signal = 15;
  r.summary.stopped_at_step = 3;
  r.summary.exit_code = 143;
  r.summary.result = "interrupted";
  const std::string json = ReportToJson(r);
  EXPECT_NE(json.find("\"interrupted\": true,\n    \"signal\": 15,\n    \"stopped_at_step\": 3\n"),
            std::string::npos)
      << json;
  EXPECT_EQ(SchemaErrors(json, "schemas/report.schema.json"), "");
  StatusOr<Report> back = ParseReportJson(json, "r.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->summary.interrupted);
  EXPECT_EQ(back->summary.signal, 15);
  EXPECT_EQ(back->summary.stopped_at_step, 3);
  EXPECT_EQ(ReportToJson(*back), json);
  // Not interrupted: the keys are absent (schema 1.0 reports stay byte-identical).
  EXPECT_EQ(ReportToJson(SampleReport()).find("interrupted"), std::string::npos);
}

// The reports the real runner wrote (the committed host and H200 baselines, written before the
// writer streamed its steps) follow the schema and read back into exactly the same bytes.
TEST(ReportIoTest, RunnerReportsValidateAndRoundTrip) {
  int seen = 0;
  for (const char* baselines : {"reports/baselines/host", "reports/baselines/h200"}) {
    const std::filesystem::path dir = std::filesystem::path(VMMRUN_SOURCE_DIR) / baselines;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".json") continue;
      ++seen;
      const std::string text = ReadAll(entry.path().string());
      EXPECT_EQ(SchemaErrors(text, "schemas/report.schema.json"), "") << entry.path();
      StatusOr<Report> r = ParseReportJson(text, entry.path().string());
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_EQ(ReportToJson(*r), text) << entry.path();
    }
  }
  EXPECT_GE(seen, 100);
}

// A report of many steps is written in pieces through a 1 MiB buffer (StreamReportJson): the file
// holds exactly ReportToJson's text, and a limit it passes refuses it with its exact size, leaving
// the file that was there.
TEST(ReportIoTest, AManyStepReportIsStreamedToTheFileWhole) {
  Report r = SampleReport();
  const StepRecord step = r.steps.front();
  for (int i = 0; i < 20000; ++i) {
    r.steps.push_back(step);
    r.steps.back().index = i + 1;
  }
  const std::string text = ReportToJson(r);
  ASSERT_GT(text.size(), 3u << 20);
  const std::string path = ::testing::TempDir() + "many_steps.json";
  ASSERT_TRUE(WriteReport(r, path).ok());
  EXPECT_EQ(ReadAll(path), text);
  ASSERT_TRUE(WriteReport(SampleReport(), path, text.size() / 4).ok());  // a small one passes
  Status too_big = WriteReport(r, path, text.size() - 1);
  EXPECT_NE(too_big.message().find("would be " + std::to_string(text.size()) + " bytes"),
            std::string::npos)
      << too_big.message();
  EXPECT_EQ(ReadAll(path), ReportToJson(SampleReport()));
  std::filesystem::remove(path);
}

TEST(ReportIoTest, IgnoresUnknownFields) {
  std::string json = kTinyJson;
  json.replace(json.find(R"("started_at")"), 0, R"("future": {"x": [1, 2]}, )");
  json.replace(json.find(R"("line": 7)"), 0, R"("new_timing_us": 3.5, )");
  StatusOr<Report> r = ParseReportJson(json, "r.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(ReportToJson(*r), kTinyJson);
}

// Parses `json` and returns the error message ("" when it parsed).
std::string ParseError(const std::string& json) {
  StatusOr<Report> r = ParseReportJson(json, "report.json");
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), Code::kInvalidInput);
  return r.status().message();
}

// kTinyJson with the first occurrence of `from` replaced by `to`.
std::string Tiny(const std::string& from, const std::string& to) {
  std::string json = kTinyJson;
  const size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return json.replace(at, from.size(), to);
}

TEST(ReportIoTest, RefusesAnotherMajorVersion) {
  EXPECT_EQ(ParseError(Tiny(R"("1.3")", R"("2.0")")),
            "report.json: schema_version 2.0 is not supported (this vmm-run reads 1.x)");
  EXPECT_EQ(ParseError(Tiny(R"("1.3")", R"("1.7")")), "");
  EXPECT_EQ(ParseError(Tiny(R"("1.3")", R"("one")")),
            "report.json: /schema_version: expected '<major>.<minor>', got 'one'");
  EXPECT_EQ(ParseError(Tiny(R"("schema_version": "1.3",)", "")),
            "report.json: missing required key 'schema_version'");
}

TEST(ReportIoTest, NamesTheJsonPointerOfBadFields) {
  EXPECT_EQ(ParseError(Tiny(R"("status": "ok")", R"("status": "done")")),
            "report.json: /steps/0/status: expected one of ok, failed, skipped, unchecked, got "
            "'done'");
  EXPECT_EQ(ParseError(Tiny(R"("wall_us": 2.0)", R"("wall_us": "2")")),
            "report.json: /steps/0/wall_us: expected a number, got a string");
  EXPECT_EQ(ParseError(Tiny(R"("line": 7)", R"("line": 7.5)")),
            "report.json: /steps/0/line: expected an integer, got 7.5");
  EXPECT_EQ(ParseError(Tiny(R"("line": 7)", R"("line": 4294967296)")),
            "report.json: /steps/0/line: expected an integer in [-2147483648, 2147483647], got "
            "4294967296");
  EXPECT_EQ(ParseError(Tiny(R"("granularity_bytes": "2097152")", R"("granularity_bytes": "2MiB")")),
            "report.json: /granularity_bytes: expected a decimal integer string, got '2MiB'");
  EXPECT_EQ(
      ParseError(Tiny(R"("n": 3)", R"("a/b": [3])")),
      "report.json: /steps/0/details/a~1b: expected a boolean, number or string, got an array");
  EXPECT_EQ(ParseError(Tiny(R"("verdict": "pass")", R"("verdict": true)")),
            "report.json: /steps/0/check/verdict: expected a string, got a boolean");
  EXPECT_EQ(ParseError(Tiny(R"("op": "check_address",)", "")),
            "report.json: /steps/0: missing required key 'op'");
  EXPECT_EQ(ParseError(Tiny(R"("mismatches": [])", R"("mismatches": [1])")),
            "report.json: /steps/0/check/mismatches/0: expected an object, got a number");
}

// A detail key is NUL-terminated text (DetailKey): a key that holds a NUL never reaches one,
// because the reader refuses control characters in every string.
TEST(ReportIoTest, AKeyWithANulIsRefused) {
  const std::string error = ParseError(Tiny(R"("n": 3)", R"("a\u0000b": 3)"));
  EXPECT_NE(error.find("control character U+0000 (NUL)"), std::string::npos) << error;
}

TEST(ReportIoTest, ReportsEveryTypeErrorInOnePass) {
  std::string json = Tiny(R"("named": true)", R"("named": 1)");
  json.replace(json.find(R"("steps": 1)"), 10, R"("steps": null)");
  EXPECT_EQ(ParseError(json),
            "report.json: /steps/0/named: expected a boolean, got a number\n"
            "report.json: /summary/steps: expected an integer, got null");
}

TEST(ReportIoTest, SyntaxErrorsCarryLineAndColumn) {
  EXPECT_EQ(ParseError("{\n  \"schema_version\": \"1.0\",\n  oops\n}"),
            "report.json:3:3: invalid JSON: syntax error while parsing object key - invalid "
            "literal; last read: '\"1.0\",<U+000A>  o'; expected string literal");
  EXPECT_EQ(ParseError("[1]"), "report.json: expected an object, got an array");
  EXPECT_EQ(ParseError(""), "report.json: the file is empty; expected a vmm-run JSON report");
  EXPECT_EQ(ParseError(" \n"), "report.json: the file is empty; expected a vmm-run JSON report");
}

TEST(ReportIoTest, ASyntaxErrorQuotesAtMostAnExcerptOfTheFile) {
  const std::string text = "{\"schema_version\": \"1.0\", \"x\": \"" + std::string(100000, 'S');
  StatusOr<Report> r = ParseReportJson(text, "r.json");
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.status().message().size(), 300u) << r.status().message().substr(0, 400);
  EXPECT_EQ(r.status().message().rfind("r.json:1:", 0), 0u);
}

TEST(ReportIoTest, WriteReportIsAtomicAndReadable) {
  const std::string dir = TempDir("write");
  const std::string path = dir + "/r.json";
  ASSERT_TRUE(WriteFileAtomically(path, "old contents").ok());
  ASSERT_TRUE(WriteReport(SampleReport(), path).ok());
  EXPECT_EQ(ReadAll(path), ReportToJson(SampleReport()));
  StatusOr<Report> back = ReadReport(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->scenario_name, "graph_update");
  // Only the report remains: the temp file was renamed.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
}

TEST(ReportIoTest, FailedWriteLeavesNoTempFile) {
  const std::string dir = TempDir("fail");
  // A directory at the target is refused before anything is written.
  std::filesystem::create_directories(dir + "/r.json/keep");
  Status s = WriteReport(SampleReport(), dir + "/r.json");
  EXPECT_EQ(s.code(), Code::kInvalidInput);
  EXPECT_EQ(s.message(), "'" + dir +
                             "/r.json' is a directory; vmm-run only replaces regular files: remove "
                             "it or choose another path");
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/r.json/keep"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);

  s = WriteReport(SampleReport(), dir + "/missing/r.json");
  EXPECT_EQ(s.message(), "cannot write '" + dir + "/missing/r.json': No such file or directory");
}

TEST(ReportIoTest, AReportPastTheReadLimitIsNotWritten) {
  const std::string dir = TempDir("limit");
  const std::string json = ReportToJson(SampleReport());
  // At the limit it is written; one byte under, refused and nothing appears.
  EXPECT_TRUE(WriteReport(SampleReport(), dir + "/at.json", json.size()).ok());
  Status s = WriteReport(SampleReport(), dir + "/over.json", json.size() - 1);
  EXPECT_EQ(s.code(), Code::kRuntime);
  EXPECT_NE(s.message().find("would be " + std::to_string(json.size()) + " bytes"),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(std::filesystem::exists(dir + "/over.json"));
}

TEST(ReportIoTest, ReadReportNamesTheFile) {
  const std::string dir = TempDir("read");
  StatusOr<Report> r = ReadReport(dir + "/none.json");
  EXPECT_EQ(r.status().message(),
            dir + "/none.json: cannot read the file: No such file or directory");
  r = ReadReport(dir);
  EXPECT_EQ(r.status().message(),
            dir + ": cannot read the file: it is a directory; expected a regular file");
  ASSERT_TRUE(WriteFileAtomically(dir + "/bad.json", R"({"schema_version": "3.1"})").ok());
  r = ReadReport(dir + "/bad.json");
  EXPECT_EQ(r.status().message(),
            dir + "/bad.json: schema_version 3.1 is not supported (this vmm-run reads 1.x)");
}

}  // namespace
}  // namespace vmm::report
