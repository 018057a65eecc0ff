// Which reserved memory a kernel launch was given: the recorder keeps the ranges the program has
// reserved (cuMemAddressReserve until cuMemAddressFree) and reads every 8-byte word of a launch's
// parameters (their layout from cuFuncGetParamInfo, or cuKernelGetParamInfo for a CUkernel,
// cached per function) for addresses inside them. A kernel that reaches memory through a pointer
// it loads from memory is not seen: the trace records what the launch was handed.
//
// Thread-safe.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vmm::recorder {

class LaunchScan {
 public:
  void Reserved(uint64_t base, uint64_t size);
  void Freed(uint64_t base);

  // The distinct reserved addresses among the parameters, in the order found. A function whose
  // layout neither call answers scans as parameterless (the driver gives no way to tell them
  // apart).
  std::vector<uint64_t> Pointers(CUfunction f, void** params, void** extra);

 private:
  using Layout = std::vector<std::pair<size_t, size_t>>;  // (offset, size) of each parameter
  const Layout& LayoutOf(CUfunction f);   // computed once per function, kept for the process
  bool InReserved(uint64_t value) const;  // mutex_ held

  mutable std::mutex mutex_;
  std::map<uint64_t, uint64_t> ranges_;  // base -> size
  std::unordered_map<CUfunction, Layout> layouts_;
};

}  // namespace vmm::recorder
