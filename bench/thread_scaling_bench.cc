// VMM calls from several host threads: how the driver serialises them, and what the runner adds.
// For 1, 2, 4, 8 and 16 threads and two mixes (the page cycle: create, map, set_access, unmap,
// release of a 2 MiB page; map-only: map + unmap of an allocation made before), each thread on a
// page of its own, it runs in the same process:
//   - raw: a plain C++ loop of the driver calls on std::threads (bench/raw_driver_loop_cuda.cc),
//   - runner: a threads group of the same calls, parsed, planned and run by the executor,
//   - engine: std::threads making the same calls through the engine the runner uses (its
//     PrepareThread, then Map, Unmap, ... from a loop that times each call as the raw one does):
//     what the engine's path adds under contention, apart from the executor's. By default each
//     call is made outside a context-hold bracket (the engine asks the driver for the current
//     context every call); `--engine-hold` brackets each thread's loop as the runner brackets its
//     bursts (Engine::HoldContext), so that engine / raw is the engine's share of runner / raw.
// Every round runs the raw loop twice, the runner and the engine loop once each, in an order
// rotated from round to round. A point runs at least R rounds, and more (up to 10 R) until it has
// taken 3 s, so the short points (map + unmap on few threads: milliseconds a round) get the rounds
// their noise needs. Prints, per point, the cycles per second of each, the runner's and the engine
// loop's time over raw (medians of the rounds' ratios), the second raw run over the first (the same
// loop twice: how far two identical runs differ there, the resolution of the runner's ratio) and
// each op's p50 and p99 latency on both sides (a raw latency is the call alone; a runner step's
// runs from the end of the thread's previous call, so its p50 holds the runner's time between calls
// too), and on each side when the first thread ended as a fraction of when the last did (where the
// driver's lock favours some threads, the others finish alone, on a less contended driver: a tail
// that differs between the two sides moves their walls apart). Asserts nothing (CUDA only: the
// twin's calls go one at a time).
//
//   thread_scaling_bench [--cycles N] [--rounds R] [--seconds S] [--threads 1,2,4,8,16]
//                        [--setup threads|caller] [--raw-gap-ns G] [--raw-context-query]
//                        [--engine-hold] [--mix cycle|map-only|both] [--print-rounds] [--null]
// `--setup caller`: the raw loop reserves every thread's page (and creates its allocation) on the
// calling thread before the start, and frees them after the wall is taken, as the runner's
// scenario does in steps around its threads group; by default each raw thread sets up its own.
// `--raw-gap-ns G`: each raw thread spins at least G ns after each call before its next (how much
// a point's rate hangs on how soon a thread comes back to the driver; 0 by default).
// `--raw-context-query`: each raw thread asks the driver which context is current before each
// call (cuCtxGetCurrent, as the engine's calls do outside a burst).
// `--mix` runs one of the two mixes only (both by default). `--print-rounds` prints, after each
// point, a line per round ("round <mix> <threads> <runner/raw> <engine/raw> <raw/raw>"), so that
// an A/B of two binaries can pool the rounds of many short runs (the median of 10 rounds moves by
// a few percent from run to run at 16 threads; the effects looked for are about 1 %).
// `--null` times only the runner, on an engine whose calls do nothing (any machine): µs per step
// of a threads group against the same steps run by the run's own loop.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "bench/null_engine.h"
#include "bench/raw_driver_loop.h"
#include "runner/engine/engine.h"
#include "runner/engine/select/engine_select.h"
#include "runner/exec/executor.h"
#include "runner/exec/timing_stats.h"
#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"

