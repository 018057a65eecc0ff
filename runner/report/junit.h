// JUnit XML output, so CI systems (GitLab, Jenkins, GitHub test reporters) show each check.
//
// Layout: <testsuites> holding one <testsuite> per report (scenario). Each check step (a step with
// a check record, an op named check_* or update) and each step that failed at run time is one
// <testcase classname="<scenario name>" name="<step name>" file="<scenario path>" line="<line>"
// time="<seconds>">, carrying:
//   - <failure> when the check's verdict is fail: message "expected X, got Y", body with
//     "<scenario path>:<line>: <step name>", expected, actual and the first mismatches;
//   - <error> when the step failed at run time without a verdict (the step's error message);
//   - <skipped/> when it was skipped (after a fatal failure or a signal) or unchecked.
// A run stopped by a signal (summary.interrupted) has one more testcase first, name "interrupted",
// with an <error> "interrupted by SIGINT before step 5; the later steps did not run".
// Passing non-check steps are not listed. Text is XML-escaped; control characters XML 1.0 cannot
// carry become U+FFFD.
#pragma once

#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/report/report.h"

namespace vmm::report {

// The JUnit document for the given reports (one <testsuite> each, in order).
std::string ReportsToJUnit(const std::vector<const Report*>& reports);
inline std::string ReportToJUnit(const Report& report) { return ReportsToJUnit({&report}); }

// Writes ReportToJUnit(report) to `path` atomically (see WriteFileAtomically).
Status WriteJUnit(const Report& report, const std::string& path);
// Writes one document with a <testsuite> per report (a run of several scenarios), atomically.
Status WriteJUnit(const std::vector<Report>& reports, const std::string& path);

}  // namespace vmm::report
