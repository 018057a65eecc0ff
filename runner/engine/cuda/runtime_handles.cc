#include "runner/engine/cuda/runtime_handles.h"

#include <cstring>

#include "runner/engine/cuda/cuda_call.h"

namespace vmm::cuda {

void StreamTraits::Release(Value raw) noexcept { CUDA_CALL_NOTHROW(cudaStreamDestroy(raw)); }
void EventTraits::Release(Value raw) noexcept { CUDA_CALL_NOTHROW(cudaEventDestroy(raw)); }
void GraphTraits::Release(Value raw) noexcept { CUDA_CALL_NOTHROW(cudaGraphDestroy(raw)); }
void GraphExecTraits::Release(Value raw) noexcept { CUDA_CALL_NOTHROW(cudaGraphExecDestroy(raw)); }
void DeviceMemoryTraits::Release(Value raw) noexcept { CUDA_CALL_NOTHROW(cudaFree(raw)); }
void PinnedMemoryTraits::Release(Value raw) noexcept { CUDA_CALL_NOTHROW(cudaFreeHost(raw)); }

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

StatusOr<PinnedMemory> PinnedCopy(const void* source, size_t bytes) {
  void* memory = nullptr;
  // A capture in this thread (ThreadLocal or Global mode) forbids cudaMallocHost: the runtime
  // returns cudaErrorStreamCaptureUnsupported and invalidates the capture. The allocation is not
  // stream work, so it is made in relaxed mode, as the runtime documents for allocations a
  // library makes during a capture, and the thread's mode is put back right after.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaThreadExchangeStreamCaptureMode(&mode)));
  const Status allocated = CUDA_CALL(cudaMallocHost(&memory, bytes == 0 ? 1 : bytes));
  PinnedMemory owned(allocated.ok() ? memory : nullptr);
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaThreadExchangeStreamCaptureMode(&mode)));
  VMM_RETURN_IF_ERROR(allocated);
  if (bytes != 0) std::memcpy(memory, source, bytes);
  return owned;
}

Status DeviceBuffer::Reserve(size_t bytes) {
  if (bytes <= size_) return Status::Ok();
  memory_.reset();
  size_ = 0;
  void* memory = nullptr;
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaMalloc(&memory, bytes)));
  memory_ = UniqueHandle<DeviceMemoryTraits>(memory);
  size_ = bytes;
  return Status::Ok();
}

}  // namespace vmm::cuda
