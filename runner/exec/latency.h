// Per-op latency figures of a group's steps (a threads group's threads, a together group's
// children): the wall time of every run of every step, by op, summarised into a record's details
// as `<op>_n`, `<op>_min_us`, `<op>_p50_us`, `<op>_p99_us` and `<op>_max_us` (nearest rank).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runner/report/report.h"

namespace vmm {

using LatencySamples = std::map<std::string, std::vector<double>>;  // op name -> wall times (µs)

// Adds `samples`' figures to `details`, ops in name order.
void AddLatency(const LatencySamples& samples, report::Details& details);

// " · map p50 12.1 µs, p99 40.2 µs (n=48) · ...": the figures AddLatency put in `details`, for the
// step log (signal and wait_for left out: they are the group's own waits).
std::string LatencyText(const report::Details& details);

// The samples of `records` (one per record that ran: its wall time, or each repetition's when it
// has statistics, approximated by its median), nested bodies not included.
void CollectLatency(const std::vector<report::StepRecord>& records, LatencySamples& samples);

}  // namespace vmm
