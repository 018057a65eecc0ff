#include "runner/pipeline/run_scenario.h"

#include <cstdlib>
#include <map>

#include "runner/base/exit_code.h"
#include "runner/base/format.h"
#include "runner/base/process_memory.h"
#include "runner/exec/fold_steps.h"
#include "runner/exec/step_targets.h"
#include "runner/isolate/child_block_runner.h"
#include "runner/pipeline/device_facts.h"
#include "runner/pipeline/provenance.h"
#include "runner/pipeline/requirements.h"
#include "runner/scenario/parse.h"
#include "runner/scenario/size.h"

namespace vmm {
namespace {

// Each top-level step's template, as an id (exec/fold_steps.h): the steps a loop or fragment made
// share their template's place (file:line:column), and so its id. Four bytes a step: a long run
// keeps them until its records are folded.
std::vector<uint32_t> TemplatesOf(const Scenario& scenario) {
  std::map<std::string, uint32_t> ids;
  std::vector<uint32_t> out;
  out.reserve(scenario.steps.size());
  for (const Step& s : scenario.steps) {
    const std::string place =
        s.loc.file() + ":" + std::to_string(s.loc.line) + ":" + std::to_string(s.loc.column);
    out.push_back(ids.emplace(place, static_cast<uint32_t>(ids.size())).first->second);
  }
  return out;
}

// Whether a step (or one inside it, isolate blocks included: a child runs its block from the same
// preparation) reads its scenario step at run time: check_record does (its keys), so the
// scenario's steps stay alive for it.
bool ReadsSource(const std::vector<PlanStep>& steps) {
  for (const PlanStep& s : steps) {
    if (s.op == Op::kCheckRecord || ReadsSource(s.body)) return true;
    if (s.block && ReadsSource(s.block->plan.steps)) return true;
    for (const std::vector<PlanStep>& branch : s.branches)
      if (ReadsSource(branch)) return true;
  }
  return false;
}

// PlanStep::src of every step, nested ones included, made null: the scenario's steps are gone.
// Isolate blocks' plans (immutable) keep theirs, never read: ReadsSource found no step that would.
void ForgetSource(std::vector<PlanStep>* steps) {
  for (PlanStep& s : *steps) {
    s.src = nullptr;
    ForgetSource(&s.body);
    for (std::vector<PlanStep>& branch : s.branches) ForgetSource(&branch);
  }
}

}  // namespace

PrepareOutcome PrepareRun(RunRequest request) {
  PrepareOutcome out;
  EngineRequest engine;
  engine.kind = request.backend;
  engine.device = request.device;
  engine.host_devices = request.host_devices;
  engine.trap_faults = request.trap_faults;
  engine.driver_dot = request.driver_dot;
  // VMMRUN_HOST_MEMORY caps the memory the host twin emulates (docs/backends.md), so that the size
  // of the machine does not decide which scenarios run: the test suite pins it.
  if (Status cap = ApplyHostMemoryEnvironment(&engine); !cap.ok()) {
    out.exit_code = kExitInputError;
    out.error = cap.message();
    return out;
  }
  // A scenario that sizes things by the device's memory gets it before it is expanded.
  if (Status facts = ReadDeviceFacts(request.text, engine, &request.expand); !facts.ok()) {
    out.exit_code = ExitForStatus(facts);
    out.error =
        "cannot read the device's memory for device_memory / device_free: " + facts.message();
    return out;
  }
  PartialScenario partial;
  std::optional<Scenario> scenario = ParseScenario(request.text, request.path, request.expand,
                                                   &out.diagnostics, nullptr, &partial);
  Plan plan;
  if (scenario) plan = BuildPlan(*scenario, &out.diagnostics);
  AddStateErrors(partial, &out.diagnostics);  // with schema errors: the state's too, in one pass
  if (!out.diagnostics.empty()) {
    CollapseRepeats(&out.diagnostics);
    out.exit_code = kExitInputError;
    return out;
  }
  engine.granularity = plan.granularity;
  StatusOr<EngineChoice> choice = SelectEngine(engine);
  if (!choice.ok()) {
    out.exit_code = ExitForStatus(choice.status());
    out.error = choice.status().message();
    return out;
  }
  std::vector<uint32_t> templates;
  if (scenario->fold_loops) templates = TemplatesOf(*scenario);
  if (!ReadsSource(plan.steps)) {
    ForgetSource(&plan.steps);
    std::vector<Step>().swap(scenario->steps);
  }
  ReturnFreeHeapMemory();  // the parse tree's and the steps' pages, before the records need pages
  PreparedRun run{
      std::move(request),  std::move(*scenario), std::move(plan), std::move(choice).value(), {},
      std::move(templates)};
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
  // The device facts as this process read them: the child's view of free memory differs.
  for (const auto& [name, value] : run.request.expand.facts)
    block_options.facts.emplace_back(name, value.ToString());
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
  std::vector<PlanStep>().swap(run.plan.steps);  // consumed (PreparedRun's contract)
  if (run.scenario.fold_loops) FoldRepeatedSteps(run.templates, &report.steps);
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
