// CudaEngine: kernels, graphs and data (VMM and lifecycle are in cuda_engine.cc).
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

template <typename T>
T* FindObject(std::map<uint64_t, T>& objects, uint64_t id) {
  auto it = objects.find(id);
  return it == objects.end() ? nullptr : &it->second;
}

Status UnknownHandle(const std::string& what, const char* kind) {
  return RuntimeError(what + ": unknown " + kind +
                      " handle (never created by this engine, or already destroyed)");
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
                  [&] { return CUDA_CALL(kernels::LaunchFill(out, count, seed, stream())); }),
      what);
}

Status CudaEngine::Memset(DevicePtr dst, uint64_t count, uint32_t pattern, OpTiming* timing) {
  auto what = [&] {
    return "Memset(dst=" + Hex(dst) + ", count=" + std::to_string(count) +
           ", pattern=" + Hex(pattern) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  return Annotate(
      TimedLaunch(timing,
                  [&] { return CU_CALL(api_, cuMemsetD32Async(dst, pattern, count, stream())); }),
      what);
}

Status CudaEngine::Busy(DevicePtr dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
                        OpTiming* timing) {
  auto what = [&] {
    return "Busy(dst=" + Hex(dst) + ", count=" + std::to_string(count) +
           ", duration_ns=" + std::to_string(duration_ns) + ", pattern=" + Hex(pattern) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  uint32_t* out = DevicePointer<uint32_t>(dst);
  return Annotate(TimedLaunch(timing,
                              [&] {
                                return CUDA_CALL(kernels::LaunchBusy(out, count, duration_ns,
                                                                     pattern, stream()));
                              }),
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
                                    to, from, bytes, cudaMemcpyDeviceToDevice, stream()));
                              }),
                  what);
}

Status CudaEngine::CopyFromHost(DevicePtr dst, const void* src, uint64_t bytes, OpTiming* timing) {
  auto what = [&] {
    return "CopyFromHost(dst=" + Hex(dst) + ", bytes=" + FormatBytes(bytes) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  VMM_RETURN_IF_ERROR(Annotate(SyncIfCapturing(), what));
  void* to = DevicePointer<void>(dst);
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
                                                                       args.k, stream()));
                              }),
                  what);
}

// --- Graphs ---

