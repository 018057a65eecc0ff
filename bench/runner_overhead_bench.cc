// Runner overhead per VMM step: the executor running a plan of N page cycles
// (create, map, set_access, unmap, release of one 2 MiB page) against a raw C++ loop making the
// same Engine calls in the same process. Runs alternate in ABBA order so drift and ordering
// effects hit both; the figures are medians over the rounds. Prints figures; asserts nothing.
//
//   runner_overhead_bench [--backend auto|host|cuda] [--cycles N] [--rounds R]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runner/base/stopwatch.h"
#include "runner/engine/select/engine_select.h"
#include "runner/exec/executor.h"
#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"

namespace {

constexpr uint64_t kPage = 2ull << 20;

std::string CycleScenario(int cycles) {
  std::string text =
      "version: 1\nname: overhead\ngranularity: 2MiB\nbuffers: {A: {shape: [1024]}}\nsteps:\n"
      "  - {op: reserve, buffer: A, size: 2MiB}\n";
  for (int i = 0; i < cycles; ++i) {
    text +=
        "  - {op: create, alloc: p, size: 2MiB}\n"
        "  - {op: map, buffer: A, alloc: p}\n"
        "  - {op: set_access, buffer: A}\n"
        "  - {op: unmap, buffer: A}\n"
        "  - {op: release, alloc: p}\n";
  }
  text += "  - {op: free, buffer: A}\n";
  return text;
}

// The same engine calls as the plan, in a plain loop; returns total microseconds.
double RawLoop(vmm::Engine& engine, int cycles) {
  vmm::Stopwatch watch;
  vmm::DevicePtr va = 0;
  if (!engine.Reserve(kPage, 0, &va).ok()) return -1;
  for (int i = 0; i < cycles; ++i) {
    vmm::AllocHandle h;
    vmm::SyncNote note;
    if (!engine.Create(kPage, &h).ok() || !engine.Map(va, kPage, 0, h).ok() ||
        !engine.SetAccess(va, kPage, vmm::Access::kReadWrite).ok() ||
        !engine.Unmap(va, kPage, &note).ok() || !engine.Release(h, &note).ok())
      return -1;
  }
  if (!engine.Free(va, kPage).ok()) return -1;
  return watch.ElapsedUs();
}

// Does nothing and succeeds: isolates the executor's own cost per step.
class NullEngine final : public vmm::Engine {
 public:
  NullEngine() {
    info_.backend = "null";
    info_.granularity_min = info_.granularity_recommended = kPage;
  }
  const vmm::DeviceInfo& info() const override { return info_; }
  vmm::Status Reserve(uint64_t, uint64_t, vmm::DevicePtr* va) override {
    *va = 0x100000000;
    return {};
  }
  vmm::Status Free(vmm::DevicePtr, uint64_t) override { return {}; }
  vmm::Status Create(uint64_t, vmm::AllocHandle* out) override {
    out->value = 1;
    return {};
  }
  vmm::Status Release(vmm::AllocHandle, vmm::SyncNote*) override { return {}; }
  vmm::Status Map(vmm::DevicePtr, uint64_t, uint64_t, vmm::AllocHandle) override { return {}; }
  vmm::Status SetAccess(vmm::DevicePtr, uint64_t, vmm::Access) override { return {}; }
  vmm::Status Unmap(vmm::DevicePtr, uint64_t, vmm::SyncNote*) override { return {}; }
  vmm::Status Fill(vmm::DevicePtr, uint64_t, uint64_t, vmm::OpTiming*) override { return {}; }
  vmm::Status Matmul(const vmm::MatmulArgs&, vmm::OpTiming*) override { return {}; }
  vmm::Status BeginCapture() override { return {}; }
  vmm::Status EndCapture(vmm::GraphHandle*) override { return {}; }
  vmm::Status Instantiate(vmm::GraphHandle, vmm::ExecHandle*) override { return {}; }
  vmm::Status Replay(vmm::ExecHandle, vmm::OpTiming*) override { return {}; }
  vmm::Status Update(vmm::ExecHandle, vmm::GraphHandle, vmm::UpdateResult*) override { return {}; }
  vmm::Status KernelNodes(vmm::GraphHandle, std::vector<vmm::KernelNodeParams>*) override {
    return {};
  }
  vmm::Status DestroyGraph(vmm::GraphHandle) override { return {}; }
  vmm::Status DestroyExec(vmm::ExecHandle) override { return {}; }
  vmm::Status CopyToHost(vmm::DevicePtr, uint64_t, void*) override { return {}; }
  vmm::Status Checksum(vmm::DevicePtr, uint64_t, uint64_t*) override { return {}; }
  vmm::Status Compare(vmm::DevicePtr, vmm::DevicePtr, uint64_t, uint32_t,
                      vmm::CompareResult*) override {
    return {};
  }
  vmm::Status Synchronize() override { return {}; }

