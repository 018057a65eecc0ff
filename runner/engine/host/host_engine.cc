#include "runner/engine/host/host_engine.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "kernels/launch_config.h"
#include "runner/base/format.h"
#include "runner/base/stopwatch.h"
#include "runner/engine/host/address_space.h"
#include "runner/engine/host/cpu_kernels.h"
#include "runner/engine/host/fault_trap.h"
#include "runner/engine/host/host_graph.h"
#include "runner/engine/host/host_stream.h"
#include "runner/engine/host/host_vmm.h"

namespace vmm {
namespace host {
namespace {

constexpr const char* kInvalidValue = "CUDA_ERROR_INVALID_VALUE";
// A kernel touching memory it may not is a device fault; a copy is refused when enqueued.
constexpr const char* kIllegalAddress = "CUDA_ERROR_ILLEGAL_ADDRESS";
constexpr const char* kChecksumKernel = "vmm_checksum_u32";
constexpr const char* kCompareKernel = "vmm_compare_count_u32";

// `count` elements of 4 bytes, saturating: an impossible size then fails the access check.
uint64_t Bytes4(uint64_t count) { return count > UINT64_MAX / 4 ? UINT64_MAX : count * 4; }

template <typename T>
T* Ptr(DevicePtr va) {
  return reinterpret_cast<T*>(va);
}

// A kernel operand whose access the engine proves before running the kernel (outside trap mode).
struct Operand {
  const char* name;
  DevicePtr va;
  uint64_t bytes;
  Access need;
};

// Busy's wait: until `duration_ns` has passed, or (when `cancelled` is given) until it turns true.
void BusyWait(uint64_t duration_ns, const HostStream* cancelled) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(duration_ns);
  while (std::chrono::steady_clock::now() < end) {
    if (cancelled != nullptr && cancelled->Cancelled()) return;
    std::this_thread::sleep_until(
        std::min(end, std::chrono::steady_clock::now() + std::chrono::milliseconds(10)));
  }
}

// "host CPU (<model name>)", or the machine name where /proc/cpuinfo has no model name.
std::string CpuName(const struct utsname& uts) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return "host CPU (" + line.substr(start) + ")";
  }
  return std::string("host CPU (") + uts.machine + ")";
}

DeviceInfo HostInfo(uint64_t granularity) {
  struct utsname uts;
  std::memset(&uts, 0, sizeof uts);
  uname(&uts);
  DeviceInfo info;
  info.backend = "host";
  info.name = CpuName(uts);
  info.driver_version = uts.release;
  info.vmm_supported = true;
  info.granularity_min = PageSize();
  info.granularity_recommended = granularity;
  info.total_memory =
      static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return info;
}

class HostEngine final : public Engine {
 public:
  HostEngine(uint64_t granularity, bool trap_faults)
      : info_(HostInfo(granularity)), space_(granularity, &ids_), trap_(trap_faults) {
    if (trap_) InstallFaultTrap();
  }
  // Members go in reverse order of declaration: the stream (its worker stops first), execs,
  // graphs, then the address space (mappings, handles, reservations, each newest first).
  ~HostEngine() override = default;

  const DeviceInfo& info() const override { return info_; }
  std::string FaultNote() const override { return fault_note_; }

