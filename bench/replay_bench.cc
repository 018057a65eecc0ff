// A whole run against the raw replay of its calls (issue 32 item 5): runs a scenario through the
// library call (PrepareRun + ExecuteRun, as `vmm-run run` does) on the CUDA backend, then replays
// the same plan straight to the driver, the runtime and the kernels (bench/raw_replay.h), in the
// same process, alternating which goes first from round to round. Prints, per op, the run's step
// times (each step's wall_us) beside the replay's, and the run's summary.duration_ms beside the
// whole replay; figures are medians over the rounds, ratios are run / raw. The run's time outside
// its steps (duration_ms - the steps' wall_us) is what the runner does between calls: reading a
// captured graph back, records, verdicts; the bench times that read-back raw, beside the table (the
// walk over a graph's nodes, and the DOT text cudaGraphDebugDotPrint would add with
// `run --driver-dot`), and lists the largest gaps around a step in one observed run. Beside each
// op's ratio of medians, the range of its per-round ratios. Asserts nothing.
//
//   replay_bench SCENARIO.yaml [--rounds N]   (N >= 1, default 7)
// Without a usable CUDA device it prints "skipped: ..." and exits 0. A step the replay has no raw
// form for is listed as not replayed (its run time stays in the run's total): read the ratio
// beside that list.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench/raw_replay.h"
#include "runner/base/input_file.h"
#include "runner/pipeline/run_scenario.h"

namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// The time of all of a record's calls: a repeated step's record holds its first call's time and
// the median of all, so the sum is estimated as first + (count - 1) * median.
double AllCallsUs(const vmm::report::StepRecord& record) {
  if (!record.wall_stats) return record.wall_us;
  return record.wall_us + (record.wall_stats->count - 1.0) * record.wall_stats->median_us;
}

// Where the time outside the steps goes: each step's gap since the previous step ended (the
// observer's call), less its own wall time, is what the runner did around it. An observer makes
// every VMM step its own burst, so this runs once, apart from the timed rounds.
class GapObserver final : public vmm::StepObserver {
 public:
  struct Gap {
    double us;
    std::string step;
  };
  void OnStep(const vmm::PlanStep& step, const vmm::report::StepRecord& record) override {
    const auto now = std::chrono::steady_clock::now();
    if (started_) {
      const double since = std::chrono::duration<double, std::micro>(now - last_).count();
      gaps_.push_back({since - AllCallsUs(record), step.label + " (" + record.op + ")"});
    }
    started_ = true;
    last_ = now;
  }
  // The `n` largest gaps, largest first.
  std::vector<Gap> Largest(size_t n) {
    std::sort(gaps_.begin(), gaps_.end(), [](const Gap& a, const Gap& b) { return a.us > b.us; });
    if (gaps_.size() > n) gaps_.resize(n);
    return gaps_;
  }

 private:
  bool started_ = false;
  std::chrono::steady_clock::time_point last_;
  std::vector<Gap> gaps_;
};

// One round's figures, by op name and in total.
struct Figures {
  std::map<std::string, double> run_us, raw_us;
  double run_total_us = 0, run_steps_us = 0, raw_total_us = 0;
  std::vector<double> walk_us, dot_us;  // per captured graph (raw_replay.h's TimeReadBack)
};

vmm::RunRequest Request(const std::string& path, const std::string& text) {
  vmm::RunRequest request;
  request.path = path;
  request.text = text;
  request.backend = vmm::BackendKind::kCuda;
  request.argv = {"replay_bench", path};
  return request;
}