 private:
  vmm::DeviceInfo info_;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "auto";
  int cycles = 500, rounds = 11;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--backend")) backend = argv[i + 1];
    if (!std::strcmp(argv[i], "--cycles")) cycles = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
  }
  std::vector<vmm::Diagnostic> diagnostics;
  std::optional<vmm::Scenario> scenario =
      vmm::ParseScenario(CycleScenario(cycles), "overhead.yaml", &diagnostics);
  vmm::Plan plan;
  if (scenario) plan = vmm::BuildPlan(*scenario, &diagnostics);
  if (!diagnostics.empty()) {
    std::fprintf(stderr, "%s", vmm::FormatDiagnostics(diagnostics).c_str());
    return 2;
  }
  vmm::EngineRequest request;
  vmm::ParseBackendKind(backend, &request.kind);
  request.granularity = kPage;
  vmm::StatusOr<vmm::EngineChoice> choice = vmm::SelectEngine(request);
  if (!choice.ok()) {
    std::printf("skipped: %s\n", choice.status().message().c_str());
    return 0;
  }
  vmm::Engine& engine = *choice->engine;
  RawLoop(engine, cycles / 10 + 1);  // warm-up
  std::vector<double> raw, runner, inside;
  for (int r = 0; r < rounds; ++r) {
    // ABBA order: half the rounds run the runner first, so whatever one run leaves behind for
    // the next (freed pages, driver caches) does not bias one side.
    const bool raw_first = r % 2 == 0;
    if (raw_first) raw.push_back(RawLoop(engine, cycles));
    vmm::Stopwatch watch;
    vmm::RunOutcome outcome = vmm::RunPlan(plan, engine, nullptr);
    runner.push_back(watch.ElapsedUs());
    if (!raw_first) raw.push_back(RawLoop(engine, cycles));
    double engine_us = 0;
    for (const vmm::report::StepRecord& step : outcome.steps) engine_us += step.wall_us;
    inside.push_back(engine_us);
    if (outcome.summary.exit_code != 0 || raw.back() < 0) {
      std::fprintf(stderr, "run failed (exit %d)\n", outcome.summary.exit_code);
      return 4;
    }
  }
  NullEngine null_engine;
  std::vector<double> null_runs;
  for (int r = 0; r < rounds; ++r) {
    vmm::Stopwatch watch;
    vmm::RunOutcome outcome = vmm::RunPlan(plan, null_engine, nullptr);
    null_runs.push_back(watch.ElapsedUs());
  }
  const double steps = 5.0 * cycles + 2;
  const double raw_us = Median(raw), runner_us = Median(runner);
  std::printf("runner overhead per VMM step (%s backend: %s)\n", engine.info().backend.c_str(),
              engine.info().name.c_str());
  std::printf("  %d cycles of create/map/set_access/unmap/release of a 2 MiB page, %d rounds\n",
              cycles, rounds);
  std::printf("  raw engine loop : %10.1f us total, %7.3f us/step\n", raw_us, raw_us / steps);
  std::printf("  runner (plan)   : %10.1f us total, %7.3f us/step\n", runner_us, runner_us / steps);
  std::printf("  overhead        : %+7.3f us/step, ratio runner/raw = %.4f (target <= 1.03)\n",
              (runner_us - raw_us) / steps, runner_us / raw_us);
  std::printf("  inside engine   : %10.1f us total (sum of the steps' wall_us)\n", Median(inside));
  std::printf("  executor alone  : %7.3f us/step (the same plan on an engine that does nothing)\n",
              Median(null_runs) / steps);
  return 0;
}
