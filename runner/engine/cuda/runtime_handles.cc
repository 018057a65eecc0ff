#include "runner/engine/cuda/runtime_handles.h"

#include <utility>

#include "runner/engine/cuda/cuda_call.h"

namespace vmm::cuda {

void StreamTraits::Release(Value raw) noexcept { CUDA_CALL_NOTHROW(cudaStreamDestroy(raw)); }
void EventTraits::Release(Value raw) noexcept { CUDA_CALL_NOTHROW(cudaEventDestroy(raw)); }
void GraphTraits::Release(Value raw) noexcept { CUDA_CALL_NOTHROW(cudaGraphDestroy(raw)); }
void GraphExecTraits::Release(Value raw) noexcept { CUDA_CALL_NOTHROW(cudaGraphExecDestroy(raw)); }
void DeviceMemoryTraits::Release(Value raw) noexcept { CUDA_CALL_NOTHROW(cudaFree(raw)); }
void PinnedHostTraits::Release(Value raw) noexcept { CUDA_CALL_NOTHROW(cudaFreeHost(raw)); }

StatusOr<Stream> CreateStream() {
  cudaStream_t stream = nullptr;
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)));
  return Stream(stream);
}

StatusOr<Event> CreateEvent(bool timing) {
  cudaEvent_t event = nullptr;
  VMM_RETURN_IF_ERROR(CUDA_CALL(
      cudaEventCreateWithFlags(&event, timing ? cudaEventDefault : cudaEventDisableTiming)));
  return Event(event);
}

StatusOr<GraphExec> InstantiateGraph(cudaGraph_t graph, unsigned long long flags) {
  cudaGraphExec_t exec = nullptr;
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphInstantiateWithFlags(&exec, graph, flags)));
  return GraphExec(exec);
}

StatusOr<DeviceMemory> AllocDeviceMemory(size_t bytes) {
  void* memory = nullptr;
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaMalloc(&memory, bytes)));
  return DeviceMemory(memory);
}

StatusOr<PinnedHost> AllocPinnedHost(size_t bytes, unsigned flags) {
  void* memory = nullptr;
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaHostAlloc(&memory, bytes, flags)));
  return PinnedHost(memory);
}

Status DeviceBuffer::Reserve(size_t bytes) {
  if (bytes <= size_) return Status::Ok();
  memory_.reset();
  size_ = 0;
  StatusOr<DeviceMemory> memory = AllocDeviceMemory(bytes);
  if (!memory.ok()) return memory.status();
  memory_ = std::move(memory).value();
  size_ = bytes;
  return Status::Ok();
}

}  // namespace vmm::cuda
