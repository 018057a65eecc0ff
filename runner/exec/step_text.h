// Reading a finished step record back as console text: the helpers every DescribeStep<op> uses.
// Internal to runner/exec.
#pragma once

#include <string>

#include "runner/plan/plan.h"
#include "runner/report/report.h"

namespace vmm {

// The value of detail `key` as text ("true", "42", "0.0129", ...), or "" when absent.
std::string DetailText(const report::StepRecord& record, const std::string& key);
// The address recorded under `key`, or "?".
std::string AddressText(const report::StepRecord& record, const std::string& key);
// "PASS" or "FAIL" for a record with a check, else "".
std::string VerdictText(const report::StepRecord& record);
// "waited 12.3 µs for in-flight work" or "no work in flight" (unmap, release).
std::string SyncText(const report::StepRecord& record);
// A float as the report and the log show it: 9 significant digits ("%.9g"), enough to tell
// every fp32 value apart.
std::string FloatText(double v);
// What an elementwise step computes, by the operands' names: "C = A + B" (add), "C = 0.5·A"
// (scale), "C = 0.5·A + B" (axpy); check_elementwise likewise, without "1·".
std::string ElementwiseText(const Plan& plan, const PlanStep& step);

}  // namespace vmm