namespace {

constexpr uint64_t kPage = 2ull << 20;

// A threads group of `threads` threads, each doing `cycles` cycles on its buffer W<t>.
std::string Scenario(int threads, int cycles, bool map_only) {
  std::string text = "version: 1\nname: thread_scaling\ngranularity: 2MiB\nbuffers:\n";
  for (int t = 0; t < threads; ++t) text += "  W" + std::to_string(t) + ": {shape: [1024]}\n";
  text += "steps:\n";
  for (int t = 0; t < threads; ++t) {
    const std::string w = "W" + std::to_string(t), p = "p" + std::to_string(t);
    text += "  - {op: reserve, buffer: " + w + ", size: 2MiB}\n";
    if (map_only) text += "  - {op: create, alloc: " + p + ", size: 2MiB}\n";
  }
  text += "  - name: group\n    threads:\n";
  for (int t = 0; t < threads; ++t) {
    const std::string w = "W" + std::to_string(t), p = "p" + std::to_string(t);
    text += "      - thread: t" + std::to_string(t) + "\n        steps:\n";
    for (int i = 0; i < cycles; ++i) {
      if (map_only) {
        text += "          - {op: map, buffer: " + w + ", alloc: " + p + "}\n" +
                "          - {op: unmap, buffer: " + w + "}\n";
        continue;
      }
      text += "          - {op: create, alloc: " + p + ", size: 2MiB}\n" +
              "          - {op: map, buffer: " + w + ", alloc: " + p + "}\n" +
              "          - {op: set_access, buffer: " + w + "}\n" +
              "          - {op: unmap, buffer: " + w + "}\n" +
              "          - {op: release, alloc: " + p + "}\n";
    }
  }
  return text;
}

// The runner's own cost per step (µs), on NullEngine: the steps of a threads group of `threads`
// threads, and the same steps of one thread run by the run's own loop (no group).
int RunnerAlone(const std::vector<int>& thread_counts, int cycles, int rounds);

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The first of `ends` over the last (1: every thread ended together); 0 when there are none.
double FirstOverLast(const std::vector<double>& ends) {
  if (ends.empty()) return 0;
  const auto [first, last] = std::minmax_element(ends.begin(), ends.end());
  return *last > 0 ? *first / *last : 0;
}

double Detail(const vmm::report::StepRecord& r, const std::string& key) {
  for (const vmm::report::Detail& d : r.details)
    if (d.first == key) return std::get<double>(d.second);
  return -1;
}

// `threads` std::threads, started together (each spins on a flag, as the raw loop's), each doing
// `cycles` cycles through `engine` on a page of its own, reserved (and, for map + unmap, created)
// on the calling thread before the start and freed after the wall is taken. Returns the wall
// from the start to the last thread's end, in µs; < 0 if a call failed.
double RunEngineThreaded(vmm::Engine& engine, int threads, int cycles, bool map_only, bool hold) {
  std::vector<vmm::DevicePtr> vas(static_cast<size_t>(threads), 0);
  std::vector<vmm::AllocHandle> kept(static_cast<size_t>(threads));
  bool ok = true;
  for (int t = 0; ok && t < threads; ++t) {
    ok = engine.Reserve(kPage, kPage, &vas[t]).ok() &&
         (!map_only || engine.Create(kPage, &kept[t]).ok());
  }
  std::atomic<int> ready{0};
  std::atomic<bool> go{false}, failed{!ok};
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  if (ok) {
    std::vector<std::jthread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        engine.PrepareThread(true);
        const vmm::DevicePtr va = vas[t];
        // Each call timed as the raw loop times its own (two clock reads, a store in room made
        // before the start), so that the two differ by the engine's path alone.
        std::vector<double> latency;
        latency.reserve(static_cast<size_t>(cycles) * (map_only ? 2 : 5));
        ++ready;
        while (!go.load()) std::this_thread::yield();
        if (hold) engine.HoldContext(true);
        auto timed = [&](auto call) {
          const auto t0 = std::chrono::steady_clock::now();
          const bool done = call().ok();
          latency.push_back(
              std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                  .count());
          return done;
        };
        bool fine = true;
        for (int i = 0; fine && i < cycles; ++i) {
          if (map_only) {
            fine = timed([&] { return engine.Map(va, kPage, 0, kept[t]); }) &&
                   timed([&] { return engine.Unmap(va, kPage, nullptr); });
            continue;
          }
          vmm::AllocHandle h;
          fine = timed([&] { return engine.Create(kPage, &h); }) &&
                 timed([&] { return engine.Map(va, kPage, 0, h); }) &&
                 timed([&] { return engine.SetAccess(va, kPage, vmm::Access::kReadWrite); }) &&
                 timed([&] { return engine.Unmap(va, kPage, nullptr); }) &&
                 timed([&] { return engine.Release(h, nullptr); });
        }
        if (hold) engine.HoldContext(false);
        if (!fine) failed = true;
      });
    }
    while (ready.load() < threads) std::this_thread::yield();
    start = std::chrono::steady_clock::now();
    go = true;
  }  // joined
  const double wall_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  for (int t = 0; t < threads; ++t) {
    if (kept[t].value != 0) (void)engine.Release(kept[t], nullptr);
    if (vas[t] != 0) (void)engine.Free(vas[t], kPage);
  }
  return failed ? -1 : wall_us;
}

}  // namespace

