#include "runner/base/process_memory.h"

#include <sys/resource.h>

namespace vmm {

uint64_t PeakRssBytes() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0 || usage.ru_maxrss <= 0) return 0;
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports kibibytes
}

}  // namespace vmm
