// GraphMemoryPool: the host twin of CUDA's graph memory pool. A graph allocation (a mem alloc
// node) gets its address range when it is captured, fixed for as long as a graph or exec holds
// the node; physical memory is mapped there (read_write) when a replay reaches the alloc node and
// unmapped when a free node or GraphFree frees it. Freed physical memory stays in the pool's cache
// ("reserved") until Trim gives it back or a later allocation of the same size reuses it:
//   used     = bytes of physical memory behind live graph allocations
//   reserved = used + the cache
// (CUDA's figures are the driver's own accounting and may keep more memory associated with execs;
// they are reported, not compared across backends.)
//
// Like CUDA's, the pool is per device: an allocation lives on the device that captured its node
// (read_write for that device only), and Usage and Trim speak of one device.
//
// Errors are the driver's words: launching an alloc node whose allocation still lives, without
// auto-free-on-launch, is "cuGraphLaunch: CUDA_ERROR_INVALID_VALUE: ..."; freeing what does not
// live is "cuMemFreeAsync: CUDA_ERROR_INVALID_VALUE: ...". Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "runner/base/status.h"
#include "runner/engine/engine.h"
#include "runner/engine/host/address_space.h"

namespace vmm::host {

class GraphMemoryPool {
 public:
  // `space` must outlive the pool (its destructor releases whatever the pool still holds).
  explicit GraphMemoryPool(AddressSpace* space) : space_(space) {}
  GraphMemoryPool(const GraphMemoryPool&) = delete;
  GraphMemoryPool& operator=(const GraphMemoryPool&) = delete;

  // A new address range for an allocation of `bytes` on device `device` (an ordinal), held once
  // (a captured graph).
  Status Reserve(uint64_t bytes, int device, DevicePtr* ptr);
  // Another graph or exec holds the alloc node at `ptr` / lets go of it. The range is freed when
  // nothing holds it and no allocation lives there.
  void Hold(DevicePtr ptr);
  void Drop(DevicePtr ptr);
  // A replay reached the alloc node at `ptr`. With `auto_free` a live allocation is freed first;
  // without, it is an error.
  Status Allocate(DevicePtr ptr, bool auto_free);
  // A free node or GraphFree (`function` names the call in errors).
  Status Free(DevicePtr ptr, const char* function);
  // Gives device `device`'s cache back (cudaDeviceGraphMemTrim).
  void Trim(int device);
  GraphMemoryUsage Usage(int device) const;

 private:
  struct Range {
    uint64_t size = 0;  // rounded up to the granularity
    int holders = 0;
    bool live = false;
    AllocHandle memory;  // while live
    int device = 0;      // where its physical memory lives
  };
  struct Cached {
    AllocHandle memory;
    uint64_t size = 0;
    int device = 0;
  };
  void Account();
  void MaybeFreeRange(std::map<DevicePtr, Range>::iterator it);

  AddressSpace* space_;
  std::map<DevicePtr, Range> ranges_;
  std::vector<Cached> cache_;              // freed physical memory
  std::map<int, GraphMemoryUsage> usage_;  // by device
};

}  // namespace vmm::host
