// Owners of CUDA runtime objects: Stream, Event, Graph, GraphExec, DeviceMemory, PinnedHost
// (UniqueHandle over the runtime's pointer, runner/base/unique_handle.h) and DeviceBuffer.
// Factories return StatusOr; destructors are noexcept and log a failed destroy (CUDA_CALL_NOTHROW).
//
// Lifetime rules the owners must respect:
//   - Destroy a Stream only after its work finished and no capture is in progress on it.
//   - A GraphExec does not depend on the Graph it was instantiated from (either may go first);
//     destroying an exec that is still running is allowed (CUDA frees it when it completes).
//   - cudaFree (DeviceMemory, DeviceBuffer) and cudaFreeHost synchronize the device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "runner/base/status.h"
#include "runner/base/unique_handle.h"

namespace vmm::cuda {

struct StreamTraits {
  using Value = cudaStream_t;
  static constexpr Value kNull = nullptr;
  static void Release(Value raw) noexcept;
};
struct EventTraits {
  using Value = cudaEvent_t;
  static constexpr Value kNull = nullptr;
  static void Release(Value raw) noexcept;
};
struct GraphTraits {
  using Value = cudaGraph_t;
  static constexpr Value kNull = nullptr;
  static void Release(Value raw) noexcept;
};
struct GraphExecTraits {
  using Value = cudaGraphExec_t;
  static constexpr Value kNull = nullptr;
  static void Release(Value raw) noexcept;
};
struct DeviceMemoryTraits {
  using Value = void*;
  static constexpr Value kNull = nullptr;
  static void Release(Value raw) noexcept;
};
struct PinnedHostTraits {  // cudaHostAlloc / cudaFreeHost
  using Value = void*;
  static constexpr Value kNull = nullptr;
  static void Release(Value raw) noexcept;
};

using Stream = UniqueHandle<StreamTraits>;
using Event = UniqueHandle<EventTraits>;
using Graph = UniqueHandle<GraphTraits>;
using GraphExec = UniqueHandle<GraphExecTraits>;
using DeviceMemory = UniqueHandle<DeviceMemoryTraits>;
using PinnedHost = UniqueHandle<PinnedHostTraits>;

// A non-blocking stream: it never synchronizes implicitly with the legacy default stream.
StatusOr<Stream> CreateStream();
// An event with timing enabled, or (timing false) without: cheaper for ordering only.
StatusOr<Event> CreateEvent(bool timing = true);
// cudaGraphInstantiateWithFlags(&exec, graph, flags).
StatusOr<GraphExec> InstantiateGraph(cudaGraph_t graph, unsigned long long flags = 0);
// cudaMalloc(bytes).
StatusOr<DeviceMemory> AllocDeviceMemory(size_t bytes);
// cudaHostAlloc(bytes, flags): page-locked host memory, DMA at full PCIe speed; with
// cudaHostAllocMapped the device can read and write it too (cudaHostGetDevicePointer).
StatusOr<PinnedHost> AllocPinnedHost(size_t bytes, unsigned flags = cudaHostAllocPortable);

// Scratch device memory (cudaMalloc) that only grows.
class DeviceBuffer {
 public:
  // Makes the buffer at least `bytes` long. Growing frees the old memory first (contents are not
  // kept) and synchronizes the device (cudaFree does).
  Status Reserve(size_t bytes);
  void* data() const { return memory_.get(); }
  size_t size() const { return size_; }

 private:
  DeviceMemory memory_;
  size_t size_ = 0;
};

}  // namespace vmm::cuda
