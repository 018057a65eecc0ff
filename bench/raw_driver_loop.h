// The baseline the runner is held to on the CUDA backend: a plain C++ loop of the driver calls a
// page cycle needs (cuMemCreate, cuMemMap, cuMemSetAccess, cuMemUnmap, cuMemRelease on one 2 MiB
// page), with no engine and no runner in between.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace vmm::bench {

class RawDriverLoop {
 public:
  virtual ~RawDriverLoop() = default;
  // Total microseconds of `cycles` page cycles (including one reserve and free), or < 0 on a driver
  // error (printed to stderr).
  virtual double Run(int cycles) = 0;
  // Nanoseconds per cuCtxGetCurrent, which the CUDA engine calls before each of its calls (it
  // binds its context there); < 0 on a driver error.
  virtual double ContextQueryNs() = 0;

  // `threads` host threads, started together, each doing `cycles` cycles on a page of its own.
  // Returns the wall time from the start to the last thread's end (< 0 on a driver error) and
  // every call's latency by op name ("create", "map", ...), each call timed by the thread.
  struct Threaded {
    double wall_us = -1;
    std::map<std::string, std::vector<double>> latency_us;
    std::vector<double> finish_us;  // by thread: the end of its last call, from the start
  };
  struct ThreadedOptions {
    // The page cycle above (false), or map + unmap of one allocation made before (true).
    bool map_only = false;
    // Each thread reserves its page (and, for map + unmap, creates its allocation) before the
    // start and frees it before its end (false); or the calling thread does both for every
    // thread, before the start and after the wall is taken (true), as a runner's scenario does
    // (its reserves and creates are steps before the threads group, its frees and releases after).
    bool setup_on_caller = false;
    // After each call a thread spins at least this long before its next (0: not at all): how much
    // the rate hangs on how soon a thread comes back to the driver.
    double gap_ns = 0;
    // Before each call a thread asks the driver which context is current (cuCtxGetCurrent), as
    // the engine does before each of its calls outside a burst.
    bool context_query = false;
  };
  virtual Threaded RunThreaded(int threads, int cycles, const ThreadedOptions& options) = 0;
};

// For the CUDA device `ordinal` (already initialized by the engine); nullptr when this build has no
// CUDA backend.
std::unique_ptr<RawDriverLoop> MakeRawDriverLoop(int ordinal, uint64_t page);

}  // namespace vmm::bench
