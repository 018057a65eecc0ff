// Summary statistics of repeated timings (nearest-rank percentiles).
#pragma once

#include <vector>

#include "runner/report/report.h"

namespace vmm {

// `samples` in microseconds; empty input gives count 0.
report::TimingStats ComputeStats(std::vector<double> samples);

}  // namespace vmm
