#include "runner/crosscheck/reduce.h"

#include <utility>

#include "runner/base/diagnostic.h"
#include "runner/pipeline/run_scenario.h"
#include "runner/vocab/isolate.h"

namespace vmm {
namespace {

struct Attempt {
  int exit_code = 0;
  std::string error;      // set when the scenario did not run (exit 2, 3, ...)
  std::string signature;  // OutcomeSignature of its report
  std::string backend;    // the report's backend
  std::vector<Diagnostic> diagnostics;
};

Attempt RunText(const std::string& text, const std::string& path, const ReduceOptions& options) {
  RunRequest request;
  request.path = path;
  request.text = text;
  request.backend = options.backend;
  request.device = options.device;
  request.host_devices = options.host_devices;
  request.child_exe = options.child_exe;
  request.argv = {"vmm-run", "reduce"};
  ScenarioOutcome out = RunScenario(std::move(request));
  Attempt a;
  a.exit_code = out.exit_code;
  a.error = out.error;
  a.diagnostics = std::move(out.diagnostics);
  if (out.report) {
    a.signature = OutcomeSignature(*out.report);
    a.backend = out.report->backend;
  }
  return a;
}

}  // namespace

// A failed threads group's failure is that of its first thread (in the order written) that failed:
// the step, and the op, the user wrote.
const report::StepRecord& FailedInside(const report::StepRecord& step) {
  if (step.op != "threads") return step;
  for (const report::StepRecord& thread : step.body)
    for (const report::StepRecord& s : thread.body)
      if (s.status == report::StepStatus::kFailed) return s;
  return step;
}

std::string OutcomeSignature(const report::Report& report) {
  const int code = report.summary.exit_code;
  if (code == 0 || report.summary.result == "skipped") return "";
  const std::string exit = "exit " + std::to_string(code);
  for (const report::StepRecord& group_or_step : report.steps) {
    if (group_or_step.status != report::StepStatus::kFailed) continue;
    const report::StepRecord& step = FailedInside(group_or_step);
    if (step.check) {
      return exit + " at " + step.op + ": expected " + step.check->expected + ", got " +
             step.check->actual;
    }
    // The CUDA error the message names (a runtime name as its CUresult), or "error" for a failure
    // of the runner's own.
    const std::string cuda = CudaErrorNameIn(step.error);
    return exit + " at " + step.op + ": " + (cuda.empty() ? "error" : cuda);
  }
  return exit;
}

StatusOr<ReduceResult> Reduce(const std::string& text, const std::string& path,
                              const ReduceOptions& options) {
  const Attempt first = RunText(text, path, options);
  if (!first.diagnostics.empty()) {
    return InvalidInput(FormatDiagnostics(first.diagnostics) +
                        "the scenario does not validate; reduce starts from one that runs");
  }
  if (first.signature.empty()) {
    if (!first.error.empty()) return Status(Code::kUnavailable, first.error);
    return InvalidInput(path + " passes (or is skipped) on " +
                        (first.backend.empty() ? std::string("this backend") : first.backend) +
                        ": reduce keeps a failure, and there is none to keep");
  }
  ReduceResult result;
  result.backend = first.backend;
  result.outcome = first.signature;
  result.text = ShrinkScenario(
      text,
      [&](const std::string& candidate) {
        return RunText(candidate, path, options).signature == first.signature;
      },
      options.budget, &result.stats);
  return result;
}

}  // namespace vmm
