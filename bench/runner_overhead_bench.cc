// Runner overhead per VMM step: the executor running a plan of N page cycles (create, map,
// set_access, unmap, release of one 2 MiB page) against plain C++ loops in the same process:
//   - raw driver loop: the driver calls themselves (CUDA backend only; the baseline),
//     run twice per round: the second run against the first (an A/A ratio) is how far two
//     identical loops differ here, the resolution every other ratio has,
//   - raw engine loop: the same Engine calls the plan makes, without the runner,
//   - the runner twice: as it runs, and with the process's background thread held by the bench
//     (every step compiled and recorded on the run's thread: what the second thread buys).
// Every round runs each variant once, in an order rotated from round to round so drift and
// ordering effects hit all of them; ratios are taken within a round (paired) and summarized as
// median [min, max] over the rounds. Prints figures; asserts nothing.
//
//   runner_overhead_bench [--backend auto|host|cuda|null|spin] [--cycles N] [--rounds R]
//                         [--call-us U] [--call-touch-kib K]
// `--backend null` times only the executor on an engine that does nothing (for profiling).
// `--backend spin` runs every variant on an engine whose VMM calls each spin U µs (10 by default):
// runner / engine there is the runner's own work on the run's thread, on any machine, without a
// driver's noise (but also without what a driver call does to the caches, unless
// `--call-touch-kib K`: each call then first writes a line in every 64 bytes of K KiB of its own).
#include <sys/resource.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/null_engine.h"
#include "bench/raw_driver_loop.h"
#include "runner/base/background_thread.h"
#include "runner/base/stopwatch.h"
#include "runner/engine/select/engine_select.h"
#include "runner/exec/burst_records.h"
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

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// "1.0123 [1.0051, 1.0310], fastest runs 1.0102": the median and range of the per-round ratios
// a[i] / b[i], and the ratio of the two fastest runs (noise only ever adds time, so the minimum is
// the other usual estimate of intrinsic cost).
std::string RatioSummary(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> r;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) r.push_back(a[i] / b[i]);
  if (r.empty()) return "n/a";
  char text[128];
  std::snprintf(text, sizeof text, "%.4f [%.4f, %.4f], fastest runs %.4f", Median(r),
                *std::min_element(r.begin(), r.end()), *std::max_element(r.begin(), r.end()),
                *std::min_element(a.begin(), a.end()) / *std::min_element(b.begin(), b.end()));
  return text;
}

// Microseconds of each of `rounds` runs of `plan` on an engine that does nothing.
std::vector<double> TimeExecutorAlone(const vmm::Plan& plan, int rounds) {
  vmm::bench::NullEngine null_engine;
  std::vector<double> runs;
  for (int r = 0; r < rounds; ++r) {
    vmm::Stopwatch watch;
    vmm::RunOutcome outcome = vmm::RunPlan(plan, null_engine, nullptr);
    runs.push_back(watch.ElapsedUs());
  }
  return runs;
}

