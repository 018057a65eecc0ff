#include "runner/pipeline/run_scenario.h"

#include <cstdlib>

#include "runner/base/exit_code.h"
#include "runner/base/format.h"
#include "runner/exec/fold_steps.h"
#include "runner/exec/step_targets.h"
#include "runner/isolate/child_block_runner.h"
#include "runner/pipeline/provenance.h"
#include "runner/pipeline/requirements.h"
#include "runner/scenario/parse.h"
#include "runner/scenario/size.h"

namespace vmm {
namespace {

// Where each top-level step was written (file:line:column): the steps a loop or fragment made
// share their template's place (exec/fold_steps.h).
std::vector<std::string> TemplatesOf(const Scenario& scenario) {
  std::vector<std::string> out;
  out.reserve(scenario.steps.size());
  for (const Step& s : scenario.steps)
    out.push_back(s.loc.file() + ":" + std::to_string(s.loc.line) + ":" +
                  std::to_string(s.loc.column));
  return out;
}

}  // namespace

PrepareOutcome PrepareRun(RunRequest request) {
  PrepareOutcome out;
  std::optional<Scenario> scenario =
      ParseScenario(request.text, request.path, request.expand, &out.diagnostics);
  Plan plan;
  if (scenario) plan = BuildPlan(*scenario, &out.diagnostics);
  if (!out.diagnostics.empty()) {
    CollapseRepeats(&out.diagnostics);
    out.exit_code = kExitInputError;
    return out;
  }
  EngineRequest engine;
  engine.kind = request.backend;
  engine.device = request.device;
  engine.granularity = plan.granularity;
  engine.host_devices = request.host_devices;
  engine.trap_faults = request.trap_faults;
  // VMMRUN_HOST_MEMORY caps the memory the host twin emulates (docs/backends.md), so that the size
  // of the machine does not decide which scenarios run: the test suite pins it.
  if (const char* cap = std::getenv("VMMRUN_HOST_MEMORY"); cap != nullptr && *cap != '\0') {
    const std::optional<uint64_t> bytes = ParseSize(cap);
    if (!bytes || *bytes == 0) {
      out.exit_code = kExitInputError;
      out.error = "VMMRUN_HOST_MEMORY='" + Excerpt(cap) +
                  "' is not a size; give one such as 16GiB (the host twin's memory), or unset it";
      return out;
    }
    engine.host_memory = *bytes;
  }
  StatusOr<EngineChoice> choice = SelectEngine(engine);
  if (!choice.ok()) {
    out.exit_code = ExitForStatus(choice.status());
    out.error = choice.status().message();
    return out;
  }
  PreparedRun run{
      std::move(request), std::move(*scenario), std::move(plan), std::move(choice).value(), {}};
  ProvenanceInput provenance{run.request.argv,  run.request.path,     run.request.text,
                             run.scenario.name, run.plan.granularity, run.engine.reason};
  FillProvenance(provenance, run.engine.engine->info(), &run.report);
  out.run.emplace(std::move(run));
  return out;
}

report::Report ExecuteRun(PreparedRun& run, StepObserver* observer) {
  Engine& engine = *run.engine.engine;
  const DeviceInfo info = engine.info();
  report::Report report = std::move(run.report);
  // Isolate blocks run in a child vmm-run on this backend, from this very text and --set values.
  isolate::ChildBlockOptions block_options;
  block_options.exe = run.request.child_exe;
  block_options.scenario_path = run.request.path;
  block_options.scenario_text = run.request.text;
  for (const VarOverride& v : run.request.expand.set)
    block_options.set.emplace_back(v.name, v.value);
  block_options.include_roots = run.request.expand.include_roots;
  block_options.backend = info.backend;
  block_options.device = run.request.device;
  block_options.host_devices = run.request.host_devices;
  isolate::ChildBlockRunner blocks(std::move(block_options));

  std::string unmet = UnmetRequirement(run.scenario.requires_, info);
  if (unmet.empty()) unmet = DescribeDevices(run.plan, engine, &report.devices);
  if (report.devices.empty()) report.devices.push_back(DeviceRecordOf(info, 0));
  if (unmet.empty()) unmet = UnmetCapability(run.scenario.requires_, engine);
  RunOutcome outcome =
      unmet.empty() ? RunPlan(run.plan, engine, observer, &blocks) : SkipPlan(run.plan, unmet);
  run.engine.engine.reset();  // release everything still alive before reporting

  report.steps = std::move(outcome.steps);
  report.buffers = BufferTable(run.plan);
  AddTargets(run.plan, &report.steps);
  if (run.scenario.fold_loops) FoldRepeatedSteps(TemplatesOf(run.scenario), &report.steps);
  report.graphs = std::move(outcome.graphs);
  report.vars = run.scenario.vars;
  for (const VarOverride& v : run.request.point) report.sweep_point.emplace_back(v.name, v.value);
  report.summary = outcome.summary;
  return report;
}

ScenarioOutcome RunScenario(RunRequest request, StepObserver* observer) {
  ScenarioOutcome out;
  PrepareOutcome prepared = PrepareRun(std::move(request));
  out.exit_code = prepared.exit_code;
  out.diagnostics = std::move(prepared.diagnostics);
  out.error = std::move(prepared.error);
  if (!prepared.run) return out;
  out.report = ExecuteRun(*prepared.run, observer);
  out.exit_code = out.report->summary.exit_code;
  return out;
}

}  // namespace vmm
