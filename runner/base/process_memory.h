// What the process's memory looks like from the inside (Linux).
#pragma once

#include <cstdint>

namespace vmm {

// The peak resident set size of this process so far (getrusage(RUSAGE_SELF).ru_maxrss), bytes;
// 0 when the system does not say. It only grows over the life of the process.
uint64_t PeakRssBytes();

// Gives the memory the heap holds free back to the system (glibc's malloc_trim; nothing
// elsewhere). Called once a long scenario's parse tree and steps are freed, before its run: the
// run's records then reuse those pages instead of adding to the peak.
void ReturnFreeHeapMemory();

}  // namespace vmm