// A prepared CUDA run of the scenario, or exit: the bench needs both halves.
vmm::PreparedRun Prepare(const std::string& path, const std::string& text) {
  vmm::PrepareOutcome prepared = vmm::PrepareRun(Request(path, text));
  if (!prepared.run) {
    if (prepared.exit_code == 3) {
      std::printf("skipped: %s\n", prepared.error.c_str());
      std::exit(0);
    }
    std::fprintf(stderr, "error: %s cannot run (exit %d) %s\n", path.c_str(), prepared.exit_code,
                 prepared.error.c_str());
    for (const vmm::Diagnostic& d : prepared.diagnostics)
      std::fprintf(stderr, "%s\n", vmm::FormatDiagnostic(d).c_str());
    std::exit(2);
  }
  return std::move(*prepared.run);
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  int rounds = 7;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (argv[i][0] != '-' && path.empty()) {
      path = argv[i];
    } else {
      std::fprintf(stderr, "usage: replay_bench SCENARIO.yaml [--rounds N]\n");
      return 2;
    }
  }
  if (path.empty() || rounds < 1) {
    std::fprintf(stderr, "usage: replay_bench SCENARIO.yaml [--rounds N] (N >= 1)\n");
    return 2;
  }
  vmm::StatusOr<std::string> text = vmm::ReadInputFile(path, vmm::Limit::kInputBytes);
  if (!text.ok()) {
    std::fprintf(stderr, "%s: error: %s\n", path.c_str(), text.status().message().c_str());
    return 2;
  }
  // The replay's plan: one prepared run that never executes (ExecuteRun consumes its plan).
  vmm::PreparedRun for_replay = Prepare(path, *text);
  std::vector<Figures> figures;
  std::map<std::string, int> run_steps, raw_steps, skipped;
  std::string device;
  size_t dot_bytes = 0;
  for (int r = 0; r < rounds; ++r) {
    Figures f;
    auto run = [&] {
      vmm::PreparedRun prepared = Prepare(path, *text);
      const vmm::report::Report report = vmm::ExecuteRun(prepared, nullptr);
      if (report.summary.exit_code != 0) {
        std::fprintf(stderr, "error: the run ended %s (exit %d)\n", report.summary.result.c_str(),
                     report.summary.exit_code);
        std::exit(1);
      }
      device = report.device.name;
      f.run_total_us = report.summary.duration_ms * 1000.0;
      run_steps.clear();
      for (const vmm::report::StepRecord& s : report.steps) {
        const double us = AllCallsUs(s);
        f.run_us[s.op] += us;
        f.run_steps_us += us;
        ++run_steps[s.op];
      }
    };
    auto raw = [&] {
      const vmm::bench::ReplayCosts costs = vmm::bench::ReplayRaw(for_replay.plan);
      if (!costs.error.empty()) {
        std::fprintf(stderr, "error: the raw replay failed: %s\n", costs.error.c_str());
        std::exit(1);
      }
      f.raw_us = costs.us;
      f.walk_us = costs.walk_us;
      f.dot_us = costs.dot_us;
      dot_bytes = costs.dot_bytes;
      f.raw_total_us = costs.total_us;
      raw_steps = costs.steps;
      skipped = costs.skipped;
    };
    if (r % 2 == 0) {
      run();
      raw();
    } else {
      raw();
      run();
    }
    figures.push_back(std::move(f));
  }

  std::printf("replay_bench: %s on %s, %d rounds (the run and the raw replay alternate first)\n",
              path.c_str(), device.c_str(), rounds);
  // "steps": the run's steps of the op, and of those the replay's (a step it could not replay is
  // in the run's figure only: compare the two counts before the ratio).
  std::printf("%-20s %11s %14s %14s %8s\n", "op", "steps", "run (µs)", "raw (µs)", "run/raw");
  std::set<std::string> ops;
  for (const auto& [op, n] : run_steps) ops.insert(op);
  auto median_of = [&](auto pick) {
    std::vector<double> v;
    for (const Figures& f : figures) v.push_back(pick(f));
    return Median(v);
  };
  for (const std::string& op : ops) {
    const double run = median_of([&](const Figures& f) {
      auto it = f.run_us.find(op);
      return it == f.run_us.end() ? 0.0 : it->second;
    });
    const auto replayed = raw_steps.find(op);
    if (replayed == raw_steps.end()) {
      std::printf("%-20s %5d/%-5d %14.1f %14s %8s\n", op.c_str(), run_steps[op], 0, run, "-", "-");
      continue;
    }
    const double raw = median_of([&](const Figures& f) {
      auto it = f.raw_us.find(op);
      return it == f.raw_us.end() ? 0.0 : it->second;
    });
    std::vector<double> per_round;  // the op's run / raw in each round: the spread behind the ratio
    for (const Figures& f : figures) {
      auto a = f.run_us.find(op), b = f.raw_us.find(op);
      if (a != f.run_us.end() && b != f.raw_us.end() && b->second > 0)
        per_round.push_back(a->second / b->second);
    }
    std::sort(per_round.begin(), per_round.end());
    std::printf("%-20s %5d/%-5d %14.1f %14.1f %8.2f", op.c_str(), run_steps[op], replayed->second,
                run, raw, raw > 0 ? run / raw : 0.0);
    if (!per_round.empty())
      std::printf("   (rounds %.2f-%.2f)", per_round.front(), per_round.back());
    std::printf("\n");
  }
  const double run_total = median_of([](const Figures& f) { return f.run_total_us; });
  const double run_steps_total = median_of([](const Figures& f) { return f.run_steps_us; });
  const double raw_total = median_of([](const Figures& f) { return f.raw_total_us; });
  if (raw_total <= 0) {
    std::printf("the replay replayed nothing of this scenario: no ratio\n");
    return 0;
  }
  std::vector<double> ratios;
  for (const Figures& f : figures) ratios.push_back(f.run_total_us / f.raw_total_us);
  std::sort(ratios.begin(), ratios.end());
  std::printf("%-20s %11s %14.1f %14.1f %8.2f   (per round: median %.2f, range %.2f-%.2f)\n",
              "whole run", "", run_total, raw_total, run_total / raw_total, Median(ratios),
              ratios.front(), ratios.back());
  std::printf("%-20s %11s %14.1f   (duration_ms less the steps' wall_us)\n", "outside the steps",
              "", run_total - run_steps_total);
  if (!figures.front().walk_us.empty()) {
    std::vector<double> walk, dot;
    for (const Figures& f : figures) {
      walk.insert(walk.end(), f.walk_us.begin(), f.walk_us.end());
      dot.insert(dot.end(), f.dot_us.begin(), f.dot_us.end());
    }
    std::printf(
        "%-20s %11zu   walk over the nodes %.1f µs, driver's DOT text (%zu bytes; "
        "--driver-dot only) %.1f µs: medians\n",
        "graph read-back", figures.front().walk_us.size(), Median(walk), dot_bytes, Median(dot));
  }
  {
    GapObserver gaps;
    vmm::PreparedRun observed = Prepare(path, *text);
    (void)vmm::ExecuteRun(observed, &gaps);
    std::printf(
        "largest gaps around a step (one observed run: the time since the previous step "
        "ended, less the step's own):");
    for (const GapObserver::Gap& g : gaps.Largest(5))
      std::printf(" %s %.1f µs;", g.step.c_str(), g.us);
    std::printf("\n");
  }
  if (skipped.empty()) {
    std::printf("every step was replayed\n");
  } else {
    std::printf("not replayed (their run time is in the run's total, not in the replay's):");
    for (const auto& [op, n] : skipped) std::printf(" %s x%d", op.c_str(), n);
    std::printf("\n");
  }
  return 0;
}