// Minor page faults of this process so far (first touches of memory the runner allocates).
long MinorFaults() {
  rusage usage = {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// CPU time of every thread of this process so far (user and system), microseconds: the runner
// builds a long burst's records on a second thread, which wall time alone does not show.
double ProcessCpuUs() {
  rusage usage = {};
  getrusage(RUSAGE_SELF, &usage);
  auto us = [](const timeval& t) { return t.tv_sec * 1e6 + static_cast<double>(t.tv_usec); };
  return us(usage.ru_utime) + us(usage.ru_stime);
}

// Nanoseconds per steady_clock read (the runner reads it once per 32 VMM steps of a burst). now()
// is a call into the vDSO, which the compiler cannot drop, so the results need not be kept.
double ClockReadNs() {
  constexpr int kReads = 1000000;
  vmm::Stopwatch watch;
  for (int i = 0; i < kReads; ++i) std::chrono::steady_clock::now();
  return watch.ElapsedUs() * 1000.0 / kReads;
}

// Nanoseconds per time-stamp counter read (the runner reads it once per VMM step); 0 off x86-64,
// where the runner reads steady_clock instead.
double TickReadNs() {
#if defined(__x86_64__)
  constexpr int kReads = 1000000;
  uint64_t sum = 0;
  vmm::Stopwatch watch;
  for (int i = 0; i < kReads; ++i) sum += __rdtsc();
  const double ns = watch.ElapsedUs() * 1000.0 / kReads;
  return sum == 0 ? -1 : ns;  // uses the sum, so the reads stay
#else
  return 0;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "auto";
  int cycles = 500, rounds = 12;
  double call_us = 10, touch_kib = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--backend")) backend = argv[i + 1];
    if (!std::strcmp(argv[i], "--call-us")) call_us = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--call-touch-kib")) touch_kib = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--cycles")) cycles = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
  }
  if (cycles < 1 || rounds < 1 || !(call_us > 0) || !(touch_kib >= 0)) {
    std::fprintf(stderr,
                 "usage: runner_overhead_bench [--backend B] [--cycles N>=1] [--rounds R>=1] "
                 "[--call-us U>0] [--call-touch-kib K>=0]\n");
    return 2;
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
  if (backend == "null") {
    const std::vector<double> runs = TimeExecutorAlone(plan, rounds);
    std::printf("executor alone: %.3f us/step (median of %d rounds; fastest %.3f)\n",
                Median(runs) / (5.0 * cycles + 2), rounds,
                *std::min_element(runs.begin(), runs.end()) / (5.0 * cycles + 2));
    return 0;
  }
  std::unique_ptr<vmm::Engine> owned;
  if (backend == "spin") {
    owned =
        std::make_unique<vmm::bench::NullEngine>(call_us, static_cast<size_t>(touch_kib * 1024));
  } else {
    vmm::EngineRequest request;
    vmm::ParseBackendKind(backend, &request.kind);
    request.granularity = kPage;
    vmm::StatusOr<vmm::EngineChoice> choice = vmm::SelectEngine(request);
    if (!choice.ok()) {
      std::printf("skipped: %s\n", choice.status().message().c_str());
      return 0;
    }
    owned = std::move(choice->engine);
  }
  vmm::Engine& engine = *owned;
  std::unique_ptr<vmm::bench::RawDriverLoop> driver;
  if (engine.info().backend == "cuda") {
    driver = vmm::bench::MakeRawDriverLoop(engine.info().ordinal, kPage);
    if (!driver) return 4;
  }

  std::vector<double> raw_driver, raw_driver_again, raw_engine, runner, runner_alone, inside,
      faults;
  std::vector<double> driver_cpu, runner_cpu;
  uint64_t aside = 0;  // runner runs whose burst had its records built aside
  uint64_t ahead = 0;  // ... and its later steps compiled there, ahead of the calls
  bool failed = false;
  // One run of the plan. With `alone`, the bench holds the process's background thread through
  // the run, so the runner finds none and compiles and records every step on its own thread (what
  // it does when another run holds it): runner / runner alone is what the second thread buys.
  auto run_plan = [&](bool alone) {
    vmm::BackgroundThread* held = alone ? vmm::BackgroundThread::TryAcquire() : nullptr;
    if (alone && held == nullptr) {
      std::fprintf(stderr, "no background thread to hold\n");
      failed = true;
      return;
    }
    const long faults_before = MinorFaults();
    const double cpu_before = ProcessCpuUs();
    const uint64_t aside_before = vmm::BurstsRecordedAside();
    const uint64_t ahead_before = vmm::BurstsCompiledAhead();
    vmm::Stopwatch watch;
    vmm::RunOutcome outcome = vmm::RunPlan(plan, engine, nullptr);
    const double us = watch.ElapsedUs();
    if (held != nullptr) {  // given back: Run once, then Wait (background_thread.h)
      held->Run([] {});
      held->Wait();
    }
    if (outcome.summary.exit_code != 0) {
      std::fprintf(stderr, "run failed (exit %d)\n", outcome.summary.exit_code);
      failed = true;
    }
    if (alone) {
      runner_alone.push_back(us);
      return;
    }
    runner.push_back(us);
    runner_cpu.push_back(ProcessCpuUs() - cpu_before);
    aside += vmm::BurstsRecordedAside() - aside_before;
    ahead += vmm::BurstsCompiledAhead() - ahead_before;
    faults.push_back(static_cast<double>(MinorFaults() - faults_before));
    double engine_us = 0;
    for (const vmm::report::StepRecord& step : outcome.steps) engine_us += step.wall_us;
    inside.push_back(engine_us);
  };
  const std::function<void()> variants[] = {
      [&] {
        if (!driver) return;
        const double cpu_before = ProcessCpuUs();
        raw_driver.push_back(driver->Run(cycles));
        driver_cpu.push_back(ProcessCpuUs() - cpu_before);
      },
      [&] {
        if (driver) raw_driver_again.push_back(driver->Run(cycles));
      },
      [&] { raw_engine.push_back(RawLoop(engine, cycles)); },
      [&] { run_plan(false); },
      [&] { run_plan(true); },
  };
  // Warm-up: every variant once, untimed.
  for (const auto& variant : variants) variant();
  raw_driver.clear(), raw_driver_again.clear(), raw_engine.clear(), runner.clear();
  runner_alone.clear(), inside.clear(), faults.clear(), driver_cpu.clear(), runner_cpu.clear();
  aside = ahead = 0;
  int order[] = {0, 1, 2, 3, 4};
  for (int r = 0; r < rounds && !failed; ++r) {
    for (int v : order) variants[v]();
    std::next_permutation(std::begin(order), std::end(order));  // all 120 orders, in turn
  }
  const bool bad = [&] {
    for (const auto* series : {&raw_driver, &raw_driver_again, &raw_engine}) {
      for (double us : *series) {
        if (us < 0) return true;
      }
    }
    return false;
  }();
  if (failed || bad) return 4;

  const std::vector<double> null_runs = TimeExecutorAlone(plan, rounds);
  const double steps = 5.0 * cycles + 2;
  if (backend == "spin") {
    std::printf(
        "runner overhead per VMM step (spin engine: every VMM call spins %.1f us, %.0f KiB "
        "written through first)\n",
        call_us, touch_kib);
  } else {
    std::printf("runner overhead per VMM step (%s backend: %s)\n", engine.info().backend.c_str(),
                engine.info().name.c_str());
  }
  std::printf(
      "  %d cycles of create/map/set_access/unmap/release of a 2 MiB page, %d rounds,\n"
      "  variants in rotated order; medians; ratio: median [range] of per-round ratios\n",
      cycles, rounds);
  auto line = [&](const char* name, const std::vector<double>& us) {
    const double m = Median(us);
    std::printf("  %-16s: %10.1f us total, %7.3f us/step\n", name, m, m / steps);
  };
  if (driver) line("raw driver loop", raw_driver);
  line("raw engine loop", raw_engine);
  line("runner (plan)", runner);
  line("runner, 1 thread", runner_alone);
  if (driver) {
    std::printf("  runner / driver : %s   (target <= 1.02)\n",
                RatioSummary(runner, raw_driver).c_str());
    std::printf("  engine / driver : %s\n", RatioSummary(raw_engine, raw_driver).c_str());
    std::printf("  driver / driver : %s   (the same loop twice: the noise)\n",
                RatioSummary(raw_driver_again, raw_driver).c_str());
    std::printf("  CPU time        : runner / driver %s   (every thread of the process)\n",
                RatioSummary(runner_cpu, driver_cpu).c_str());
  }
  std::printf("  runner / engine : %s%s\n", RatioSummary(runner, raw_engine).c_str(),
              driver ? "" : "   (no driver on this backend)");
  std::printf("  1 thread / engine: %s   (the runner without its background thread)\n",
              RatioSummary(runner_alone, raw_engine).c_str());
  std::printf(
      "  inside engine   : %10.1f us total (sum of the steps' wall_us), so %.3f us/step\n"
      "                    outside the engine calls (setup, records), %.0f page faults\n",
      Median(inside), (Median(runner) - Median(inside)) / steps, Median(faults));
  std::printf(
      "  records aside   : %llu of %d runner runs built their burst's records on the\n"
      "                    background thread, %llu compiled its later steps there too\n"
      "                    (burst_records.h)\n",
      static_cast<unsigned long long>(aside), static_cast<int>(runner.size()),
      static_cast<unsigned long long>(ahead));
  std::printf("  executor alone  : %7.3f us/step (the same plan on an engine that does nothing)\n",
              Median(null_runs) / steps);
  std::printf("  clock read      : %7.1f ns (steady_clock; the runner reads it %s)\n",
              ClockReadNs(), TickReadNs() > 0 ? "once per 32 VMM steps" : "once per VMM step");
  if (driver) {
    const double context_ns = driver->ContextQueryNs();
    if (context_ns < 0) return 4;  // the driver refused (printed by the loop)
    std::printf("  context query   : %7.1f ns (cuCtxGetCurrent; the engine asks once per call)\n",
                context_ns);
  }
  if (TickReadNs() > 0) {
    std::printf("  counter read    : %7.1f ns (rdtsc; the runner reads it once per VMM step)\n",
                TickReadNs());
  }
  return 0;
}
