// CudaEngine: kernels and data (lifecycle in cuda_engine.cc, VMM in cuda_engine_vmm.cc, graphs in
// cuda_engine_graphs.cc).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kernels/graph_kernels.h"
#include "kernels/kernels.h"
#include "runner/base/format.h"
#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/cuda_engine_impl.h"
#include "runner/engine/cuda/graph_ops.h"
#include "runner/engine/kernel_params.h"

namespace vmm::cuda {
template <typename Launch>
Status CudaEngine::TimedLaunch(OpTiming* timing, Launch launch) {
  if (timing != nullptr) timing->gpu_us = -1;
  const bool timed = timing != nullptr && !capturing_;  // a captured launch does not run now
  if (timed) VMM_RETURN_IF_ERROR(CUDA_CALL(cudaEventRecord(lane_->start.get(), stream())));
  if (capturing_) return launch();  // recorded, not run
  {
    Enqueuing enqueuing(*lane_);
    VMM_RETURN_IF_ERROR(launch());
    if (timed) VMM_RETURN_IF_ERROR(CUDA_CALL(cudaEventRecord(lane_->stop.get(), stream())));
  }
  if (!timed) return Status::Ok();
  const uint64_t covers = lane_->WaitCovers();
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaEventSynchronize(lane_->stop.get())));
  lane_->CoveredUpTo(covers);  // the stop event completes after everything enqueued before it
  float ms = 0;
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaEventElapsedTime(&ms, lane_->start.get(), lane_->stop.get())));
  timing->gpu_us = static_cast<double>(ms) * 1000.0;
  return Status::Ok();
}

Status CudaEngine::SyncIfCapturing() {
  if (!capturing_) return Status::Ok();
  // Illegal on a capturing stream: the runtime refuses it and invalidates the capture, which is
  // the documented outcome (cuda_engine.h). If it ever succeeds, the caller simply proceeds.
  return CUDA_CALL(cudaStreamSynchronize(stream()));
}

// --- Kernels ---

