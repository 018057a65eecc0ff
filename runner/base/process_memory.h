// What the process's memory looks like from the inside (Linux).
#pragma once

#include <cstdint>

namespace vmm {

// The peak resident set size of this process so far (getrusage(RUSAGE_SELF).ru_maxrss), bytes;
// 0 when the system does not say. It only grows over the life of the process.
uint64_t PeakRssBytes();

}  // namespace vmm
