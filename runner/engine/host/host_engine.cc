#include "runner/engine/host/host_engine.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "kernels/launch_config.h"
#include "runner/base/format.h"
#include "runner/base/stopwatch.h"
#include "runner/engine/capability_probe.h"
#include "runner/engine/host/address_space.h"
#include "runner/engine/host/cpu_kernels.h"
#include "runner/engine/host/host_graph.h"
#include "runner/engine/host/host_vmm.h"
#include "runner/engine/host/kernel_runner.h"

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

DeviceInfo HostInfo(uint64_t granularity, int device_count, int device) {
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
  info.ordinal = device;
  info.device_count = device_count;
  info.pci_bus_id = "host";
  for (int d = 0; d < device_count; ++d) info.peers.push_back(d);  // all memory is host memory
  return info;
}

class HostEngine final : public Engine {
 public:
  HostEngine(uint64_t granularity, int device_count, int device, bool trap_faults)
      : info_(HostInfo(granularity, device_count, device)),
        space_(granularity, info_.total_memory, &ids_, device_count),
        current_(device),
        kernels_(space_, trap_faults) {}
  // Members go in reverse order of declaration: the kernel runner (its stream's worker stops
  // first), execs, graphs, then the address space (mappings, handles, reservations, newest first).
  ~HostEngine() override = default;

  const DeviceInfo& info() const override { return info_; }
  std::string FaultNote() const override { return kernels_.FaultNote(); }