Status CudaEngine::Memset(DevicePtr dst, uint64_t count, uint32_t pattern, OpTiming* timing) {
  auto what = [&] {
    return "Memset(dst=" + Hex(dst) + ", count=" + std::to_string(count) +
           ", pattern=" + Hex(pattern) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  return Annotate(TimedLaunch(timing,
                              [&] {
                                return CU_LATE_CALL(api_, cuMemsetD32Async, v3020,
                                                    kDriverAbiVersion,
                                                    (dst, pattern, count, work_stream()));
                              }),
                  what);
}

Status CudaEngine::WriteValue(DevicePtr dst, uint32_t value, OpTiming* timing) {
  auto what = [&] { return "WriteValue(dst=" + Hex(dst) + ", value=" + Hex(value) + ")"; };
  if (capturing_) {  // as the host twin: a write_value is not a graph node in the language
    return Status(Code::kRuntime, what() + ": vmm-run does not capture write_value",
                  "CUDA_ERROR_NOT_SUPPORTED");
  }
  VMM_RETURN_IF_ERROR(Bind());
  return Annotate(TimedLaunch(timing,
                              [&] {
                                return CU_LATE_CALL(
                                    api_, cuStreamWriteValue32, v11070, kDriverAbiVersion,
                                    (work_stream(), dst, value, CU_STREAM_WRITE_VALUE_DEFAULT));
                              }),
                  what);
}

Status CudaEngine::Busy(DevicePtr dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
                        kernels::BusyTouch touch, int flag, OpTiming* timing) {
  auto what = [&] {
    return "Busy(dst=" + Hex(dst) + ", count=" + std::to_string(count) +
           ", duration_ns=" + std::to_string(duration_ns) + ", pattern=" + Hex(pattern) +
           ", touch=" + std::to_string(static_cast<uint32_t>(touch)) +
           ", flag=" + std::to_string(flag) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  if (flag >= kernels::kMaxBusyFlags) return RuntimeError(what() + ": no such flag");
  const uint32_t* stop = nullptr;
  uint32_t* expired = nullptr;
  if (flag >= 0) {
    if (!busy_flags_) {
      StatusOr<PinnedHost> flags = AllocPinnedHost(2 * kernels::kMaxBusyFlags * sizeof(uint32_t),
                                                   cudaHostAllocPortable | cudaHostAllocMapped);
      if (!flags.ok()) return Annotate(flags.status(), what);
      std::memset(flags->get(), 0, 2 * kernels::kMaxBusyFlags * sizeof(uint32_t));
      void* device = nullptr;
      VMM_RETURN_IF_ERROR(
          Annotate(CUDA_CALL(cudaHostGetDevicePointer(&device, flags->get(), 0)), what));
      busy_flags_ = std::move(flags).value();
      busy_flags_device_ = static_cast<uint32_t*>(device);
    }
    stop = busy_flags_device_ + flag;
    expired = busy_flags_device_ + kernels::kMaxBusyFlags + flag;
  }
  uint32_t* out = DevicePointer<uint32_t>(dst);
  return Annotate(
      TimedLaunch(timing,
                  [&] {
                    return CUDA_CALL(kernels::LaunchBusy(out, count, duration_ns, pattern, touch,
                                                         stop, expired, stream()));
                  }),
      what);
}

Status CudaEngine::SetFlag(int flag, bool* expired) {
  if (flag < 0 || flag >= kernels::kMaxBusyFlags)
    return RuntimeError("SetFlag(flag=" + std::to_string(flag) + "): no such flag");
  *expired = false;
  if (!busy_flags_) return Status::Ok();  // no busy kernel was ever given a flag
  uint32_t* words = static_cast<uint32_t*>(busy_flags_.get());
  *expired = std::atomic_ref<uint32_t>(words[kernels::kMaxBusyFlags + flag]).load() != 0;
  std::atomic_ref<uint32_t>(words[flag]).store(1);
  return Status::Ok();
}

void CudaEngine::SetAllFlags() {
  if (!busy_flags_) return;
  uint32_t* words = static_cast<uint32_t*>(busy_flags_.get());
  for (int f = 0; f < kernels::kMaxBusyFlags; ++f) std::atomic_ref<uint32_t>(words[f]).store(1);
}

Status CudaEngine::CopyDevice(DevicePtr dst, DevicePtr src, uint64_t bytes, OpTiming* timing) {
  auto what = [&] {
    return "CopyDevice(dst=" + Hex(dst) + ", src=" + Hex(src) + ", bytes=" + FormatBytes(bytes) +
           ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  void* to = DevicePointer<void>(dst);
  const void* from = DevicePointer<const void>(src);
  return Annotate(TimedLaunch(timing,
                              [&] {
                                return CUDA_CALL(cudaMemcpyAsync(
                                    to, from, bytes, cudaMemcpyDeviceToDevice, work_stream()));
                              }),
                  what);
}

Status CudaEngine::CopyMemory(void* dst, const void* src, uint64_t bytes, cudaMemcpyKind kind,
                              OpTiming* timing) {
  auto what = [&] {
    return "Copy(dst=" + Hex(reinterpret_cast<uintptr_t>(dst)) +
           ", src=" + Hex(reinterpret_cast<uintptr_t>(src)) + ", bytes=" + FormatBytes(bytes) +
           ", kind=" + std::to_string(static_cast<int>(kind)) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  // On the capture lane's stream while capturing: a memcpy node over memory that outlives the
  // graph (device memory, or a pinned host snapshot the engine owns); nothing is allocated here.
  return Annotate(
      TimedLaunch(timing,
                  [&] { return CUDA_CALL(cudaMemcpyAsync(dst, src, bytes, kind, work_stream())); }),
      what);
}

Status CudaEngine::LaunchKernel(const KernelNodeParams& params, OpTiming* timing) {
  auto what = [&] { return "LaunchKernel " + KernelCallText(params); };
  PackedKernelCall call;  // cudaLaunchKernel copies the arguments before it returns
  if (!PackKernelCall(params, &call)) return Annotate(CUDA_CALL(cudaErrorInvalidValue), what);
  VMM_RETURN_IF_ERROR(Bind());
  return Annotate(TimedLaunch(timing,
                              [&] {
                                const cudaError_t err =
                                    cudaLaunchKernel(call.symbol, call.grid, call.block, call.args,
                                                     call.shared_bytes, work_stream());
                                // Not reported a second time by a later cudaGetLastError.
                                if (err != cudaSuccess) (void)cudaGetLastError();
                                return CUDA_CALL(err);
                              }),
                  what);
}

Status CudaEngine::HostFunction(OpTiming* timing) {
  VMM_RETURN_IF_ERROR(Bind());
  if (capturing_) {
    if (timing != nullptr) timing->gpu_us = -1;
    return Annotate(CUDA_CALL(cudaLaunchHostFunc(work_stream(), &CudaEngine::HostCall, this)),
                    "HostFunction");
  }
  OpTiming local;  // waited for, so host_calls() counts it on return
  return Annotate(
      TimedLaunch(
          timing != nullptr ? timing : &local,
          [&] { return CUDA_CALL(cudaLaunchHostFunc(stream(), &CudaEngine::HostCall, this)); }),
      "HostFunction");
}

// --- Data ---

Status CudaEngine::CopyToHost(DevicePtr src, uint64_t bytes, void* dst) {
  auto what = [&] { return "CopyToHost(src=" + Hex(src) + ", bytes=" + FormatBytes(bytes) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  VMM_RETURN_IF_ERROR(Annotate(SyncIfCapturing(), what));
  if (bytes == 0) return Status::Ok();
  Enqueuing enqueuing(*lane_);
  const void* from = DevicePointer<const void>(src);
  VMM_RETURN_IF_ERROR(Annotate(
      CUDA_CALL(cudaMemcpyAsync(dst, from, bytes, cudaMemcpyDeviceToHost, stream())), what));
  enqueuing.Done();
  return Annotate(SyncStream(), what);
}

Status CudaEngine::ReadHash(const uint64_t* sum, uint64_t* hash) {
  uint64_t value = 0;
  VMM_RETURN_IF_ERROR(
      CUDA_CALL(cudaMemcpyAsync(&value, sum, sizeof(value), cudaMemcpyDeviceToHost, stream())));
  VMM_RETURN_IF_ERROR(SyncStream());
  *hash = value;
  return Status::Ok();
}

Status CudaEngine::Checksum(DevicePtr src, uint64_t count, uint64_t* hash) {
  auto what = [&] { return "Checksum(src=" + Hex(src) + ", count=" + std::to_string(count) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  VMM_RETURN_IF_ERROR(Annotate(SyncIfCapturing(), what));
  VMM_RETURN_IF_ERROR(Annotate(lane_->hash_scratch.Reserve(sizeof(uint64_t)), what));
  auto* sum = static_cast<uint64_t*>(lane_->hash_scratch.data());
  const uint32_t* words = DevicePointer<const uint32_t>(src);
  Enqueuing enqueuing(*lane_);
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(kernels::LaunchChecksum(words, count, sum, stream())), what));
  enqueuing.Done();
  return Annotate(ReadHash(sum, hash), what);
}

Status CudaEngine::CopyHashed(DataRef dst, DevicePtr src, uint64_t count, OpTiming* timing,
                              uint64_t* hash) {
  // A host destination is bound by PCIe, not by the second read of the source; a capture refuses
  // the hash's wait either way (as Checksum does).
  if (capturing_ || IsHostPlace(dst.place)) {
    VMM_RETURN_IF_ERROR(Copy(dst, DataRef::Device(src), count * 4, timing));
    return Checksum(src, count, hash);
  }
  auto what = [&] {
    return "CopyHashed(dst=" + Hex(dst.addr) + ", src=" + Hex(src) +
           ", count=" + std::to_string(count) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  VMM_RETURN_IF_ERROR(Annotate(lane_->hash_scratch.Reserve(sizeof(uint64_t)), what));
  auto* sum = static_cast<uint64_t*>(lane_->hash_scratch.data());
  const uint32_t* from = DevicePointer<const uint32_t>(src);
  uint32_t* to = DevicePointer<uint32_t>(dst.addr);
  VMM_RETURN_IF_ERROR(Annotate(
      TimedLaunch(
          timing,
          [&] { return CUDA_CALL(kernels::LaunchCopyChecksum(from, to, count, sum, stream())); }),
      what));
  return Annotate(ReadHash(sum, hash), what);
}

Status CudaEngine::Synchronize() {
  VMM_RETURN_IF_ERROR(Bind());
  if (capturing_ || lanes_.size() == 1) return Annotate(SyncStream(), "Synchronize");
  // Every device's stream, each in its own context.
  for (const std::unique_ptr<Lane>& lane : lanes_) {
    VMM_RETURN_IF_ERROR(BindLane(*lane));
    VMM_RETURN_IF_ERROR(Annotate(SyncStream(*lane), "Synchronize"));
  }
  return Status::Ok();
}

}  // namespace vmm::cuda
