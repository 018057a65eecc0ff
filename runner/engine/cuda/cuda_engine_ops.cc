// CudaEngine: kernels and data (VMM and lifecycle are in cuda_engine.cc, graphs in
// cuda_engine_graphs.cc).
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "runner/base/format.h"
#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/cuda_engine_impl.h"
#include "runner/engine/cuda/graph_ops.h"

namespace vmm::cuda {
namespace {

template <typename T>
T* DevicePointer(DevicePtr va) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(va));
}

}  // namespace

template <typename Launch>
Status CudaEngine::TimedLaunch(OpTiming* timing, Launch launch) {
  if (timing != nullptr) timing->gpu_us = -1;
  const bool timed = timing != nullptr && !capturing_;  // a captured launch does not run now
  if (timed) VMM_RETURN_IF_ERROR(CUDA_CALL(cudaEventRecord(lane_->start.get(), stream())));
  if (!capturing_) lane_->busy = true;
  VMM_RETURN_IF_ERROR(launch());
  if (!timed) return Status::Ok();
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaEventRecord(lane_->stop.get(), stream())));
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaEventSynchronize(lane_->stop.get())));
  lane_->busy = false;  // the stop event completes after everything enqueued before it
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

Status CudaEngine::Fill(DevicePtr dst, uint64_t count, uint64_t seed, OpTiming* timing) {
  auto what = [&] {
    return "Fill(dst=" + Hex(dst) + ", count=" + std::to_string(count) +
           ", seed=" + std::to_string(seed) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  float* out = DevicePointer<float>(dst);
  return Annotate(
      TimedLaunch(timing,
                  [&] { return CUDA_CALL(kernels::LaunchFill(out, count, seed, work_stream())); }),
      what);
}

Status CudaEngine::Memset(DevicePtr dst, uint64_t count, uint32_t pattern, OpTiming* timing) {
  auto what = [&] {
    return "Memset(dst=" + Hex(dst) + ", count=" + std::to_string(count) +
           ", pattern=" + Hex(pattern) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  return Annotate(
      TimedLaunch(
          timing,
          [&] { return CU_CALL(api_, cuMemsetD32Async(dst, pattern, count, work_stream())); }),
      what);
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

Status CudaEngine::CopyFromHost(DevicePtr dst, const void* src, uint64_t bytes, OpTiming* timing) {
  auto what = [&] {
    return "CopyFromHost(dst=" + Hex(dst) + ", bytes=" + FormatBytes(bytes) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  void* to = DevicePointer<void>(dst);
  if (capturing_) {
    // A memcpy node from host memory must read memory that lives as long as the graph and its
    // execs: a pinned copy of the source, kept until the engine goes. The node restores the data
    // as it is now.
    if (timing != nullptr) timing->gpu_us = -1;
    StatusOr<PinnedMemory> staged = PinnedCopy(src, bytes);
    if (!staged.ok()) return Annotate(staged.status(), what);
    const void* from = staged->get();
    staging_.push_back(std::move(staged).value());
    return Annotate(
        CUDA_CALL(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, work_stream())), what);
  }
  OpTiming local;  // the copy is always waited for: src may be reused on return
  OpTiming* measured = timing != nullptr ? timing : &local;
  VMM_RETURN_IF_ERROR(Annotate(TimedLaunch(measured,
                                           [&] {
                                             return CUDA_CALL(cudaMemcpyAsync(
                                                 to, src, bytes, cudaMemcpyHostToDevice, stream()));
                                           }),
                               what));
  return Status::Ok();
}

Status CudaEngine::Matmul(const MatmulArgs& args, OpTiming* timing) {
  auto what = [&] {
    return "Matmul(a=" + Hex(args.a) + ", b=" + Hex(args.b) + ", c=" + Hex(args.c) +
           ", m=" + std::to_string(args.m) + ", n=" + std::to_string(args.n) +
           ", k=" + std::to_string(args.k) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  const float* a = DevicePointer<const float>(args.a);
  const float* b = DevicePointer<const float>(args.b);
  float* c = DevicePointer<float>(args.c);
  return Annotate(TimedLaunch(timing,
                              [&] {
                                return CUDA_CALL(kernels::LaunchMatmul(a, b, c, args.m, args.n,
                                                                       args.k, work_stream()));
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
  lane_->busy = true;
  const void* from = DevicePointer<const void>(src);
  VMM_RETURN_IF_ERROR(Annotate(
      CUDA_CALL(cudaMemcpyAsync(dst, from, bytes, cudaMemcpyDeviceToHost, stream())), what));
  return Annotate(SyncStream(), what);
}

Status CudaEngine::Checksum(DevicePtr src, uint64_t count, uint64_t* hash) {
  auto what = [&] { return "Checksum(src=" + Hex(src) + ", count=" + std::to_string(count) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  VMM_RETURN_IF_ERROR(Annotate(SyncIfCapturing(), what));
  VMM_RETURN_IF_ERROR(Annotate(lane_->hash_scratch.Reserve(sizeof(uint64_t)), what));
  auto* sum = static_cast<uint64_t*>(lane_->hash_scratch.data());
  const uint32_t* words = DevicePointer<const uint32_t>(src);
  lane_->busy = true;
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(kernels::LaunchChecksum(words, count, sum, stream())), what));
  uint64_t value = 0;
  VMM_RETURN_IF_ERROR(Annotate(
      CUDA_CALL(cudaMemcpyAsync(&value, sum, sizeof(value), cudaMemcpyDeviceToHost, stream())),
      what));
  VMM_RETURN_IF_ERROR(Annotate(SyncStream(), what));
  *hash = value;
  return Status::Ok();
}

Status CudaEngine::Compare(DevicePtr a, DevicePtr b, uint64_t count, uint32_t max_report,
                           CompareResult* out) {
  auto what = [&] {
    return "Compare(a=" + Hex(a) + ", b=" + Hex(b) + ", count=" + std::to_string(count) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  VMM_RETURN_IF_ERROR(Annotate(SyncIfCapturing(), what));
  *out = CompareResult{};
  if (count == 0) return Status::Ok();
  const uint32_t* wa = DevicePointer<const uint32_t>(a);
  const uint32_t* wb = DevicePointer<const uint32_t>(b);
  lane_->busy = true;

  // Pass 1: mismatches per chunk, summed and scanned on the host.
  const uint64_t num_chunks = kernels::CompareChunkCount(count);
  VMM_RETURN_IF_ERROR(Annotate(lane_->counts_scratch.Reserve(num_chunks * sizeof(uint32_t)), what));
  auto* counts_dev = static_cast<uint32_t*>(lane_->counts_scratch.data());
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(kernels::LaunchCompareCount(wa, wb, count, counts_dev, stream())), what));
  std::vector<uint32_t> counts(num_chunks);
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(cudaMemcpyAsync(counts.data(), counts_dev, num_chunks * sizeof(uint32_t),
                                         cudaMemcpyDeviceToHost, stream())),
               what));
  VMM_RETURN_IF_ERROR(Annotate(SyncStream(), what));
  std::vector<kernels::CompareChunk> picked;  // the chunks holding the first max_report
  for (uint64_t c = 0; c < num_chunks; ++c) {
    if (counts[c] == 0) continue;
    if (out->mismatches < max_report) picked.push_back({c, out->mismatches});
    out->mismatches += counts[c];
  }
  if (picked.empty()) return Status::Ok();

  // Pass 2: the indices of the picked chunks, ascending.
  const uint64_t reported = std::min<uint64_t>(out->mismatches, max_report);
  VMM_RETURN_IF_ERROR(
      Annotate(lane_->chunks_scratch.Reserve(picked.size() * sizeof(kernels::CompareChunk)), what));
  VMM_RETURN_IF_ERROR(Annotate(lane_->indices_scratch.Reserve(reported * sizeof(uint64_t)), what));
  auto* chunks_dev = static_cast<kernels::CompareChunk*>(lane_->chunks_scratch.data());
  auto* indices_dev = static_cast<uint64_t*>(lane_->indices_scratch.data());
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(cudaMemcpyAsync(chunks_dev, picked.data(),
                                         picked.size() * sizeof(kernels::CompareChunk),
                                         cudaMemcpyHostToDevice, stream())),
               what));
  const auto num_picked = static_cast<uint32_t>(picked.size());  // <= max_report
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(kernels::LaunchCompareCollect(wa, wb, count, chunks_dev, num_picked,
                                                       indices_dev, max_report, stream())),
               what));
  out->first_indices.resize(reported);
  VMM_RETURN_IF_ERROR(Annotate(
      CUDA_CALL(cudaMemcpyAsync(out->first_indices.data(), indices_dev, reported * sizeof(uint64_t),
                                cudaMemcpyDeviceToHost, stream())),
      what));
  return Annotate(SyncStream(), what);
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