  Status Reserve(uint64_t size, uint64_t alignment, DevicePtr* va) override {
    VMM_RETURN_IF_ERROR(poisoned_);
    return space_.Reserve(size, alignment, va);
  }
  Status Free(DevicePtr va, uint64_t size) override {
    VMM_RETURN_IF_ERROR(poisoned_);
    return space_.Free(va, size);
  }
  using Engine::Create;
  Status Create(const AllocProps& props, AllocHandle* out) override {
    VMM_RETURN_IF_ERROR(poisoned_);
    if (!props.IsPlain()) {
      return RuntimeError(
          "the host backend does not implement allocation properties (location, handle types, "
          "compression, RDMA) yet");
    }
    return space_.Create(props.size, out);
  }
  Status Release(AllocHandle handle, SyncNote* note) override {
    VMM_RETURN_IF_ERROR(WaitIfAsked(note));
    return space_.Release(handle);
  }
  Status Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle) override {
    VMM_RETURN_IF_ERROR(poisoned_);
    return space_.Map(va, size, offset, handle);
  }
  Status SetAccess(DevicePtr va, uint64_t size, Access access) override {
    VMM_RETURN_IF_ERROR(poisoned_);
    return space_.SetAccess(va, size, access);
  }
  Status Unmap(DevicePtr va, uint64_t size, SyncNote* note) override {
    VMM_RETURN_IF_ERROR(WaitIfAsked(note));
    return space_.Unmap(va, size);
  }

  Status Fill(DevicePtr dst, uint64_t count, uint64_t seed, OpTiming* timing) override {
    return Launch(MakeFillNode(dst, count, seed), timing);
  }
  Status Busy(DevicePtr dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
              OpTiming* timing) override;
  Status Matmul(const MatmulArgs& args, OpTiming* timing) override {
    if (args.m == 0 || args.n == 0) {
      return CudaError("cuLaunchKernel", kInvalidValue,
                       std::string(kernels::kMatmulKernelName) + " needs m > 0 and n > 0, got m=" +
                           std::to_string(args.m) + ", n=" + std::to_string(args.n));
    }
    return Launch(MakeMatmulNode(args), timing);
  }

  Status Memset(DevicePtr dst, uint64_t count, uint32_t pattern, OpTiming* timing) override {
    if (timing != nullptr) timing->gpu_us = -1;
    if (capturing_) {
      return CudaError("cuMemsetD32Async", "CUDA_ERROR_NOT_SUPPORTED",
                       "vmm-run does not capture memset yet");
    }
    VMM_RETURN_IF_ERROR(Ordered());
    Stopwatch watch;
    auto kernel = [&] { std::fill_n(Ptr<uint32_t>(dst), count, pattern); };
    VMM_RETURN_IF_ERROR(Launched(
        Guarded("cuMemsetD32Async", {{"dst", dst, Bytes4(count), Access::kReadWrite}}, kernel),
        timing));
    if (timing != nullptr) timing->gpu_us = watch.ElapsedUs();
    return Status::Ok();
  }

  Status CopyDevice(DevicePtr dst, DevicePtr src, uint64_t bytes, OpTiming* timing) override {
    const char* fn = "cuMemcpyDtoDAsync";
    if (timing != nullptr) timing->gpu_us = -1;
    if (capturing_) {
      return CudaError(fn, "CUDA_ERROR_NOT_SUPPORTED", "vmm-run does not capture copies yet");
    }
    VMM_RETURN_IF_ERROR(Ordered());
    VMM_RETURN_IF_ERROR(space_.CheckAccess(fn, kInvalidValue, "src", src, bytes, Access::kRead));
    VMM_RETURN_IF_ERROR(
        space_.CheckAccess(fn, kInvalidValue, "dst", dst, bytes, Access::kReadWrite));
    Stopwatch watch;
    if (bytes != 0) std::memmove(Ptr<void>(dst), Ptr<const void>(src), bytes);
    if (timing != nullptr) timing->gpu_us = watch.ElapsedUs();
    return Status::Ok();
  }

  Status CopyFromHost(DevicePtr dst, const void* src, uint64_t bytes, OpTiming* timing) override {
    const char* fn = "cuMemcpyHtoD";
    if (timing != nullptr) timing->gpu_us = -1;
    VMM_RETURN_IF_ERROR(SyncPoint(fn));
    VMM_RETURN_IF_ERROR(Ordered());
    if (src == nullptr && bytes != 0) return CudaError(fn, kInvalidValue, "the source is null");
    VMM_RETURN_IF_ERROR(
        space_.CheckAccess(fn, kInvalidValue, "dst", dst, bytes, Access::kReadWrite));
    Stopwatch watch;
    if (bytes != 0) std::memcpy(Ptr<void>(dst), src, bytes);
    if (timing != nullptr) timing->gpu_us = watch.ElapsedUs();
    return Status::Ok();
  }

  Status BeginCapture() override {
    VMM_RETURN_IF_ERROR(poisoned_);
    if (capturing_) {
      return CudaError("cuStreamBeginCapture", "CUDA_ERROR_ILLEGAL_STATE",
                       "the stream is already capturing");
    }
    capturing_ = true;
    invalidated_by_.clear();
    capture_ = HostGraph{};
    return Status::Ok();
  }

  Status EndCapture(GraphHandle* out) override {
    if (!capturing_)
      return CudaError("cuStreamEndCapture", "CUDA_ERROR_ILLEGAL_STATE",
                       "the stream is not capturing");
    capturing_ = false;
    if (!invalidated_by_.empty()) {
      return CudaError("cuStreamEndCapture", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
                       "the capture was invalidated by " + invalidated_by_);
    }
    const uint64_t id = ids_.Next();
    graphs_.emplace(id, std::move(capture_));
    capture_ = HostGraph{};
    out->value = id;
    return Status::Ok();
  }

  Status Instantiate(GraphHandle graph, ExecHandle* out) override {
    const HostGraph* g = FindGraph(graph);
    if (g == nullptr) return UnknownGraph("cuGraphInstantiate", graph);
    const uint64_t id = ids_.Next();
    execs_.emplace(id, *g);  // a copy: the exec outlives changes to (and destruction of) the graph
    out->value = id;
    return Status::Ok();
  }

  Status Replay(ExecHandle exec, OpTiming* timing) override {
    if (timing != nullptr) timing->gpu_us = -1;
    VMM_RETURN_IF_ERROR(SyncPoint("cuGraphLaunch"));
    VMM_RETURN_IF_ERROR(Ordered());
    auto it = execs_.find(exec.value);
    if (it == execs_.end()) return UnknownExec("cuGraphLaunch", exec);
    Stopwatch watch;
    const std::vector<GraphNode>& nodes = it->second.nodes;
    for (size_t i = 0; i < nodes.size(); ++i) {
      Status s = Run(nodes[i]);
      if (!s.ok()) return s.WithContext("cuGraphLaunch: node " + std::to_string(i));
    }
    if (timing != nullptr) timing->gpu_us = watch.ElapsedUs();
    return Status::Ok();
  }

  Status Update(ExecHandle exec, GraphHandle graph, UpdateResult* result) override {
    auto it = execs_.find(exec.value);
    if (it == execs_.end()) return UnknownExec("cuGraphExecUpdate", exec);
    const HostGraph* g = FindGraph(graph);
    if (g == nullptr) return UnknownGraph("cuGraphExecUpdate", graph);
    *result = UpdateExec(&it->second, *g);
    return Status::Ok();
  }

  Status KernelNodes(GraphHandle graph, std::vector<KernelNodeParams>* out) override {
    const HostGraph* g = FindGraph(graph);
    if (g == nullptr) return UnknownGraph("cuGraphGetNodes", graph);
    *out = g->KernelNodes();
    return Status::Ok();
  }

  Status DestroyGraph(GraphHandle graph) override {
    if (graphs_.erase(graph.value) == 0) return UnknownGraph("cuGraphDestroy", graph);
    return Status::Ok();
  }

  Status DestroyExec(ExecHandle exec) override {
    if (execs_.erase(exec.value) == 0) return UnknownExec("cuGraphExecDestroy", exec);
    return Status::Ok();
  }

  Status CopyToHost(DevicePtr src, uint64_t bytes, void* dst) override {
    const char* fn = "cuMemcpyDtoH";
    VMM_RETURN_IF_ERROR(SyncPoint(fn));
    VMM_RETURN_IF_ERROR(Ordered());
    if (dst == nullptr && bytes != 0)
      return CudaError(fn, kInvalidValue, "the destination is null");
    VMM_RETURN_IF_ERROR(space_.CheckAccess(fn, kInvalidValue, "src", src, bytes, Access::kRead));
    if (bytes != 0) std::memcpy(dst, Ptr<const void>(src), bytes);
    return Status::Ok();
  }

  Status Checksum(DevicePtr src, uint64_t count, uint64_t* hash) override {
    VMM_RETURN_IF_ERROR(SyncPoint("cuStreamSynchronize"));
    VMM_RETURN_IF_ERROR(Ordered());
    auto kernel = [&] { *hash = ChecksumWords(Ptr<const void>(src), count); };
    return Guarded(kChecksumKernel, {{"src", src, Bytes4(count), Access::kRead}}, kernel);
  }

  Status Compare(DevicePtr a, DevicePtr b, uint64_t count, uint32_t max_report,
                 CompareResult* out) override {
    VMM_RETURN_IF_ERROR(SyncPoint("cuStreamSynchronize"));
    VMM_RETURN_IF_ERROR(Ordered());
    auto kernel = [&] {
      *out = CompareWords(Ptr<const void>(a), Ptr<const void>(b), count, max_report);
    };
    return Guarded(kCompareKernel,
                   {{"a", a, Bytes4(count), Access::kRead}, {"b", b, Bytes4(count), Access::kRead}},
                   kernel);
  }

  Status Synchronize() override {
    VMM_RETURN_IF_ERROR(SyncPoint("cuStreamSynchronize"));
    return Ordered();
  }

 private:
  // Records `node` while capturing, else runs it now and times it.
  Status Launch(GraphNode node, OpTiming* timing) {
    if (timing != nullptr) timing->gpu_us = -1;
    if (capturing_) {
      VMM_RETURN_IF_ERROR(poisoned_);
      capture_.Append(std::move(node));
      return Status::Ok();
    }
    VMM_RETURN_IF_ERROR(Ordered());
    Stopwatch watch;
    VMM_RETURN_IF_ERROR(Launched(Run(node), timing));
    if (timing != nullptr) timing->gpu_us = watch.ElapsedUs();
    return Status::Ok();
  }

  // Runs the kernel node on the CPU (Guarded: proven accessible first, or trapped).
  Status Run(const GraphNode& node) {
    const std::string fn = node.params.function;
    switch (node.kind) {
      case KernelKind::kFill: {
        const FillArgs& f = node.fill;
        auto kernel = [&] { FillF32(Ptr<float>(f.dst), f.count, f.seed); };
        return Guarded(fn, {{"dst", f.dst, Bytes4(f.count), Access::kReadWrite}}, kernel);
      }
      case KernelKind::kMatmul: {
        const MatmulArgs& m = node.matmul;
        const uint64_t mk = uint64_t{m.m} * m.k, kn = uint64_t{m.k} * m.n, mn = uint64_t{m.m} * m.n;
        auto kernel = [&] {
          MatmulF32(Ptr<const float>(m.a), Ptr<const float>(m.b), Ptr<float>(m.c), m.m, m.n, m.k);
        };
        return Guarded(fn,
                       {{"a", m.a, Bytes4(mk), Access::kRead},
                        {"b", m.b, Bytes4(kn), Access::kRead},
                        {"c", m.c, Bytes4(mn), Access::kReadWrite}},
                       kernel);
      }
    }
    return InternalError("unknown kernel kind");
  }

  // Runs `kernel` on this thread. Outside trap mode every operand is proven accessible first (a
  // kernel that would fault is refused with CUDA_ERROR_ILLEGAL_ADDRESS and the engine stays
  // usable); in trap mode the kernel runs and a fault poisons the engine.
  template <typename Kernel>
  Status Guarded(const std::string& fn, std::initializer_list<Operand> operands, Kernel& kernel) {
    if (!trap_) {
      for (const Operand& o : operands)
        VMM_RETURN_IF_ERROR(space_.CheckAccess(fn, kIllegalAddress, o.name, o.va, o.bytes, o.need));
      kernel();
      return Status::Ok();
    }
    FaultInfo fault;
    if (RunTrapped(kernel, &fault)) return Status::Ok();
    Status faulted = CudaError(fn, kIllegalAddress, "the kernel faulted: " + fault.Describe());
    Poison(faulted, fault.Describe());
    return faulted;
  }

  // What a kernel launch returns: a trapped fault of a launch nobody waits for (no timing) is
  // reported by the next call, as the GPU reports it at the next synchronization.
  Status Launched(Status status, const OpTiming* timing) const {
    if (!status.ok() && trap_ && timing == nullptr && !poisoned_.ok()) return Status::Ok();
    return status;
  }

  // Waits for the stream, so that work enqueued earlier has run; its sticky error poisons the
  // engine. `*was_busy` says whether there was work to wait for.
  Status Ordered(bool* was_busy = nullptr) {
    if (was_busy != nullptr) *was_busy = false;
    VMM_RETURN_IF_ERROR(poisoned_);
    if (stream_ == nullptr) return Status::Ok();
    Status status = stream_->Drain(was_busy);
    if (!status.ok()) Poison(status, stream_->FaultNote());
    return status;
  }

  // Unmap/Release: wait for in-flight work unless the note says not to, and report it.
  Status WaitIfAsked(SyncNote* note) {
    SyncNote result;
    result.wait = note == nullptr || note->wait;
    if (result.wait) {
      Stopwatch watch;
      VMM_RETURN_IF_ERROR(Ordered(&result.waited));
      if (result.waited) result.wait_us = watch.ElapsedUs();
    } else {
      VMM_RETURN_IF_ERROR(poisoned_);
    }
    if (note != nullptr) *note = result;
    return Status::Ok();
  }

  // The first device fault: every later call returns it, as a CUDA context's sticky error.
  void Poison(const Status& status, const std::string& note) {
    if (!poisoned_.ok()) return;
    poisoned_ = status;
    fault_note_ = note;
  }

  HostStream& Stream() {
    if (stream_ == nullptr) {
      InstallFaultTrap();  // the worker always runs trapped: a fault there is a sticky error
      stream_ = std::make_unique<HostStream>();
    }
    return *stream_;
  }

  // Calls that wait for the stream are illegal while it captures; they invalidate the capture.
  Status SyncPoint(const char* function) {
    if (!capturing_) return Status::Ok();
    if (invalidated_by_.empty()) invalidated_by_ = function;
    return CudaError(function, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
                     "not allowed while the stream is capturing (the capture is now invalidated)");
  }

  const HostGraph* FindGraph(GraphHandle graph) const {
    auto it = graphs_.find(graph.value);
    return it == graphs_.end() ? nullptr : &it->second;
  }
  static Status UnknownGraph(const char* function, GraphHandle graph) {
    return CudaError(function, kInvalidValue, "unknown or destroyed graph " + Hex(graph.value));
  }
  static Status UnknownExec(const char* function, ExecHandle exec) {
    return CudaError(function, kInvalidValue, "unknown or destroyed exec " + Hex(exec.value));
  }

  IdSource ids_;
  DeviceInfo info_;
  AddressSpace space_;
  bool capturing_ = false;
  std::string invalidated_by_;  // the call that invalidated the current capture, if any
  HostGraph capture_;
  std::map<uint64_t, HostGraph> graphs_;  // by handle value
  std::map<uint64_t, HostGraph> execs_;   // by handle value; an exec is a copy of a graph
  const bool trap_;                       // HostEngineOptions::trap_faults
  Status poisoned_;                       // the first device fault (ok: none)
  std::string fault_note_;                // the fault trap's account of it
  std::unique_ptr<HostStream> stream_;    // created by the first Busy left in flight; last member
};

