// ConsoleLog: the human-readable step-by-step log of `vmm-run run`, in the spirit of the reference
// demos: addresses, "same: YES", results per phase, update result codes, timings.
// Writes to the stream given at construction (stdout); never affects the report or exit code.
#pragma once

#include <ostream>

#include "runner/exec/executor.h"
#include "runner/plan/plan.h"
#include "runner/report/report.h"

namespace vmm {

class ConsoleLog : public StepObserver {
 public:
  ConsoleLog(const Plan& plan, std::ostream& out) : plan_(plan), out_(out) {}
  void OnStep(const PlanStep& step, const report::StepRecord& record) override;

  // The lines before the steps: scenario, backend and why, device facts.
  static void PrintHeader(const report::Report& report, std::ostream& out);
  // The closing line: verdict, counts, duration, report path.
  static void PrintSummary(const report::Report& report, const std::string& report_path,
                           std::ostream& out);

 private:
  // One step's line(s), each prefixed with `indent` (an isolate block's steps are indented).
  void PrintStep(const Plan& plan, const PlanStep& step, const report::StepRecord& record,
                 const char* indent);
  // An isolate block's child steps (nothing for any other step), each prefixed with `indent`.
  void PrintChildSteps(const PlanStep& block, const report::StepRecord& record, const char* indent);

  const Plan& plan_;
  std::ostream& out_;
};

// "3.2 µs", "1.25 ms", "2.10 s".
std::string FormatMicros(double us);

}  // namespace vmm
