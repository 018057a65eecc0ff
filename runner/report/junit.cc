#include "runner/report/junit.h"

#include <cstdio>

#include "runner/base/stop_signal.h"
#include "runner/base/xml_escape.h"
#include "runner/report/atomic_file.h"

namespace vmm::report {
namespace {

std::string Attr(const char* name, const std::string& value) {
  return std::string(" ") + name + "=\"" + XmlEscape(value, true) + "\"";
}

std::string Seconds(double us) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", us > 0 ? us / 1e6 : 0.0);
  return buf;
}

bool IsCheckStep(const StepRecord& s) {
  return s.check.has_value() || s.op == "update" || s.op.rfind("check_", 0) == 0;
}

struct Counts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double time_us = 0;
  Counts& operator+=(const Counts& o) {
    tests += o.tests;
    failures += o.failures;
    errors += o.errors;
    skipped += o.skipped;
    time_us += o.time_us;
    return *this;
  }
};

std::string CountAttrs(const Counts& c) {
  return Attr("tests", std::to_string(c.tests)) + Attr("failures", std::to_string(c.failures)) +
         Attr("errors", std::to_string(c.errors)) + Attr("skipped", std::to_string(c.skipped)) +
         Attr("time", Seconds(c.time_us));
}

// The <testcase> element of one step, or "" when the step is not listed. Updates `counts`.
// `name` is the case's name (an isolate block's step: "<block> / <step>"); `expected_failure`
// says the step's run-time failure is what its isolate block expects (the block passed): then the
// case passes and says so.
std::string TestCase(const Report& r, const StepRecord& s, const std::string& name,
                     bool expected_failure, Counts* counts) {
  const bool verdict_failed = s.check && s.check->verdict == Verdict::kFail;
  const bool run_failed = s.status == StepStatus::kFailed && !verdict_failed;
  if (!IsCheckStep(s) && !run_failed) return "";
  ++counts->tests;
  const std::string where = r.scenario_path + ":" + std::to_string(s.line);
  std::string out = "    <testcase" + Attr("classname", r.scenario_name) + Attr("name", name) +
                    Attr("file", r.scenario_path) + Attr("line", std::to_string(s.line)) +
                    Attr("time", Seconds(s.wall_us));
  if (run_failed && expected_failure) {
    out += ">\n      <system-out>" +
           XmlEscape("failed as its isolate block expects: " + s.error + "\n", false) +
           "</system-out>\n    </testcase>\n";
  } else if (verdict_failed) {
    ++counts->failures;
    const CheckRecord& c = *s.check;
    std::string body =
        where + ": " + s.name + "\nexpected: " + c.expected + "\nactual: " + c.actual + "\n";
    if (c.mismatch_count > 0) {
      body += "mismatches: " + std::to_string(c.mismatch_count) + "\n";
      for (const Mismatch& m : c.mismatches) {
        body += "  [" + std::to_string(m.index) + "] want " + m.want + ", got " + m.got + "\n";
      }
    }
    out += ">\n      <failure" + Attr("message", "expected " + c.expected + ", got " + c.actual) +
           Attr("type", s.op) + ">" + XmlEscape(body, false) + "</failure>\n    </testcase>\n";
  } else if (run_failed) {
    ++counts->errors;
    const std::string message = s.error.empty() ? "step failed" : s.error;
    out += ">\n      <error" + Attr("message", message) + Attr("type", s.op) + ">" +
           XmlEscape(where + ": " + s.name + "\n" + message + "\n", false) +
           "</error>\n    </testcase>\n";
  } else if (s.status == StepStatus::kSkipped || s.status == StepStatus::kUnchecked) {
    ++counts->skipped;
    out +=
        ">\n      <skipped" + Attr("message", StepStatusName(s.status)) + "/>\n    </testcase>\n";
  } else {
    out += "/>\n";
  }
  counts->time_us += s.wall_us > 0 ? s.wall_us : 0;
  return out;
}

