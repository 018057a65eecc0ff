// The baseline the runner is held to on the CUDA backend: a plain C++ loop of the driver calls a
// page cycle needs (cuMemCreate, cuMemMap, cuMemSetAccess, cuMemUnmap, cuMemRelease on one 2 MiB
// page), with no engine and no runner in between.
#pragma once

#include <cstdint>
#include <memory>

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
};

// For the CUDA device `ordinal` (already initialized by the engine); nullptr when this build has no
// CUDA backend.
std::unique_ptr<RawDriverLoop> MakeRawDriverLoop(int ordinal, uint64_t page);

}  // namespace vmm::bench
