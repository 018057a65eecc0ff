// Which reserved memory a kernel launch was given: the recorder keeps the ranges the program has
// reserved (cuMemAddressReserve until cuMemAddressFree) and reads every 8-byte word of a launch's
// parameters (their layout from cuFuncGetParamInfo, or cuKernelGetParamInfo for a CUkernel,
// cached per function until a module is unloaded) for addresses inside them. Both calls are
// looked up with cuGetProcAddress (CUDA 12.4 and later): on an older driver launches are not
// scanned, and so not recorded. A kernel that reaches memory through a pointer
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
  // A module was unloaded: its functions' handles may be reused, so no layout is kept.
  void ForgetFunctions();
  // Around fork() (pthread_atfork): the lock is held through it, as TraceSink's is.
  void BeforeFork() { mutex_.lock(); }
  void AfterFork() { mutex_.unlock(); }

  // The distinct reserved addresses among the parameters, in the order found. A function whose
  // layout neither call answers scans as parameterless (the driver gives no way to tell them
  // apart).
  std::vector<uint64_t> Pointers(CUfunction f, void** params, void** extra);

 private:
  using Layout = std::vector<std::pair<size_t, size_t>>;  // (offset, size) of each parameter
  Layout LayoutOf(CUfunction f);          // computed once per function, kept until a module unloads
  bool InReserved(uint64_t value) const;  // mutex_ held

  mutable std::mutex mutex_;
  std::map<uint64_t, uint64_t> ranges_;  // base -> size
  std::unordered_map<CUfunction, Layout> layouts_;
  using FuncParamInfo = CUresult (*)(CUfunction, size_t, size_t*, size_t*);
  using KernelParamInfo = CUresult (*)(CUkernel, size_t, size_t*, size_t*);
  FuncParamInfo func_param_info_ = nullptr;  // resolved once (CUDA 12.4 and later)
  KernelParamInfo kernel_param_info_ = nullptr;
  bool resolved_ = false;
};

}  // namespace vmm::recorder