Status HostEngine::Busy(DevicePtr dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
                        OpTiming* timing) {
  const char* fn = kernels::kBusyKernelName;
  if (timing != nullptr) timing->gpu_us = -1;
  if (capturing_)
    return CudaError(fn, "CUDA_ERROR_NOT_SUPPORTED", "vmm-run does not capture busy kernels");
  if (timing != nullptr) {  // waited for: runs here, like the other kernels
    VMM_RETURN_IF_ERROR(Ordered());
    Stopwatch watch;
    auto kernel = [&] {
      BusyWait(duration_ns, nullptr);
      std::fill_n(Ptr<uint32_t>(dst), count, pattern);
    };
    VMM_RETURN_IF_ERROR(Guarded(fn, {{"dst", dst, Bytes4(count), Access::kReadWrite}}, kernel));
    timing->gpu_us = watch.ElapsedUs();
    return Status::Ok();
  }
  // Left in flight: the stream's worker runs it, trapped. Outside trap mode the launch proves its
  // access now (what is accessible at launch; only a call that does not wait changes it later).
  VMM_RETURN_IF_ERROR(poisoned_);
  if (!trap_) {
    VMM_RETURN_IF_ERROR(
        space_.CheckAccess(fn, kIllegalAddress, "dst", dst, Bytes4(count), Access::kReadWrite));
  }
  HostStream& stream = Stream();
  stream.Enqueue([fn, dst, count, duration_ns, pattern, &stream](std::string* note) {
    auto kernel = [&] {
      BusyWait(duration_ns, &stream);
      if (!stream.Cancelled()) std::fill_n(Ptr<uint32_t>(dst), count, pattern);
    };
    FaultInfo fault;
    if (RunTrapped(kernel, &fault)) return Status::Ok();
    *note = fault.Describe();
    return CudaError(fn, kIllegalAddress, "the kernel faulted: " + fault.Describe());
  });
  return Status::Ok();
}

}  // namespace
}  // namespace host

StatusOr<std::unique_ptr<Engine>> CreateHostEngine(const HostEngineOptions& options) {
  const uint64_t page = host::PageSize();
  const uint64_t granularity = options.granularity == 0 ? page : options.granularity;
  if (granularity % page != 0 || (granularity & (granularity - 1)) != 0) {
    return InvalidInput("host backend: granularity " + FormatBytes(granularity) +
                        " is not a power-of-two multiple of the page size " + FormatBytes(page));
  }
  return std::unique_ptr<Engine>(
      std::make_unique<host::HostEngine>(granularity, options.trap_faults));
}

}  // namespace vmm
