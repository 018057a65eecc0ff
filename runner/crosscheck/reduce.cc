#include "runner/crosscheck/reduce.h"

#include <algorithm>
#include <set>
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
  std::set<std::string> ops;  // the ops of the steps that ran, nested ones included
};

// As the reports name backends.
std::string NameOf(BackendKind kind) {
  return kind == BackendKind::kHost ? "host" : kind == BackendKind::kCuda ? "cuda" : "auto";
}

void CollectOps(const std::vector<report::StepRecord>& steps, std::set<std::string>* ops) {
  for (const report::StepRecord& s : steps) {
    if (s.status == report::StepStatus::kSkipped) continue;  // never ran: keeps nothing
    ops->insert(s.op);
    CollectOps(s.body, ops);
  }
}

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
    CollectOps(out.report->steps, &a.ops);
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

// A passing run keeps the faults its isolate blocks expected: "exit 0; isolate 'run':
// CUDA_ERROR_ILLEGAL_ADDRESS at the fault surfaces" (a reproducer whose block expects the fault
// reduces to a smaller one whose block still sees it there).
std::string ExpectedFaults(const report::Report& report) {
  std::vector<const report::StepRecord*> blocks;  // lone blocks and a together group's
  for (const report::StepRecord& step : report.steps) {
    if (step.op == "isolate") blocks.push_back(&step);
    if (step.op == "together")
      for (const report::StepRecord& member : step.body) blocks.push_back(&member);
  }
  std::string faults;
  for (const report::StepRecord* block : blocks) {
    const report::StepRecord& step = *block;
    if (step.op != "isolate" || !step.child) continue;
    const report::ChildRecord& c = *step.child;
    const std::string what = c.error ? *c.error : c.signal;
    if (what.empty()) continue;
    faults += "; isolate '" + step.name + "': " + what +
              (c.failed_step.empty() ? "" : " at " + c.failed_step);
  }
  return faults.empty() ? "" : "exit 0" + faults;
}

std::string OutcomeSignature(const report::Report& report) {
  const int code = report.summary.exit_code;
  if (report.summary.result == "skipped") return "";
  if (code == 0) return ExpectedFaults(report);
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
                        " with no fault in an isolate block: reduce keeps a failure or such a "
                        "fault, and there is none to keep");
  }
  for (const std::string& op : options.keep_ops)
    if (first.ops.count(op) == 0)
      return InvalidInput("--keep " + op + ": " + path + " has no " + op +
                          " step that runs, so no candidate could keep one");
  ReduceResult result;
  result.backend = first.backend;
  result.outcome = first.signature;
  auto keeps = [&](const Attempt& a) {
    return a.signature == first.signature &&
           std::all_of(options.keep_ops.begin(), options.keep_ops.end(),
                       [&](const std::string& op) { return a.ops.count(op) != 0; });
  };
  ReduceOptions twin = options;
  twin.backend = options.prescreen_backend;
  bool prescreen = false;
  if (options.prescreen && first.backend != NameOf(options.prescreen_backend)) {
    const Attempt t = RunText(text, path, twin);
    prescreen = keeps(t);
    result.prescreen = prescreen ? "the " + t.backend +
                                       " backend ends it the same way: each candidate ran there "
                                       "first"
                                 : "the " + (t.backend.empty() ? NameOf(twin.backend) : t.backend) +
                                       " backend ends it otherwise (" +
                                       (t.signature.empty() ? std::string("passes") : t.signature) +
                                       "): no pre-screen";
  }
  result.text = ShrinkScenario(
      text,
      [&](const std::string& candidate) {
        if (prescreen && !keeps(RunText(candidate, path, twin))) {
          ++result.screened_out;
          return false;
        }
        if (prescreen) ++result.confirmed;
        return keeps(RunText(candidate, path, options));
      },
      options.budget, &result.stats);
  return result;
}

}  // namespace vmm
