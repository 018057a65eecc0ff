// Thresholds of `vmm-run diff`: a plain struct (no YAML here). Files are parsed by
// runner/report/diff_config_parse.h; schemas/diff-config.schema.json documents the file format.
#pragma once

#include <map>
#include <string>

namespace vmm::report {

// When a timing counts as changed. With base value b (the median when the step repeated), new
// value n and the base's spread s = p99 - median (0 when the step ran once), the step regressed
// when
//     n - b > max(relative * b, floor_us, spread_factor * s)
// and improved when b - n exceeds the same bound. Improvements never fail a diff.
//
// Only steps that repeated (repeat: N, so the report has wall_stats/gpu_stats) are compared unless
// `single_runs` is set: one-shot timings are dominated by warm-up (first touch, clocks, caches).
// Two back-to-back runs of the reference scenarios on one H200 moved one-shot steps by 25-80%,
// while every repeated step's median stayed inside the default bounds.
struct TimingThreshold {
  bool enabled = true;       // false: the metric is not compared at all
  bool single_runs = false;  // true: also compare steps that ran once (no stats, no spread)
  double relative = 0.25;    // fraction of the base value, >= 0
  double floor_us = 5;       // absolute floor in microseconds, >= 0: sub-floor changes are noise
  double spread_factor = 3;  // multiples of the base's p99 - median, >= 0
};

// The timing metrics a diff compares (the report's key names).
inline constexpr const char* kTimingMetrics[] = {"wall_us", "gpu_us"};

struct DiffConfig {
  TimingThreshold timing;                          // for every metric without an override
  std::map<std::string, TimingThreshold> metrics;  // overrides, keyed by kTimingMetrics names
  bool ignore_device = false;  // backend/device differences become info rows instead of failures
  // Command line only (--allow-duplicates): duplicate reports in a directory (DiffResult::
  // duplicates) are listed as ambiguous rows instead of failing the diff.
  bool allow_duplicates = false;

  const TimingThreshold& ThresholdFor(const std::string& metric) const {
    auto it = metrics.find(metric);
    return it == metrics.end() ? timing : it->second;
  }
};

}  // namespace vmm::report