  using Engine::Reserve;
  Status Reserve(uint64_t size, uint64_t alignment, DevicePtr hint, DevicePtr* va) override {
    VMM_RETURN_IF_ERROR(kernels_.Poisoned());
    return space_.Reserve(size, alignment, hint, va);
  }
  Status Free(DevicePtr va, uint64_t size) override {
    VMM_RETURN_IF_ERROR(kernels_.Poisoned());
    return space_.Free(va, size);
  }
  using Engine::Create;
  Status Create(const AllocProps& props, AllocHandle* out) override {
    VMM_RETURN_IF_ERROR(kernels_.Poisoned());
    AllocProps resolved = props;  // a device location names an ordinal of the twin
    if (props.location == MemLocation::kDevice) resolved.location_id = Ordinal(props.location_id);
    return space_.Create(resolved, out);
  }
  Status Release(AllocHandle handle, SyncNote* note) override {
    VMM_RETURN_IF_ERROR(kernels_.WaitIfAsked(note));
    return space_.Release(handle);
  }
  Status Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle) override {
    VMM_RETURN_IF_ERROR(kernels_.Poisoned());
    return space_.Map(va, size, offset, handle);
  }
  using Engine::SetAccess;
  Status SetAccess(DevicePtr va, uint64_t size, std::span<const DeviceAccess> access) override {
    DeviceAccess resolved[kMaxScenarioDevices];
    if (access.size() > kMaxScenarioDevices) {
      return CudaError("cuMemSetAccess", kInvalidValue,
                       std::to_string(access.size()) + " descriptors, more than the " +
                           std::to_string(kMaxScenarioDevices) + " devices vmm-run knows");
    }
    VMM_RETURN_IF_ERROR(kernels_.Poisoned());
    for (size_t i = 0; i < access.size(); ++i)
      resolved[i] = DeviceAccess{Ordinal(access[i].device), access[i].access};
    return space_.SetAccess(va, size, std::span<const DeviceAccess>(resolved, access.size()));
  }
  Status GetAccess(DevicePtr va, int device, Access* out) override {
    return space_.GetAccess(va, Ordinal(device), out);
  }

  Status SelectDevice(int device) override {
    const int ordinal = Ordinal(device);
    if (std::string e = space_.CheckDevice(ordinal); !e.empty())
      return CudaError("cudaSetDevice", "CUDA_ERROR_INVALID_DEVICE", e);
    current_ = ordinal;
    return Status::Ok();
  }
  Status DescribeDevice(int ordinal, DeviceInfo* out) override {
    const int device = Ordinal(ordinal);
    if (std::string e = space_.CheckDevice(device); !e.empty())
      return CudaError("cuDeviceGet", "CUDA_ERROR_INVALID_DEVICE", e);
    *out = info_;
    out->ordinal = device;
    return Status::Ok();
  }
  Status Unmap(DevicePtr va, uint64_t size, SyncNote* note) override {
    VMM_RETURN_IF_ERROR(kernels_.WaitIfAsked(note));
    return space_.Unmap(va, size);
  }
  Status Export(AllocHandle handle, int* fd) override { return space_.Export(handle, fd); }
  Status Import(int fd, AllocHandle* out) override { return space_.Import(fd, out); }
  Status Inventory(EngineInventory* out) override {
    space_.Inventory(out);
    ReadAccessBack(out);
    return Status::Ok();
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
    VMM_RETURN_IF_ERROR(kernels_.Ordered());
    Stopwatch watch;
    auto kernel = [&] { std::fill_n(Ptr<uint32_t>(dst), count, pattern); };
    VMM_RETURN_IF_ERROR(kernels_.Launched(
        kernels_.Guarded("cuMemsetD32Async", current_,
                         {{"dst", dst, Bytes4(count), Access::kReadWrite}}, kernel),
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
    VMM_RETURN_IF_ERROR(kernels_.Ordered());
    VMM_RETURN_IF_ERROR(
        space_.CheckAccess(fn, kInvalidValue, "src", src, bytes, Access::kRead, current_));
    VMM_RETURN_IF_ERROR(
        space_.CheckAccess(fn, kInvalidValue, "dst", dst, bytes, Access::kReadWrite, current_));
    Stopwatch watch;
    if (bytes != 0) std::memmove(Ptr<void>(dst), Ptr<const void>(src), bytes);
    if (timing != nullptr) timing->gpu_us = watch.ElapsedUs();
    return Status::Ok();
  }

  Status CopyFromHost(DevicePtr dst, const void* src, uint64_t bytes, OpTiming* timing) override {
    const char* fn = "cuMemcpyHtoD";
    if (timing != nullptr) timing->gpu_us = -1;
    VMM_RETURN_IF_ERROR(SyncPoint(fn));
    VMM_RETURN_IF_ERROR(kernels_.Ordered());
    if (src == nullptr && bytes != 0) return CudaError(fn, kInvalidValue, "the source is null");
    VMM_RETURN_IF_ERROR(
        space_.CheckAccess(fn, kInvalidValue, "dst", dst, bytes, Access::kReadWrite, current_));
    Stopwatch watch;
    if (bytes != 0) std::memcpy(Ptr<void>(dst), src, bytes);
    if (timing != nullptr) timing->gpu_us = watch.ElapsedUs();
    return Status::Ok();
  }

  Status BeginCapture() override {
    VMM_RETURN_IF_ERROR(kernels_.Poisoned());
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
    exec_devices_[id] = current_;  // it belongs to the device it was instantiated on
    out->value = id;
    return Status::Ok();
  }

  Status Replay(ExecHandle exec, OpTiming* timing) override {
    if (timing != nullptr) timing->gpu_us = -1;
    VMM_RETURN_IF_ERROR(SyncPoint("cuGraphLaunch"));
    VMM_RETURN_IF_ERROR(kernels_.Ordered());
    auto it = execs_.find(exec.value);
    if (it == execs_.end()) return UnknownExec("cuGraphLaunch", exec);
    Stopwatch watch;
    const std::vector<GraphNode>& nodes = it->second.nodes;
    const int device = exec_devices_[exec.value];
    for (size_t i = 0; i < nodes.size(); ++i) {
      Status s = Run(nodes[i], device);
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
    exec_devices_.erase(exec.value);
    return Status::Ok();
  }

  Status CopyToHost(DevicePtr src, uint64_t bytes, void* dst) override {
    const char* fn = "cuMemcpyDtoH";
    VMM_RETURN_IF_ERROR(SyncPoint(fn));
    VMM_RETURN_IF_ERROR(kernels_.Ordered());
    if (dst == nullptr && bytes != 0)
      return CudaError(fn, kInvalidValue, "the destination is null");
    VMM_RETURN_IF_ERROR(
        space_.CheckAccess(fn, kInvalidValue, "src", src, bytes, Access::kRead, current_));
    if (bytes != 0) std::memcpy(dst, Ptr<const void>(src), bytes);
    return Status::Ok();
  }

  Status Checksum(DevicePtr src, uint64_t count, uint64_t* hash) override {
    VMM_RETURN_IF_ERROR(SyncPoint("cuStreamSynchronize"));
    VMM_RETURN_IF_ERROR(kernels_.Ordered());
    auto kernel = [&] { *hash = ChecksumWords(Ptr<const void>(src), count); };
    return kernels_.Guarded(kChecksumKernel, current_, {{"src", src, Bytes4(count), Access::kRead}},
                            kernel);
  }

  Status Compare(DevicePtr a, DevicePtr b, uint64_t count, uint32_t max_report,
                 CompareResult* out) override {
    VMM_RETURN_IF_ERROR(SyncPoint("cuStreamSynchronize"));
    VMM_RETURN_IF_ERROR(kernels_.Ordered());
    auto kernel = [&] {
      *out = CompareWords(Ptr<const void>(a), Ptr<const void>(b), count, max_report);
    };
    return kernels_.Guarded(
        kCompareKernel, current_,
        {{"a", a, Bytes4(count), Access::kRead}, {"b", b, Bytes4(count), Access::kRead}}, kernel);
  }

  Status Synchronize() override {
    VMM_RETURN_IF_ERROR(SyncPoint("cuStreamSynchronize"));
    return kernels_.Ordered();
  }

  Status MemoryInfo(uint64_t* free_bytes, uint64_t* total_bytes) override {
    space_.MemoryInfo(current_, free_bytes, total_bytes);
    return Status::Ok();
  }
  Status Granularity(const AllocProps& props, GranularityKind kind, uint64_t* bytes) override {
    return space_.Granularity(props, kind, bytes);
  }
  Status AllocProperties(AllocHandle handle, AllocProps* granted) override {
    return space_.AllocProperties(handle, granted);
  }
  Status Retain(DevicePtr va, AllocHandle* out) override { return space_.Retain(va, out); }
  Status SameAllocation(AllocHandle a, AllocHandle b, bool* same) override {
    return space_.SameAllocation(a, b, same);
  }
  Status AddressRange(DevicePtr va, DevicePtr* base, uint64_t* size) override {
    return space_.RangeOf(va, base, size);
  }
  // No device attributes: the trial alone decides (memfd handles are POSIX fds; host and NUMA
  // node 0 memory exist where the kernel has them; compression, RDMA and fabric never).
  Status ProbeCapability(Capability capability, std::string* why_not) override {
    return ProbeByTrial(*this, capability, why_not);
  }

 private:
  // Records `node` while capturing, else runs it now and times it.
  Status Launch(GraphNode node, OpTiming* timing) {
    if (timing != nullptr) timing->gpu_us = -1;
    if (capturing_) {
      VMM_RETURN_IF_ERROR(kernels_.Poisoned());
      capture_.Append(std::move(node));
      return Status::Ok();
    }
    VMM_RETURN_IF_ERROR(kernels_.Ordered());
    Stopwatch watch;
    VMM_RETURN_IF_ERROR(kernels_.Launched(Run(node, current_), timing));
    if (timing != nullptr) timing->gpu_us = watch.ElapsedUs();
    return Status::Ok();
  }

  // The ordinal `device` names (-1: the engine's own device).
  int Ordinal(int device) const { return device < 0 ? info_.ordinal : device; }

  // Runs the kernel node on the CPU as device `device` (Guarded: proven accessible to that device
  // first, or trapped).
  Status Run(const GraphNode& node, int device) {
    const std::string fn = node.params.function;
    switch (node.kind) {
      case KernelKind::kFill: {
        const FillArgs& f = node.fill;
        auto kernel = [&] { FillF32(Ptr<float>(f.dst), f.count, f.seed); };
        return kernels_.Guarded(fn, device, {{"dst", f.dst, Bytes4(f.count), Access::kReadWrite}},
                                kernel);
      }
      case KernelKind::kMatmul: {
        const MatmulArgs& m = node.matmul;
        const uint64_t mk = uint64_t{m.m} * m.k, kn = uint64_t{m.k} * m.n, mn = uint64_t{m.m} * m.n;
        auto kernel = [&] {
          MatmulF32(Ptr<const float>(m.a), Ptr<const float>(m.b), Ptr<float>(m.c), m.m, m.n, m.k);
        };
        return kernels_.Guarded(fn, device,
                                {{"a", m.a, Bytes4(mk), Access::kRead},
                                 {"b", m.b, Bytes4(kn), Access::kRead},
                                 {"c", m.c, Bytes4(mn), Access::kReadWrite}},
                                kernel);
      }
    }
    return InternalError("unknown kernel kind");
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
  std::map<uint64_t, int> exec_devices_;  // by exec handle value: where it was instantiated
  int current_;                           // the selected device's ordinal (SelectDevice)
  KernelRunner kernels_;  // kernels, their stream, the sticky fault; last: destroyed first
};

Status HostEngine::Busy(DevicePtr dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
                        OpTiming* timing) {
  if (timing != nullptr) timing->gpu_us = -1;
  if (capturing_) {
    return CudaError(kernels::kBusyKernelName, "CUDA_ERROR_NOT_SUPPORTED",
                     "vmm-run does not capture busy kernels");
  }
  return kernels_.Busy(dst, count, duration_ns, pattern, timing, current_);
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
  if (options.device_count < 1 || options.device_count > kMaxScenarioDevices) {
    return InvalidInput("host backend: " + std::to_string(options.device_count) +
                        " emulated devices; give 1 to " + std::to_string(kMaxScenarioDevices));
  }
  if (options.device < 0 || options.device >= options.device_count) {
    return Unavailable("no host device " + std::to_string(options.device) + ": the host twin has " +
                       std::to_string(options.device_count) + " (--host-devices " +
                       std::to_string(options.device_count) + ")");
  }
  return std::unique_ptr<Engine>(std::make_unique<host::HostEngine>(
      granularity, options.device_count, options.device, options.trap_faults));
}

}  // namespace vmm
