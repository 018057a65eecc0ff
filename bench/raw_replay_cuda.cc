// ReplayRaw (raw_replay.h): each op's raw calls, mirroring runner/engine/cuda's calls for it.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/raw_replay.h"
#include "kernels/check_kernels.h"
#include "kernels/kernels.h"
#include "kernels/matmul_bound.h"
#include "runner/base/stopwatch.h"
#include "runner/engine/cuda/driver_api.h"
#include "runner/engine/cuda/graph_ops.h"
#include "runner/engine/cuda/vmm_handles.h"
#include "runner/vocab/op.h"

namespace vmm::bench {
namespace {

using kernels::CheckState;
constexpr size_t kZeroedBytes = kernels::kCheckZeroedBytes;

// One replay: the objects the plan's slots name, and scratch memory made before the clock starts.
class Replayer {
 public:
  Replayer(const Plan& plan, const cuda::DriverApi& api, int ordinal)
      : plan_(plan), api_(api), ordinal_(ordinal), prop_(cuda::DeviceAllocationProp(ordinal)) {
    va_.assign(plan.buffers.size(), 0);
    last_va_.assign(plan.buffers.size(), 0);
    lost_buffer_.assign(plan.buffers.size(), false);
    lost_alloc_.assign(plan.allocs.size(), false);
    handles_.assign(plan.allocs.size(), 0);
    graphs_.assign(plan.graphs.size(), nullptr);
    execs_.assign(plan.execs.size(), nullptr);
    snapshots_.assign(plan.snapshots.size(), nullptr);
  }

  // Scratch for the checks, sized for the plan's largest buffer; false on a failed allocation.
  bool Prepare(std::string* error) {
    uint64_t words = 1, chunks = 1, freivalds = 1;
    for (const PlanBuffer& b : plan_.buffers) words = std::max(words, b.elements);
    for (const PlanStep& s : plan_.steps) {
      if (s.op != Op::kCheckMatmul) continue;
      chunks = std::max(chunks, kernels::MatmulChunkCount(s.m, s.n));
      freivalds = std::max<uint64_t>(freivalds, (2ull * s.n + 3ull * s.k) * sizeof(double) + s.m);
    }
    chunks = std::max(chunks, kernels::WordChunkCount(words));
    int sms = 1;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal_);
    sm_count_ = static_cast<uint32_t>(sms);
    return Ok(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream", error) &&
           Ok(cudaMalloc(reinterpret_cast<void**>(&hash_), sizeof(uint64_t)), "hash scratch",
              error) &&
           Ok(cudaMalloc(reinterpret_cast<void**>(&counts_), chunks * sizeof(uint32_t)),
              "counts scratch", error) &&
           Ok(cudaMalloc(reinterpret_cast<void**>(&state_), sizeof(CheckState)), "check scratch",
              error) &&
           Ok(cudaMalloc(&freivalds_, freivalds), "freivalds scratch", error) &&
           Ok(cudaHostAlloc(&readback_, sizeof(CheckState), 0), "readback", error);
  }

  // What reading graph `slot` back costs, as the CUDA engine does after a capture (outside the
  // replay's totals): its nodes, their edges, types and kernel parameters; then its DOT text from
  // cudaGraphDebugDotPrint (verbose) through a temporary file.
  void TimeReadBack(int slot, ReplayCosts* costs) {
    cudaGraph_t graph = graphs_[slot];
    if (graph == nullptr) return;
    Stopwatch walk;
    size_t n = 0;
    cudaGraphGetNodes(graph, nullptr, &n);
    std::vector<cudaGraphNode_t> nodes(n);
    if (n > 0) cudaGraphGetNodes(graph, nodes.data(), &n);
    for (cudaGraphNode_t node : nodes) {
      size_t deps = 0;
      cudaGraphNodeGetDependencies(node, nullptr, nullptr, &deps);
      std::vector<cudaGraphNode_t> dep(deps);
      if (deps > 0) cudaGraphNodeGetDependencies(node, dep.data(), nullptr, &deps);
      cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
      cudaGraphNodeGetType(node, &type);
      if (type == cudaGraphNodeTypeKernel) {
        cudaKernelNodeParams p{};
        cudaGraphKernelNodeGetParams(node, &p);
      }
    }
    costs->walk_us.push_back(walk.ElapsedUs());
    Stopwatch dot;
    const StatusOr<std::string> text = cuda::DriverDotText(graph);  // what --driver-dot does
    costs->dot_us.push_back(dot.ElapsedUs());
    costs->dot_bytes = text.ok() ? text->size() : 0;
  }