// The cases of step `s` named `prefix` + its name, and for an isolate block the cases of the
// child's steps, named under the block like `vmm-run diff` names them.
std::string StepCases(const Report& r, const StepRecord& s, const std::string& prefix,
                      Counts* counts) {
  std::string cases = TestCase(r, s, prefix + s.name, false, counts);
  if (!s.child) return cases;
  const bool block_passed = s.check && s.check->verdict == Verdict::kPass;
  for (const StepRecord& inner : s.body)
    cases += TestCase(r, inner, prefix + s.name + " / " + inner.name, block_passed, counts);
  return cases;
}

// The <testcase name="interrupted"> of a run stopped by a signal (an <error>), else "".
std::string InterruptedCase(const Report& r, Counts* counts) {
  const Summary& s = r.summary;
  if (!s.interrupted) return "";
  ++counts->tests;
  ++counts->errors;
  const std::string message = "interrupted by " + SignalName(s.signal) + " before step " +
                              std::to_string(s.stopped_at_step) + "; the later steps did not run";
  return "    <testcase" + Attr("classname", r.scenario_name) + Attr("name", "interrupted") +
         Attr("file", r.scenario_path) + Attr("time", Seconds(0)) + ">\n      <error" +
         Attr("message", message) + Attr("type", "interrupted") + ">" +
         XmlEscape(r.scenario_path + ": " + message + "\n", false) + "</error>\n    </testcase>\n";
}

std::string TestSuite(const Report& r, Counts* total) {
  Counts counts;
  std::string cases = InterruptedCase(r, &counts);
  if (r.summary.result == "skipped") {  // nothing ran: one skipped case that says why
    ++counts.tests;
    ++counts.skipped;
    cases += "    <testcase" + Attr("classname", r.scenario_name) + Attr("name", r.scenario_name) +
             Attr("file", r.scenario_path) + ">\n      <skipped" +
             Attr("message", r.summary.skip_reason) + "/>\n    </testcase>\n";
  } else {
    for (const StepRecord& s : r.steps) {
      if (s.op != "together") {
        cases += StepCases(r, s, "", &counts);
        continue;
      }
      // A together group: a case of its own only when it could not run (its blocks' verdicts are
      // their cases), then each block and its steps under the group's name.
      if (!s.error.empty()) cases += TestCase(r, s, s.name, false, &counts);
      for (const StepRecord& block : s.body) cases += StepCases(r, block, s.name + " / ", &counts);
    }
  }
  // The suite's time is the whole run's, not the sum of the listed steps.
  counts.time_us = r.summary.duration_ms * 1000;
  *total += counts;
  std::string out = "  <testsuite" + Attr("name", r.scenario_name) + CountAttrs(counts) +
                    Attr("timestamp", r.started_at) + ">\n    <properties>\n";
  const std::pair<const char*, const std::string*> properties[] = {
      {"scenario", &r.scenario_path},
      {"backend", &r.backend},
      {"device", &r.device.name},
      {"driver_version", &r.device.driver_version},
      {"tool_version", &r.tool_version}};
  for (const auto& [name, value] : properties) {
    out += "      <property" + Attr("name", name) + Attr("value", *value) + "/>\n";
  }
  return out + "    </properties>\n" + cases + "  </testsuite>\n";
}

}  // namespace

std::string ReportsToJUnit(const std::vector<const Report*>& reports) {
  Counts total;
  std::string suites;
  for (const Report* r : reports) suites += TestSuite(*r, &total);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites" + Attr("name", "vmm-run") +
         CountAttrs(total) + ">\n" + suites + "</testsuites>\n";
}

Status WriteJUnit(const Report& report, const std::string& path) {
  return WriteFileAtomically(path, ReportToJUnit(report));
}

Status WriteJUnit(const std::vector<Report>& reports, const std::string& path) {
  std::vector<const Report*> pointers;
  for (const Report& r : reports) pointers.push_back(&r);
  return WriteFileAtomically(path, ReportsToJUnit(pointers));
}

}  // namespace vmm::report
