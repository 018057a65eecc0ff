// Move-only owners of CUDA runtime objects: Stream, Event, Graph, GraphExec, DeviceBuffer.
// Factories return StatusOr; destructors are noexcept and log a failed destroy (CUDA_CALL_NOTHROW).
//
// Lifetime rules the owners must respect:
//   - Destroy a Stream only after its work finished and no capture is in progress on it.
//   - A GraphExec does not depend on the Graph it was instantiated from (either may go first);
//     destroying an exec that is still running is allowed (CUDA frees it when it completes).
//   - cudaFree (DeviceBuffer) synchronizes the device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "runner/base/status.h"

namespace vmm::cuda {

// Owns one runtime handle; Traits supply Raw (a pointer type) and a noexcept Destroy(Raw).
template <typename Traits>
class RuntimeHandle {
 public:
  using Raw = typename Traits::Raw;

  RuntimeHandle() = default;
  explicit RuntimeHandle(Raw raw) : raw_(raw) {}
  RuntimeHandle(RuntimeHandle&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
  RuntimeHandle& operator=(RuntimeHandle&& other) noexcept {
    if (this != &other) {
      Reset();
      raw_ = std::exchange(other.raw_, nullptr);
    }
    return *this;
  }
  RuntimeHandle(const RuntimeHandle&) = delete;
  RuntimeHandle& operator=(const RuntimeHandle&) = delete;
  ~RuntimeHandle() { Reset(); }

  Raw get() const { return raw_; }
  explicit operator bool() const { return raw_ != nullptr; }
  // Destroys the object now (no-op when empty).
  void Reset() noexcept {
    if (raw_ != nullptr) Traits::Destroy(std::exchange(raw_, nullptr));
  }

 private:
  Raw raw_ = nullptr;
};

struct StreamTraits {
  using Raw = cudaStream_t;
  static void Destroy(Raw raw) noexcept;
};
struct EventTraits {
  using Raw = cudaEvent_t;
  static void Destroy(Raw raw) noexcept;
};
struct GraphTraits {
  using Raw = cudaGraph_t;
  static void Destroy(Raw raw) noexcept;
};
struct GraphExecTraits {
  using Raw = cudaGraphExec_t;
  static void Destroy(Raw raw) noexcept;
};
struct DeviceMemoryTraits {
  using Raw = void*;
  static void Destroy(Raw raw) noexcept;
};

using Stream = RuntimeHandle<StreamTraits>;
using Event = RuntimeHandle<EventTraits>;
using Graph = RuntimeHandle<GraphTraits>;
using GraphExec = RuntimeHandle<GraphExecTraits>;

// A non-blocking stream: it never synchronizes implicitly with the legacy default stream.
StatusOr<Stream> CreateStream();
// An event with timing enabled.
StatusOr<Event> CreateEvent();
// cudaGraphInstantiate(&exec, graph, 0).
StatusOr<GraphExec> InstantiateGraph(cudaGraph_t graph);

// Scratch device memory (cudaMalloc) that only grows.
class DeviceBuffer {
 public:
  // Makes the buffer at least `bytes` long. Growing frees the old memory first (contents are not
  // kept) and synchronizes the device (cudaFree does).
  Status Reserve(size_t bytes);
  void* data() const { return memory_.get(); }
  size_t size() const { return size_; }

 private:
  RuntimeHandle<DeviceMemoryTraits> memory_;
  size_t size_ = 0;
};

}  // namespace vmm::cuda