Status CudaEngine::BeginCapture() {
  VMM_RETURN_IF_ERROR(Bind());
  if (!capturing_) {
    // Drain first, so nothing is in flight while capturing (see WaitForStream).
    VMM_RETURN_IF_ERROR(Annotate(Drain(*lane_, nullptr), "BeginCapture: draining the stream"));
  }
  // ThreadLocal: unsafe calls from this thread break the capture (as Global would), calls from
  // other threads are not affected. A second BeginCapture is refused by the runtime itself.
  Status s = CUDA_CALL(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
  if (!s.ok()) {
    RefreshCapturing();
    return Annotate(s, "BeginCapture");
  }
  capturing_ = true;
  return Status::Ok();
}

Status CudaEngine::EndCapture(GraphHandle* out) {
  VMM_RETURN_IF_ERROR(Bind());
  cudaGraph_t raw = nullptr;
  Status s = CUDA_CALL(cudaStreamEndCapture(stream(), &raw));
  Graph graph(raw);  // owns whatever the runtime returned, even on failure
  if (!s.ok()) {
    RefreshCapturing();
    return Annotate(s, "EndCapture");
  }
  capturing_ = false;
  if (!graph) return InternalError("EndCapture: cudaStreamEndCapture returned no graph");
  const uint64_t id = NextId();
  graphs_.emplace(id, std::move(graph));
  graph_lanes_[id] = lane_;
  out->value = id;
  return Status::Ok();
}

Status CudaEngine::Instantiate(GraphHandle graph, ExecHandle* out) {
  auto what = [&] { return "Instantiate(graph=" + std::to_string(graph.value) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  Graph* g = FindObject(graphs_, graph.value);
  if (g == nullptr) return UnknownHandle(what(), "graph");
  StatusOr<GraphExec> exec = InstantiateGraph(g->get());
  if (!exec.ok()) return Annotate(exec.status(), what);
  const uint64_t id = NextId();
  execs_.emplace(id, std::move(exec).value());
  exec_lanes_[id] = lane_;  // it replays on this device, whatever is selected later
  out->value = id;
  return Status::Ok();
}

Status CudaEngine::Replay(ExecHandle exec, OpTiming* timing) {
  auto what = [&] { return "Replay(exec=" + std::to_string(exec.value) + ")"; };
  if (timing != nullptr) timing->gpu_us = -1;
  GraphExec* e = FindObject(execs_, exec.value);
  if (e == nullptr) return UnknownHandle(what(), "exec");
  VMM_RETURN_IF_ERROR(Bind());
  VMM_RETURN_IF_ERROR(Annotate(SyncIfCapturing(), what));
  // An exec runs on the device it was instantiated on.
  Lane& lane = *exec_lanes_[exec.value];
  if (&lane != lane_) {
    VMM_RETURN_IF_ERROR(Annotate(Follow(*lane_, lane), what));  // after the selected lane's work
    VMM_RETURN_IF_ERROR(BindLane(lane));
  }
  cudaStream_t s = lane.stream.get();
  const bool timed = timing != nullptr;
  if (timed) VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaEventRecord(lane.start.get(), s)), what));
  lane.busy = true;
  VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaGraphLaunch(e->get(), s)), what));
  if (timed) VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaEventRecord(lane.stop.get(), s)), what));
  VMM_RETURN_IF_ERROR(Annotate(SyncStream(lane), what));
  if (timed) {
    float ms = 0;
    VMM_RETURN_IF_ERROR(
        Annotate(CUDA_CALL(cudaEventElapsedTime(&ms, lane.start.get(), lane.stop.get())), what));
    timing->gpu_us = static_cast<double>(ms) * 1000.0;
  }
  return Status::Ok();
}

Status CudaEngine::Update(ExecHandle exec, GraphHandle graph, UpdateResult* result) {
  auto what = [&] {
    return "Update(exec=" + std::to_string(exec.value) + ", graph=" + std::to_string(graph.value) +
           ")";
  };
  GraphExec* e = FindObject(execs_, exec.value);
  if (e == nullptr) return UnknownHandle(what(), "exec");
  Graph* g = FindObject(graphs_, graph.value);
  if (g == nullptr) return UnknownHandle(what(), "graph");
  VMM_RETURN_IF_ERROR(BindLane(*exec_lanes_[exec.value]));  // in the exec's own context
  return Annotate(UpdateGraphExec(e->get(), g->get(), result), what);
}

Status CudaEngine::KernelNodes(GraphHandle graph, std::vector<KernelNodeParams>* out) {
  auto what = [&] { return "KernelNodes(graph=" + std::to_string(graph.value) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  Graph* g = FindObject(graphs_, graph.value);
  if (g == nullptr) return UnknownHandle(what(), "graph");
  const Lane& lane = *graph_lanes_[graph.value];  // its kernels are that device's functions
  return Annotate(ReadKernelNodes(lane.kernels, g->get(), out), what);
}

Status CudaEngine::DestroyGraph(GraphHandle graph) {
  VMM_RETURN_IF_ERROR(Bind());
  if (graphs_.erase(graph.value) == 0) {
    return UnknownHandle("DestroyGraph(graph=" + std::to_string(graph.value) + ")", "graph");
  }
  graph_lanes_.erase(graph.value);
  return Status::Ok();
}

Status CudaEngine::DestroyExec(ExecHandle exec) {
  VMM_RETURN_IF_ERROR(Bind());
  if (execs_.erase(exec.value) == 0) {
    return UnknownHandle("DestroyExec(exec=" + std::to_string(exec.value) + ")", "exec");
  }
  exec_lanes_.erase(exec.value);
  return Status::Ok();
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