int main(int argc, char** argv) {
  int cycles = 200, rounds = 5;
  double min_seconds = 3;  // a point runs at least this long (up to 10 R rounds)
  std::vector<int> thread_counts{1, 2, 4, 8, 16};
  std::string setup = "threads";
  double gap_ns = 0;
  bool null_engine = false, context_query = false, engine_hold = false, print_rounds = false;
  std::string mixes = "both";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--null")) {
      null_engine = true;
      continue;
    }
    if (!std::strcmp(argv[i], "--raw-context-query")) {
      context_query = true;
      continue;
    }
    if (!std::strcmp(argv[i], "--engine-hold")) {
      engine_hold = true;
      continue;
    }
    if (!std::strcmp(argv[i], "--print-rounds")) {
      print_rounds = true;
      continue;
    }
    if (i + 1 == argc) {  // a flag without its value: the usage below
      cycles = 0;
      break;
    }
    if (!std::strcmp(argv[i], "--setup")) {
      setup = argv[i + 1];
    } else if (!std::strcmp(argv[i], "--mix")) {
      mixes = argv[i + 1];
    } else if (!std::strcmp(argv[i], "--raw-gap-ns")) {
      gap_ns = std::atof(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--cycles")) {
      cycles = std::atoi(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--rounds")) {
      rounds = std::atoi(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--seconds")) {
      min_seconds = std::atof(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--threads") != 0) {
      std::fprintf(stderr, "thread_scaling_bench: unknown flag '%s'\n", argv[i]);
      cycles = 0;  // the usage below
      break;
    } else {
      thread_counts.clear();
      for (const char* s = argv[i + 1]; *s != '\0';) {
        thread_counts.push_back(std::atoi(s));
        while (*s != '\0' && *s != ',') ++s;
        if (*s == ',') ++s;
      }
    }
    ++i;  // past the value
  }
  if (cycles < 1 || rounds < 1 || thread_counts.empty() || !(min_seconds >= 0) ||
      (setup != "threads" && setup != "caller") || !(gap_ns >= 0) ||
      (mixes != "both" && mixes != "cycle" && mixes != "map-only") ||
      (null_engine && (mixes != "both" || print_rounds))) {  // --null runs neither
    std::fprintf(stderr,
                 "usage: thread_scaling_bench [--cycles N] [--rounds R] [--seconds S] "
                 "[--threads 1,2] [--setup threads|caller] [--raw-gap-ns G>=0] "
                 "[--raw-context-query] [--engine-hold] [--mix cycle|map-only|both] "
                 "[--print-rounds] [--null] (--null takes neither --mix nor --print-rounds)\n");
    return 2;
  }
  if (null_engine) return RunnerAlone(thread_counts, cycles, rounds);
  vmm::EngineRequest request;
  request.kind = vmm::BackendKind::kCuda;
  request.granularity = kPage;
  vmm::StatusOr<vmm::EngineChoice> choice = vmm::SelectEngine(request);
  if (!choice.ok()) {
    std::fprintf(stderr, "thread_scaling_bench needs the CUDA backend: %s\n",
                 choice.status().message().c_str());
    return 3;
  }
  vmm::Engine& engine = *choice->engine;
  std::unique_ptr<vmm::bench::RawDriverLoop> raw =
      vmm::bench::MakeRawDriverLoop(engine.info().ordinal, kPage);
  if (raw == nullptr) return 3;
  std::printf(
      "%s, %d cycles per thread, at least %d rounds and %.0f s a point (median of the "
      "rounds); the raw loop's pages set up by %s; %.0f ns spun after each raw call%s; the "
      "engine loop's calls %s a context-hold bracket\n",
      engine.info().name.c_str(), cycles, rounds, min_seconds,
      setup == "caller" ? "the calling thread, as the runner's" : "each thread", gap_ns,
      context_query ? "; cuCtxGetCurrent before each raw call" : "",
      engine_hold ? "inside" : "outside");
  std::printf("%-9s %7s %7s %13s %13s %11s %11s %8s %11s %11s %-62s %-62s\n", "mix", "threads",
              "rounds", "raw cyc/s", "runner cyc/s", "runner/raw", "engine/raw", "raw/raw",
              "raw 1st/end", "run 1st/end", "raw p50/p99 µs per op", "runner p50/p99 µs per op");
  for (bool map_only : {false, true}) {
    const char* mix = map_only ? "map-only" : "cycle";
    if (mixes != "both" && mixes != mix) continue;
    const std::vector<std::string> ops =
        map_only ? std::vector<std::string>{"map", "unmap"}
                 : std::vector<std::string>{"create", "map", "set_access", "unmap", "release"};
    vmm::bench::RawDriverLoop::ThreadedOptions options;
    options.map_only = map_only;
    options.setup_on_caller = setup == "caller";
    options.gap_ns = gap_ns;
    options.context_query = context_query;
    for (int threads : thread_counts) {
      std::vector<vmm::Diagnostic> diagnostics;
      std::optional<vmm::Scenario> scenario =
          vmm::ParseScenario(Scenario(threads, cycles, map_only), "scaling.yaml", &diagnostics);
      vmm::Plan plan;
      if (scenario) plan = vmm::BuildPlan(*scenario, &diagnostics);
      if (!diagnostics.empty()) {
        std::fprintf(stderr, "%s", vmm::FormatDiagnostics(diagnostics).c_str());
        return 1;
      }
      std::vector<double> raw_wall, runner_wall, ratio, again_ratio, raw_first, runner_first,
          engine_ratio;
      std::map<std::string, std::vector<double>> raw_p50, raw_p99, runner_p50, runner_p99;
      const auto point_start = std::chrono::steady_clock::now();
      auto point_seconds = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - point_start)
            .count();
      };
      int r = 0;
      for (; r < rounds || (point_seconds() < min_seconds && r < 10 * rounds); ++r) {
        double raw_us = -1, again_us = -1, runner_us = -1, engine_us = -1;
        vmm::report::StepRecord group;
        auto run_raw = [&] {
          vmm::bench::RawDriverLoop::Threaded t = raw->RunThreaded(threads, cycles, options);
          raw_us = t.wall_us;
          raw_first.push_back(FirstOverLast(t.finish_us));
          for (const std::string& op : ops) {
            const vmm::report::TimingStats stats = vmm::ComputeStats(t.latency_us[op]);
            raw_p50[op].push_back(stats.median_us);
            raw_p99[op].push_back(stats.p99_us);
          }
        };
        auto run_raw_again = [&] { again_us = raw->RunThreaded(threads, cycles, options).wall_us; };
        auto run_runner = [&] {
          vmm::RunOutcome out = vmm::RunPlan(plan, engine, nullptr);
          if (out.summary.exit_code != 0) return;
          for (const vmm::report::StepRecord& s : out.steps)
            if (s.op == "threads") group = s;
          runner_us = group.wall_us;
          std::vector<double> ends;  // each thread's wall, from its start after the barrier
          for (const vmm::report::StepRecord& thread : group.body) ends.push_back(thread.wall_us);
          runner_first.push_back(FirstOverLast(ends));
          for (const std::string& op : ops) {
            runner_p50[op].push_back(Detail(group, op + "_p50_us"));
            runner_p99[op].push_back(Detail(group, op + "_p99_us"));
          }
        };
        auto run_engine = [&] {
          engine_us = RunEngineThreaded(engine, threads, cycles, map_only, engine_hold);
        };
        const std::function<void()> variants[] = {run_raw, run_raw_again, run_runner, run_engine};
        for (int v = 0; v < 4; ++v) variants[(r + v) % 4]();  // each goes first in turn
        if (raw_us <= 0 || again_us <= 0 || runner_us <= 0 || engine_us <= 0) {
          std::fprintf(stderr,
                       "a run failed (raw %.0f µs, again %.0f µs, runner %.0f µs, engine %.0f "
                       "µs)\n",
                       raw_us, again_us, runner_us, engine_us);
          return 1;
        }
        engine_ratio.push_back(engine_us / raw_us);
        raw_wall.push_back(raw_us);
        runner_wall.push_back(runner_us);
        ratio.push_back(runner_us / raw_us);
        again_ratio.push_back(again_us / raw_us);
      }
      const double total = static_cast<double>(threads) * cycles;
      std::string raw_ops, runner_ops;
      for (const std::string& op : ops) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s %.2f/%.0f ", op.c_str(), Median(raw_p50[op]),
                      Median(raw_p99[op]));
        raw_ops += buf;
        std::snprintf(buf, sizeof buf, "%s %.2f/%.0f ", op.c_str(), Median(runner_p50[op]),
                      Median(runner_p99[op]));
        runner_ops += buf;
      }
      std::printf("%-9s %7d %7d %13.0f %13.0f %11.3f %11.3f %8.3f %11.3f %11.3f %-62s %-62s\n", mix,
                  threads, r, total / Median(raw_wall) * 1e6, total / Median(runner_wall) * 1e6,
                  Median(ratio), Median(engine_ratio), Median(again_ratio), Median(raw_first),
                  Median(runner_first), raw_ops.c_str(), runner_ops.c_str());
      for (size_t k = 0; print_rounds && k < ratio.size(); ++k) {
        std::printf("round %s %d %.4f %.4f %.4f\n", mix, threads, ratio[k], engine_ratio[k],
                    again_ratio[k]);
      }
      std::fflush(stdout);
    }
  }
  return 0;
}