  ~Replayer() {
    cudaStreamSynchronize(stream_);
    for (cudaGraphExec_t e : execs_)
      if (e != nullptr) cudaGraphExecDestroy(e);
    for (cudaGraph_t g : graphs_)
      if (g != nullptr) cudaGraphDestroy(g);
    for (size_t i = 0; i < snapshots_.size(); ++i) FreeSnapshot(static_cast<int>(i));
    for (size_t i = 0; i < va_.size(); ++i)
      if (va_[i] != 0 && plan_.buffers[i].base < 0) {
        api_.cuMemUnmap(va_[i], plan_.buffers[i].reservation_size);  // may map nothing
        api_.cuMemAddressFree(va_[i], plan_.buffers[i].reservation_size);
      }
    for (const auto& [va, size] : leftover_) {
      api_.cuMemUnmap(va, size);
      api_.cuMemAddressFree(va, size);
    }
    for (CUmemGenericAllocationHandle h : handles_)
      if (h != 0) api_.cuMemRelease(h);
    cudaFree(hash_);
    cudaFree(counts_);
    cudaFree(state_);
    cudaFree(freivalds_);
    cudaFreeHost(readback_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // The op's raw calls, or false with `error` set; *replayed false when the op has none here.
  bool Step(const PlanStep& s, bool* replayed, std::string* error) {
    *replayed = true;
    const PlanStep& what = s;  // named in a message only when a call fails
    auto cu = [&](CUresult r) { return CuOk(r, what, error); };
    auto rt = [&](cudaError_t r) { return Ok(r, what, error); };
    switch (s.op) {
      case Op::kReserve: {
        CUdeviceptr hint = s.offset;
        if (s.other >= 0) hint += last_va_[s.other];
        CUdeviceptr va = 0;
        if (!cu(api_.cuMemAddressReserve(&va, s.size, s.alignment, hint, 0))) return false;
        if (va_[s.buffer] != 0)  // a range whose free was skipped: freed at the end
          leftover_.push_back({va_[s.buffer], plan_.buffers[s.buffer].reservation_size});
        va_[s.buffer] = last_va_[s.buffer] = va;
        lost_buffer_[s.buffer] = false;
        return true;
      }
      case Op::kFree: {
        if (lost_buffer_[s.buffer]) return Skip(replayed);  // may still hold a mapping
        const bool ok = cu(api_.cuMemAddressFree(va_[s.buffer], s.size));
        va_[s.buffer] = 0;
        return ok;
      }
      case Op::kCreate: {
        const AllocSpec& spec = plan_.alloc_specs[s.alloc];
        if (spec.read_back || spec.props.location != MemLocation::kDevice || s.device != 0) {
          lost_alloc_[s.alloc] = true;  // its map, release and the mapped range's calls skip too
          return Skip(replayed);
        }
        lost_alloc_[s.alloc] = false;
        return cu(api_.cuMemCreate(&handles_[s.alloc], s.size, &prop_, 0));
      }
      case Op::kRelease: {
        if (lost_alloc_[s.alloc]) return Skip(replayed);
        if (s.wait && !WaitIfBusy(what, error)) return false;
        const bool ok = cu(api_.cuMemRelease(handles_[s.alloc]));
        handles_[s.alloc] = 0;
        return ok;
      }
      case Op::kMap:
        if (lost_alloc_[s.alloc]) {
          lost_buffer_[s.buffer] = true;
          return Skip(replayed);
        }
        return cu(
            api_.cuMemMap(va_[s.buffer] + s.offset, s.size, s.alloc_offset, handles_[s.alloc], 0));
      case Op::kSetAccess: {
        if (lost_buffer_[s.buffer] ||
            (s.device_access != 0 && s.device_access != PackAccess(0, 0, s.access)))
          return Skip(replayed);  // memory it could not make, or several devices
        CUmemAccessDesc desc{};
        desc.location = prop_.location;
        desc.flags = s.access == Access::kReadWrite ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                     : s.access == Access::kRead    ? CU_MEM_ACCESS_FLAGS_PROT_READ
                                                    : CU_MEM_ACCESS_FLAGS_PROT_NONE;
        if (s.wait && !WaitIfBusy(what, error)) return false;
        return cu(api_.cuMemSetAccess(va_[s.buffer] + s.offset, s.size, &desc, 1));
      }
      case Op::kUnmap:
        if (lost_buffer_[s.buffer]) return Skip(replayed);
        if (s.wait && !WaitIfBusy(what, error)) return false;
        return cu(api_.cuMemUnmap(va_[s.buffer] + s.offset, s.size));
      case Op::kFill:
      case Op::kMatmul:
        if (!Launch(s, what, error)) return false;
        if (s.async) {
          busy_ = true;
          return true;
        }
        return rt(cudaStreamSynchronize(stream_));
      case Op::kMemset: {  // the engine's late-bound cuMemsetD32Async, then the run's wait
        const auto memset = VMM_DRIVER_FN(cuMemsetD32Async, v3020, cuda::kDriverAbiVersion);
        if (memset == nullptr) return Skip(replayed);
        return cu(memset(DataVa(s.buffer), s.pattern, plan_.buffers[s.buffer].elements, stream_)) &&
               rt(cudaStreamSynchronize(stream_));
      }
      case Op::kSnapshot: {
        const PlanBuffer& b = plan_.buffers[s.buffer];
        FreeSnapshot(s.snapshot);
        void*& dst = snapshots_[s.snapshot];
        if (s.place ==
            DataPlace::kHostPinned) {  // the engine's CopyHashed to host: copy, then hash
          return rt(cudaHostAlloc(&dst, b.bytes, 0)) &&
                 rt(cudaMemcpyAsync(dst, Words(s.buffer), b.bytes, cudaMemcpyDeviceToHost,
                                    stream_)) &&
                 rt(cudaStreamSynchronize(stream_)) &&
                 Checksum(Words(s.buffer), b.elements, what, error);
        }
        if (s.place != DataPlace::kDevice) return Skip(replayed);  // pageable: not replayed
        return rt(cudaMalloc(&dst, b.bytes)) &&
               rt(static_cast<cudaError_t>(kernels::LaunchCopyChecksum(
                   Words(s.buffer), static_cast<uint32_t*>(dst), b.elements, hash_, stream_))) &&
               ReadHash(what, error);
      }
      case Op::kCopy: {  // runner/exec/data_steps.cc: a buffer or a snapshot on either side
        const bool from_snapshot = s.other < 0, to_snapshot = s.to_snapshot >= 0;
        const void* src = from_snapshot ? snapshots_[s.snapshot] : Words(s.other);
        void* dst =
            to_snapshot ? snapshots_[s.to_snapshot] : const_cast<uint32_t*>(Words(s.buffer));
        if (src == nullptr || dst == nullptr || s.async) return Skip(replayed);
        const uint64_t bytes =
            from_snapshot ? plan_.snapshot_bytes[s.snapshot] : plan_.buffers[s.other].bytes;
        const bool from_host = from_snapshot && Pinned(s.snapshot);
        const bool to_host = to_snapshot && Pinned(s.to_snapshot);
        const cudaMemcpyKind kind = from_host && to_host ? cudaMemcpyHostToHost
                                    : from_host          ? cudaMemcpyHostToDevice
                                    : to_host            ? cudaMemcpyDeviceToHost
                                                         : cudaMemcpyDeviceToDevice;
        if (!rt(cudaMemcpyAsync(dst, src, bytes, kind, stream_)) ||
            !rt(cudaStreamSynchronize(stream_)))
          return false;
        // A snapshot copied from a buffer takes the buffer's hash (computed on the device).
        return !to_snapshot || from_snapshot ||
               Checksum(static_cast<const uint32_t*>(src), bytes / 4, what, error);
      }
      case Op::kCheckEqual: {
        const PlanBuffer& b = plan_.buffers[s.buffer];
        const uint32_t* other = nullptr;
        if (s.snapshot >= 0) {
          if (plan_.snapshot_places[s.snapshot] != DataPlace::kDevice) return Skip(replayed);
          other = static_cast<const uint32_t*>(snapshots_[s.snapshot]);
        } else {
          other = Words(s.other);
        }
        return WordCheck(Words(s.buffer), other, 0, b.elements, s.snapshot < 0, what, error);
      }
      case Op::kCheckValue:
        return WordCheck(Words(s.buffer), nullptr, s.pattern, plan_.buffers[s.buffer].elements,
                         true, what, error);
      case Op::kCheckMatmul:
        if (s.verify_host) return Skip(replayed);
        return MatmulCheck(s, what, error);
      case Op::kCheckAddress:
        return true;  // the runner compares addresses it already holds: no call
      case Op::kCapture: {
        for (const PlanStep& inner : s.body)
          if (inner.op != Op::kFill && inner.op != Op::kMatmul) {
            DropGraph(s.graph);  // what uses this graph later skips too
            return Skip(replayed);
          }
        if (!rt(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal))) return false;
        for (const PlanStep& inner : s.body)
          if (!Launch(inner, what, error)) {
            cudaGraph_t dropped = nullptr;
            cudaStreamEndCapture(stream_, &dropped);
            if (dropped != nullptr) cudaGraphDestroy(dropped);
            return false;
          }
        DropGraph(s.graph);
        return rt(cudaStreamEndCapture(stream_, &graphs_[s.graph]));
      }
      case Op::kInstantiate: {
        if (execs_[s.exec] != nullptr) cudaGraphExecDestroy(execs_[s.exec]);
        execs_[s.exec] = nullptr;  // what uses this exec later skips when this one is skipped
        if (s.upload || s.auto_free_on_launch || s.device_launch || graphs_[s.graph] == nullptr)
          return Skip(replayed);  // an option the replay lacks, or a graph it could not capture
        return rt(cudaGraphInstantiate(&execs_[s.exec], graphs_[s.graph], 0));
      }
      case Op::kReplay:  // `repeat` launches, each waited for (the run times each)
        if (execs_[s.exec] == nullptr) return Skip(replayed);
        for (uint32_t i = 0; i < s.repeat; ++i)
          if (!rt(cudaGraphLaunch(execs_[s.exec], stream_)) || !rt(cudaStreamSynchronize(stream_)))
            return false;
        return true;
      case Op::kUpdate:
        if (execs_[s.exec] == nullptr || graphs_[s.graph] == nullptr) return Skip(replayed);
        for (uint32_t i = 0; i < s.repeat; ++i) {
          cudaGraphExecUpdateResultInfo info{};
          if (cudaGraphExecUpdate(execs_[s.exec], graphs_[s.graph], &info) != cudaSuccess)
            cudaGetLastError();  // a refused update is an outcome, not a failure
        }
        return true;
      case Op::kDestroyGraph: {
        if (graphs_[s.graph] == nullptr) return Skip(replayed);
        const bool ok = rt(cudaGraphDestroy(graphs_[s.graph]));
        graphs_[s.graph] = nullptr;
        return ok;
      }
      case Op::kDestroyExec: {
        if (execs_[s.exec] == nullptr) return Skip(replayed);
        const bool ok = rt(cudaGraphExecDestroy(execs_[s.exec]));
        execs_[s.exec] = nullptr;
        return ok;
      }
      case Op::kSynchronize:
        busy_ = false;
        return rt(cudaStreamSynchronize(stream_));
      default:
        return Skip(replayed);
    }
  }

 private:
  static bool Skip(bool* replayed) {
    *replayed = false;
    return true;
  }
  static bool Ok(cudaError_t r, const char* what, std::string* error) {
    if (r == cudaSuccess) return true;
    *error = std::string(what) + ": " + cudaGetErrorName(r);
    return false;
  }
  static std::string Name(const PlanStep& s) {
    return std::string(OpName(s.op)) + " '" + s.label + "'";
  }
  static bool Ok(cudaError_t r, const PlanStep& what, std::string* error) {
    return r == cudaSuccess || Ok(r, Name(what).c_str(), error);
  }
  bool CuOk(CUresult r, const PlanStep& what, std::string* error) const {
    if (r == CUDA_SUCCESS) return true;
    const char* name = nullptr;
    api_.cuGetErrorName(r, &name);
    *error = Name(what) + ": " + (name != nullptr ? name : "CUresult " + std::to_string(r));
    return false;
  }

  bool Pinned(int snapshot) const {
    return plan_.snapshot_places[snapshot] == DataPlace::kHostPinned;
  }
  void FreeSnapshot(int slot) {
    void*& p = snapshots_[slot];
    if (p != nullptr) Pinned(slot) ? cudaFreeHost(p) : cudaFree(p);
    p = nullptr;
  }

  void DropGraph(int slot) {
    if (graphs_[slot] != nullptr) cudaGraphDestroy(graphs_[slot]);
    graphs_[slot] = nullptr;
  }

  // The first element of buffer or view `slot` (runner/exec/run_state.h's DataVa).
  CUdeviceptr DataVa(int slot) const {
    const PlanBuffer& b = plan_.buffers[slot];
    return b.base >= 0 ? va_[b.base] + b.offset : va_[slot];
  }
  const uint32_t* Words(int slot) const {
    return reinterpret_cast<const uint32_t*>(static_cast<uintptr_t>(DataVa(slot)));
  }
  float* Floats(int slot) const {
    return reinterpret_cast<float*>(static_cast<uintptr_t>(DataVa(slot)));
  }

  bool WaitIfBusy(const PlanStep& what, std::string* error) {
    if (!busy_) return true;
    busy_ = false;
    return Ok(cudaStreamSynchronize(stream_), what, error);
  }

  // A fill or matmul launched on the stream (recorded, while it captures).
  bool Launch(const PlanStep& s, const PlanStep& what, std::string* error) {
    int r = 0;
    if (s.op == Op::kFill) {
      r = kernels::LaunchFill(Floats(s.buffer), plan_.buffers[s.buffer].elements, s.seed, stream_);
    } else {
      r = kernels::LaunchMatmul(Floats(s.a), Floats(s.b), Floats(s.c), s.m, s.n, s.k, stream_);
    }
    return Ok(static_cast<cudaError_t>(r), what, error);
  }

  bool ReadHash(const PlanStep& what, std::string* error) {
    return Ok(cudaMemcpyAsync(readback_, hash_, sizeof(uint64_t), cudaMemcpyDeviceToHost, stream_),
              what, error) &&
           Ok(cudaStreamSynchronize(stream_), what, error);
  }

  bool Checksum(const uint32_t* words, uint64_t count, const PlanStep& what, std::string* error) {
    return Ok(static_cast<cudaError_t>(kernels::LaunchChecksum(words, count, hash_, stream_)), what,
              error) &&
           ReadHash(what, error);
  }

  // The engine's RunWordCheck: count, pick, collect, one copy back, a wait.
  bool WordCheck(const uint32_t* a, const uint32_t* b, uint32_t pattern, uint64_t count,
                 bool hash_a, const PlanStep& what, std::string* error) {
    const PlanStep& w = what;
    const uint32_t blocks = sm_count_ * 2;
    const uint64_t chunks = kernels::WordChunkCount(count);
    constexpr uint32_t kMax = kernels::kMaxCheckReport;
    auto ok = [&](int r) { return Ok(static_cast<cudaError_t>(r), w, error); };
    return ok(cudaMemsetAsync(state_, 0, kZeroedBytes, stream_)) &&
           ok(b != nullptr ? kernels::LaunchCompareCount(a, b, count, 0, hash_a, counts_,
                                                         &state_->totals, blocks, stream_)
                           : kernels::LaunchValueCount(a, pattern, count, 0, counts_,
                                                       &state_->totals, blocks, stream_)) &&
           ok(kernels::LaunchPickChunks(counts_, chunks, &state_->totals, kMax, &state_->picked,
                                        stream_)) &&
           ok(b != nullptr ? kernels::LaunchCompareCollect(a, b, count, 0, &state_->picked, kMax,
                                                           &state_->report.words, stream_)
                           : kernels::LaunchValueCollect(a, pattern, count, 0, &state_->picked,
                                                         kMax, &state_->report.words, stream_)) &&
           ok(cudaMemcpyAsync(readback_, state_, sizeof(CheckState), cudaMemcpyDeviceToHost,
                              stream_)) &&
           ok(cudaStreamSynchronize(stream_));
  }

  // The engine's CheckMatmul (Freivalds' pass first when the product is large), then the
  // runner's three hashes of A, B and C.
  bool MatmulCheck(const PlanStep& s, const PlanStep& what, std::string* error) {
    const PlanStep& w = what;
    auto ok = [&](int r) { return Ok(static_cast<cudaError_t>(r), w, error); };
    const float *a = Floats(s.a), *b = Floats(s.b), *c = Floats(s.c);
    const double factor = matmul_bound::BoundFactor(s.k);
    const uint64_t chunks = kernels::MatmulChunkCount(s.m, s.n);
    constexpr uint32_t kMax = kernels::kMaxCheckReport;
    const bool freivalds = uint64_t{s.m} * s.n * s.k > matmul_bound::kFullReferenceLimit;
    if (!ok(cudaMemsetAsync(state_, 0, kZeroedBytes, stream_))) return false;
    uint8_t* row_bad = nullptr;
    if (freivalds) {
      auto* r = static_cast<double*>(freivalds_);
      double* br = r + 2ull * s.n;
      double* babs = br + 2ull * s.k;
      row_bad = reinterpret_cast<uint8_t*>(babs + s.k);
      if (!ok(kernels::LaunchFreivalds(a, b, c, s.m, s.n, s.k, factor, r, br, babs, row_bad,
                                       &state_->bad_rows, sm_count_ * 2, stream_)))
        return false;
    }
    return ok(kernels::LaunchMatmulRefCount(a, b, c, s.m, s.n, s.k, factor, row_bad, counts_,
                                            &state_->totals, sm_count_ * 8, stream_)) &&
           ok(kernels::LaunchPickChunks(counts_, chunks, &state_->totals, kMax, &state_->picked,
                                        stream_)) &&
           ok(kernels::LaunchMatmulCollect(a, b, c, s.n, s.k, factor, &state_->picked, kMax,
                                           &state_->report.matmul, stream_)) &&
           ok(cudaMemcpyAsync(readback_, state_, sizeof(CheckState), cudaMemcpyDeviceToHost,
                              stream_)) &&
           ok(cudaStreamSynchronize(stream_)) &&
           Checksum(Words(s.a), uint64_t{s.m} * s.k, what, error) &&
           Checksum(Words(s.b), uint64_t{s.k} * s.n, what, error) &&
           Checksum(Words(s.c), uint64_t{s.m} * s.n, what, error);
  }

  const Plan& plan_;
  const cuda::DriverApi& api_;
  int ordinal_;
  CUmemAllocationProp prop_;
  uint32_t sm_count_ = 1;
  cudaStream_t stream_ = nullptr;
  bool busy_ = false;                 // asynchronous work may be in flight on the stream
  std::vector<CUdeviceptr> va_;       // buffer slot -> its reservation now (0: none)
  std::vector<CUdeviceptr> last_va_;  // buffer slot -> its last reservation (a reserve's hint)
  std::vector<CUmemGenericAllocationHandle> handles_;
  // Allocations the replay could not make (a create it skipped), and the buffers they were mapped
  // into: the calls on them are skipped too, until the buffer is reserved again.
  std::vector<bool> lost_alloc_, lost_buffer_;
  std::vector<std::pair<CUdeviceptr, uint64_t>> leftover_;  // reservations not freed in the plan
  std::vector<cudaGraph_t> graphs_;
  std::vector<cudaGraphExec_t> execs_;
  std::vector<void*> snapshots_;
  uint64_t* hash_ = nullptr;
  uint32_t* counts_ = nullptr;
  CheckState* state_ = nullptr;
  void* freivalds_ = nullptr;
  void* readback_ = nullptr;
};

}  // namespace

ReplayCosts ReplayRaw(const Plan& plan) {
  ReplayCosts costs;
  StatusOr<cuda::DriverApi> api = cuda::LoadDriverApi();
  int ordinal = 0;
  if (!api.ok() || cudaGetDevice(&ordinal) != cudaSuccess) {
    costs.error = api.ok() ? "no current device" : api.status().message();
    return costs;
  }
  Replayer replayer(plan, *api, ordinal);
  if (!replayer.Prepare(&costs.error)) return costs;
  for (const PlanStep& step : plan.steps) {
    const bool repeats = step.op == Op::kReplay || step.op == Op::kUpdate;  // the others: once
    if ((step.repeat > 1 && !repeats) || step.expect_error != nullptr) {
      ++costs.skipped[OpName(step.op)];
      continue;
    }
    Stopwatch watch;
    bool replayed = false;
    const bool ok = replayer.Step(step, &replayed, &costs.error);
    const double us = watch.ElapsedUs();
    if (!ok) break;
    if (!replayed) {
      ++costs.skipped[OpName(step.op)];
      continue;
    }
    costs.us[OpName(step.op)] += us;
    ++costs.steps[OpName(step.op)];
    costs.total_us += us;
    if (step.op == Op::kCapture) replayer.TimeReadBack(step.graph, &costs);  // not in the totals
  }
  return costs;
}

}  // namespace vmm::bench
