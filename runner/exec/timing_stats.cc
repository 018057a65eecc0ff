#include "runner/exec/timing_stats.h"

#include <algorithm>
#include <cmath>

namespace vmm {

report::TimingStats ComputeStats(std::vector<double> samples) {
  report::TimingStats stats;
  if (samples.empty()) return stats;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  auto rank = [&](double q) {  // nearest rank: the smallest sample with at least q of them <= it
    size_t r = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
    return samples[std::clamp<size_t>(r, 1, n) - 1];
  };
  stats.count = static_cast<uint32_t>(n);
  stats.min_us = samples.front();
  stats.max_us = samples.back();
  stats.median_us = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  stats.p99_us = rank(0.99);
  return stats;
}

}  // namespace vmm