namespace {

std::optional<vmm::Plan> PlanOf(const std::string& text, std::unique_ptr<vmm::Scenario>* keep) {
  std::vector<vmm::Diagnostic> diagnostics;
  std::optional<vmm::Scenario> scenario = vmm::ParseScenario(text, "scaling.yaml", &diagnostics);
  if (!scenario) return std::nullopt;
  *keep = std::make_unique<vmm::Scenario>(std::move(*scenario));
  vmm::Plan plan = vmm::BuildPlan(**keep, &diagnostics);
  if (!diagnostics.empty()) {
    std::fprintf(stderr, "%s", vmm::FormatDiagnostics(diagnostics).c_str());
    return std::nullopt;
  }
  return plan;
}

// One thread's cycles as plain steps (no group): the run's own loop runs them.
std::string PlainScenario(int cycles) {
  std::string text =
      "version: 1\nname: plain\ngranularity: 2MiB\nbuffers:\n  W0: {shape: [1024]}\nsteps:\n"
      "  - {op: reserve, buffer: W0, size: 2MiB}\n";
  for (int i = 0; i < cycles; ++i)
    text +=
        "  - {op: create, alloc: p0, size: 2MiB}\n  - {op: map, buffer: W0, alloc: p0}\n"
        "  - {op: set_access, buffer: W0}\n  - {op: unmap, buffer: W0}\n"
        "  - {op: release, alloc: p0}\n";
  return text;
}

int RunnerAlone(const std::vector<int>& thread_counts, int cycles, int rounds) {
  vmm::bench::NullEngine engine;
  std::unique_ptr<vmm::Scenario> keep;
  std::optional<vmm::Plan> plain = PlanOf(PlainScenario(cycles), &keep);
  if (!plain) return 1;
  std::vector<double> loop;
  for (int r = 0; r < rounds; ++r) {
    const auto start = std::chrono::steady_clock::now();
    vmm::RunOutcome out = vmm::RunPlan(*plain, engine, nullptr);
    loop.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count() /
        (5.0 * cycles));
    if (out.summary.exit_code != 0) return 1;
  }
  std::printf("runner alone (an engine that does nothing), %d cycles, %d rounds, median\n", cycles,
              rounds);
  std::printf("  the run's own loop : %.3f us/step\n", Median(loop));
  for (int threads : thread_counts) {
    std::unique_ptr<vmm::Scenario> keep_group;
    std::optional<vmm::Plan> plan = PlanOf(Scenario(threads, cycles, false), &keep_group);
    if (!plan) return 1;
    std::vector<double> per_step;
    for (int r = 0; r < rounds; ++r) {
      vmm::RunOutcome out = vmm::RunPlan(*plan, engine, nullptr);
      if (out.summary.exit_code != 0) return 1;
      for (const vmm::report::StepRecord& s : out.steps)
        if (s.op == "threads") per_step.push_back(s.wall_us / (5.0 * cycles));
    }
    std::printf(
        "  threads group of %2d: %.3f us per step of a thread (wall of the group / its "
        "steps per thread)\n",
        threads, Median(per_step));
  }
  return 0;
}

}  // namespace
