// RunScenario: the whole pipeline as one library call. Scenario text in, report out:
//   parse (expand + schema) -> plan (VMM/graph rules) -> engine (backend selection) ->
//   requirements and capabilities -> run -> report assembly (buffers, targets, folding, graphs).
// The CLI's `run`, `crosscheck` and `reduce`, the benchmarks and most end-to-end tests call it;
// none of them re-implements a stage.
//
// Two phases for callers that must act between them (the CLI prints the header and prepares the
// report path once the backend is known, before anything runs): PrepareRun, then ExecuteRun.
// RunScenario does both.
//
// Contract:
//   - Nothing reaches an engine unless the whole scenario parsed and validated (exit 2 otherwise,
//     with every diagnostic).
//   - A backend that cannot be had is exit 3 (or 2 when the scenario's granularity does not suit
//     the device), with the reason in `error`; nothing ran.
//   - ExecuteRun always returns a complete report: a requirement the device lacks skips every step
//     (exit 5); the engine is destroyed (every object released) before the report is assembled.
//   - Isolate blocks run in a child `vmm-run __child` started from `child_exe` (runner/isolate).
// Not thread-safe per call (an engine is not); separate calls may run on separate threads only
// with the host backend (the CUDA engine binds the calling thread's context).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/engine/select/engine_select.h"
#include "runner/exec/executor.h"
#include "runner/plan/plan.h"
#include "runner/report/report.h"
#include "runner/scenario/expander.h"
#include "runner/scenario/scenario.h"

namespace vmm {

struct RunRequest {
  std::string path;      // where `text` came from: diagnostics, provenance, isolate children
  std::string text;      // the scenario file's contents (source form: vars, loops, includes)
  ExpandOptions expand;  // --set values (a sweep point's values appended)
  std::vector<VarOverride> point;  // the sweep point, recorded in the report ({} when none)
  BackendKind backend = BackendKind::kAuto;
  int device = 0;                            // the run's device ordinal (the scenario's device 0)
  int host_devices = 2;                      // devices the host twin emulates
  std::vector<std::string> argv;             // the command line, for provenance
  std::string child_exe = "/proc/self/exe";  // the vmm-run isolate blocks start
  bool trap_faults = false;  // the host engine turns a fault into a report (isolate children)
  bool driver_dot = false;   // CUDA: DOT text from cudaGraphDebugDotPrint (EngineRequest)
};

// A scenario that validated, with its engine open and the report's provenance filled. Move-only.
// PrepareRun frees the scenario's steps once the plan is built (a long
// scenario's steps are as large as its plan), unless a check_record step reads its keys from them
// at run time; `templates` keeps what folding needs of them. ExecuteRun consumes the plan's steps
// once the records are made: neither is to be read after it.
struct PreparedRun {
  RunRequest request;
  Scenario scenario;
  Plan plan;
  EngineChoice engine;
  report::Report report;            // provenance only, until ExecuteRun
  std::vector<uint32_t> templates;  // each top-level step's template (fold_loops only)
};

struct PrepareOutcome {
  std::optional<PreparedRun> run;       // set when exit_code is 0
  int exit_code = 0;                    // 2: scenario or granularity error; 3: no such backend
  std::vector<Diagnostic> diagnostics;  // exit 2 from the scenario (every error, file order)
  std::string error;                    // otherwise the reason, one sentence
};

PrepareOutcome PrepareRun(RunRequest request);

// Runs a prepared scenario and returns its report (report.summary.exit_code: 0 pass, 1 a check
// failed, 4 a step failed, 5 skipped, 128+N stopped by signal N). `observer` may be null. The run's
// scenario and plan stay where they are (an observer may hold them); its engine is closed when
// this returns, so a run executes once.
report::Report ExecuteRun(PreparedRun& run, StepObserver* observer);

struct ScenarioOutcome {
  int exit_code = 0;
  std::vector<Diagnostic> diagnostics;  // as PrepareOutcome
  std::string error;
  std::optional<report::Report> report;  // set whenever the scenario ran (or was skipped)
};

// PrepareRun then ExecuteRun.
ScenarioOutcome RunScenario(RunRequest request, StepObserver* observer = nullptr);

}  // namespace vmm
