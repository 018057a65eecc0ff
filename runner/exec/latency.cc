#include "runner/exec/latency.h"

#include <cstdio>
#include <variant>

#include "runner/exec/timing_stats.h"

namespace vmm {

void AddLatency(const LatencySamples& samples, report::Details& details) {
  for (const auto& [op, wall] : samples) {
    const report::TimingStats s = ComputeStats(wall);
    details.emplace_back(op + "_n", static_cast<int64_t>(s.count));
    details.emplace_back(op + "_min_us", s.min_us);
    details.emplace_back(op + "_p50_us", s.median_us);
    details.emplace_back(op + "_p99_us", s.p99_us);
    details.emplace_back(op + "_max_us", s.max_us);
  }
}

std::string LatencyText(const report::Details& details) {
  auto find = [&](const std::string& key) -> const report::Scalar* {
    for (const report::Detail& d : details)
      if (d.first == key) return &d.second;
    return nullptr;
  };
  std::string out;
  for (const report::Detail& d : details) {
    const std::string_view key = d.first;
    if (!key.ends_with("_p50_us")) continue;
    const std::string op(key.substr(0, key.size() - 7));
    if (op == "signal" || op == "wait_for") continue;
    const report::Scalar* p99 = find(op + "_p99_us");
    const report::Scalar* n = find(op + "_n");
    char buf[160];
    std::snprintf(buf, sizeof buf, " · %s p50 %.1f µs, p99 %.1f µs (n=%lld)", op.c_str(),
                  std::get<double>(d.second), p99 ? std::get<double>(*p99) : 0.0,
                  n ? static_cast<long long>(std::get<int64_t>(*n)) : 0LL);
    out += buf;
  }
  return out;
}

void CollectLatency(const std::vector<report::StepRecord>& records, LatencySamples& samples) {
  for (const report::StepRecord& r : records) {
    if (r.status == report::StepStatus::kSkipped) continue;
    std::vector<double>& wall = samples[r.op];
    if (r.wall_stats) {
      wall.insert(wall.end(), r.wall_stats->count, r.wall_stats->median_us);
    } else {
      wall.push_back(r.wall_us);
    }
  }
}

}  // namespace vmm
