#include "runner/engine/fault_engine.h"

#include <string>

namespace vmm {
namespace {

// Indexed by FaultKind. The errors are the ones the driver returns for a refused call of that
// kind that leaves nothing behind (an allocation that does not fit, a launch without resources).
constexpr FaultKindInfo kKinds[kFaultKindCount] = {
    {"reserve", "cuMemAddressReserve", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"free", "cuMemAddressFree", "CUDA_ERROR_INVALID_VALUE"},
    {"create", "cuMemCreate", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"release", "cuMemRelease", "CUDA_ERROR_INVALID_VALUE"},
    {"map", "cuMemMap", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"set_access", "cuMemSetAccess", "CUDA_ERROR_INVALID_VALUE"},
    {"unmap", "cuMemUnmap", "CUDA_ERROR_INVALID_VALUE"},
    {"export", "cuMemExportToShareableHandle", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"import", "cuMemImportFromShareableHandle", "CUDA_ERROR_INVALID_VALUE"},
    {"launch", "cudaLaunchKernel", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {"copy", "cudaMemcpyAsync", "CUDA_ERROR_INVALID_VALUE"},
    {"snapshot", "cudaMalloc", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"check", "cudaLaunchKernel", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {"capture", "cudaStreamBeginCapture", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
    {"graph_node", "cudaStreamWaitEvent", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
    {"graph_memory", "cudaMallocAsync", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"instantiate", "cudaGraphInstantiate", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"replay", "cudaGraphLaunch", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {"update", "cudaGraphExecUpdate", "CUDA_ERROR_INVALID_VALUE"},
    {"query", "cudaGraphGetNodes", "CUDA_ERROR_INVALID_VALUE"},
    {"device", "cudaSetDevice", "CUDA_ERROR_INVALID_DEVICE"},
    {"destroy", "cudaGraphDestroy", "CUDA_ERROR_INVALID_VALUE"},
    {"retain", "cuMemRetainAllocationHandle", "CUDA_ERROR_INVALID_VALUE"},
    {"properties", "cuMemGetAllocationGranularity", "CUDA_ERROR_INVALID_VALUE"},
    {"memory_info", "cuMemGetInfo", "CUDA_ERROR_INVALID_CONTEXT"},
    {"address_range", "cuMemGetAddressRange", "CUDA_ERROR_NOT_FOUND"},
    {"same_memory", "cudaMemcpy", "CUDA_ERROR_INVALID_VALUE"},
    {"synchronize", "cudaStreamSynchronize", "CUDA_ERROR_LAUNCH_FAILED"},
};

}  // namespace

const FaultKindInfo& Describe(FaultKind kind) { return kKinds[static_cast<size_t>(kind)]; }

Status FaultEngine::Enter(FaultKind kind) {
  const uint64_t overall = ++total_;
  const uint64_t of_kind = ++by_kind_[static_cast<size_t>(kind)];
  if (!plan_ || injected_) return Status::Ok();
  const bool hit =
      plan_->kind ? (*plan_->kind == kind && of_kind == plan_->nth) : overall == plan_->nth;
  if (!hit) return Status::Ok();
  injected_ = true;
  const FaultKindInfo& k = Describe(kind);
  return RuntimeError(std::string(k.driver_call) + ": " + k.error + " (injected fault)");
}

#define VMM_FORWARD(kind, call)                  \
  do {                                           \
    VMM_RETURN_IF_ERROR(Enter(FaultKind::kind)); \
    return inner_.call;                          \
  } while (false)

Status FaultEngine::Reserve(uint64_t size, uint64_t alignment, DevicePtr hint, DevicePtr* va) {
  VMM_FORWARD(kReserve, Reserve(size, alignment, hint, va));
}
Status FaultEngine::Free(DevicePtr va, uint64_t size) { VMM_FORWARD(kFree, Free(va, size)); }
Status FaultEngine::Create(const AllocProps& props, AllocHandle* out) {
  VMM_FORWARD(kCreate, Create(props, out));
}
Status FaultEngine::Release(AllocHandle handle, SyncNote* note) {
  VMM_FORWARD(kRelease, Release(handle, note));
}
Status FaultEngine::Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle) {
  VMM_FORWARD(kMap, Map(va, size, offset, handle));
}
Status FaultEngine::SetAccess(DevicePtr va, uint64_t size, std::span<const DeviceAccess> access) {
  VMM_FORWARD(kSetAccess, SetAccess(va, size, access));
}
Status FaultEngine::GetAccess(DevicePtr va, int device, Access* out) {
  VMM_FORWARD(kQuery, GetAccess(va, device, out));
}
Status FaultEngine::SelectDevice(int device) { VMM_FORWARD(kDevice, SelectDevice(device)); }
Status FaultEngine::DescribeDevice(int ordinal, DeviceInfo* out) {
  VMM_FORWARD(kDevice, DescribeDevice(ordinal, out));
}
Status FaultEngine::Unmap(DevicePtr va, uint64_t size, SyncNote* note) {
  VMM_FORWARD(kUnmap, Unmap(va, size, note));
}
Status FaultEngine::Fill(DevicePtr dst, uint64_t count, uint64_t seed, OpTiming* timing) {
  VMM_FORWARD(kLaunch, Fill(dst, count, seed, timing));
}
Status FaultEngine::Matmul(const MatmulArgs& args, OpTiming* timing) {
  VMM_FORWARD(kLaunch, Matmul(args, timing));
}
Status FaultEngine::Memset(DevicePtr dst, uint64_t count, uint32_t pattern, OpTiming* timing) {
  VMM_FORWARD(kLaunch, Memset(dst, count, pattern, timing));
}
Status FaultEngine::CopyDevice(DevicePtr dst, DevicePtr src, uint64_t bytes, OpTiming* timing) {
  VMM_FORWARD(kCopy, CopyDevice(dst, src, bytes, timing));
}
Status FaultEngine::Copy(DataRef dst, DataRef src, uint64_t bytes, OpTiming* timing) {
  VMM_FORWARD(kCopy, Copy(dst, src, bytes, timing));
}
Status FaultEngine::HostFunction(OpTiming* timing) { VMM_FORWARD(kLaunch, HostFunction(timing)); }
Status FaultEngine::BeginCapture() { VMM_FORWARD(kCapture, BeginCapture()); }
Status FaultEngine::EndCapture(GraphHandle* out) { VMM_FORWARD(kCapture, EndCapture(out)); }
Status FaultEngine::CaptureLane(int lane) { VMM_FORWARD(kGraphNode, CaptureLane(lane)); }
Status FaultEngine::ForkLane(int from, int to) { VMM_FORWARD(kGraphNode, ForkLane(from, to)); }
Status FaultEngine::JoinLane(int from, int into) { VMM_FORWARD(kGraphNode, JoinLane(from, into)); }
Status FaultEngine::NameCapturedNode(const std::string& name) {
  VMM_FORWARD(kGraphNode, NameCapturedNode(name));
}
Status FaultEngine::RecordEvent(int event) { VMM_FORWARD(kGraphNode, RecordEvent(event)); }
Status FaultEngine::WaitEvent(int event) { VMM_FORWARD(kGraphNode, WaitEvent(event)); }
Status FaultEngine::GraphAlloc(uint64_t bytes, DevicePtr* ptr) {
  VMM_FORWARD(kGraphMemory, GraphAlloc(bytes, ptr));
}
Status FaultEngine::GraphFree(DevicePtr ptr) { VMM_FORWARD(kGraphMemory, GraphFree(ptr)); }
Status FaultEngine::CaptureChildGraph(GraphHandle child) {
  VMM_FORWARD(kGraphNode, CaptureChildGraph(child));
}
// Conditional nodes (engine.h's block).
Status FaultEngine::BeginConditional(ConditionKind kind, DevicePtr word, DevicePtr passes,
                                     const std::string& name) {
  VMM_FORWARD(kGraphNode, BeginConditional(kind, word, passes, name));
}
Status FaultEngine::EndConditional() { VMM_FORWARD(kGraphNode, EndConditional()); }
// End of the conditional nodes block.
Status FaultEngine::GraphMemory(GraphMemoryUsage* out) {
  VMM_FORWARD(kGraphMemory, GraphMemory(out));
}
Status FaultEngine::TrimGraphMemory() { VMM_FORWARD(kGraphMemory, TrimGraphMemory()); }
Status FaultEngine::InstantiateWith(GraphHandle graph, const InstantiateOptions& options,
                                    ExecHandle* out, InstantiateInfo* info) {
  VMM_FORWARD(kInstantiate, InstantiateWith(graph, options, out, info));
}
Status FaultEngine::Replay(ExecHandle exec, OpTiming* timing) {
  VMM_FORWARD(kReplay, Replay(exec, timing));
}
Status FaultEngine::Update(ExecHandle exec, GraphHandle graph, UpdateResult* result) {
  VMM_FORWARD(kUpdate, Update(exec, graph, result));
}
Status FaultEngine::SetNodeParams(ExecHandle exec, const std::string& node,
                                  const NodeParams& params) {
  VMM_FORWARD(kUpdate, SetNodeParams(exec, node, params));
}
Status FaultEngine::SetNodeEnabled(ExecHandle exec, const std::string& node, bool enabled) {
  VMM_FORWARD(kUpdate, SetNodeEnabled(exec, node, enabled));
}
Status FaultEngine::KernelNodes(GraphHandle graph, std::vector<KernelNodeParams>* out) {
  VMM_FORWARD(kQuery, KernelNodes(graph, out));
}
Status FaultEngine::DescribeGraph(GraphHandle graph, GraphStructure* out) {
  VMM_FORWARD(kQuery, DescribeGraph(graph, out));
}
Status FaultEngine::DestroyGraph(GraphHandle graph) { VMM_FORWARD(kDestroy, DestroyGraph(graph)); }
Status FaultEngine::DestroyExec(ExecHandle exec) { VMM_FORWARD(kDestroy, DestroyExec(exec)); }
Status FaultEngine::CopyToHost(DevicePtr src, uint64_t bytes, void* dst) {
  VMM_FORWARD(kCopy, CopyToHost(src, bytes, dst));
}
Status FaultEngine::Checksum(DevicePtr src, uint64_t count, uint64_t* hash) {
  VMM_FORWARD(kCheck, Checksum(src, count, hash));
}
Status FaultEngine::AllocSnapshot(uint64_t bytes, DataPlace place, SnapshotHandle* out) {
  VMM_FORWARD(kSnapshot, AllocSnapshot(bytes, place, out));
}
Status FaultEngine::FreeSnapshot(const SnapshotHandle& snapshot) {
  VMM_FORWARD(kSnapshot, FreeSnapshot(snapshot));
}
Status FaultEngine::CompareData(DevicePtr a, DataRef b, uint64_t count,
                                const CompareOptions& options, DataCompareResult* out) {
  VMM_FORWARD(kCheck, CompareData(a, b, count, options, out));
}
Status FaultEngine::CompareValue(DevicePtr a, uint32_t pattern, uint64_t count, uint32_t max_report,
                                 DataCompareResult* out) {
  VMM_FORWARD(kCheck, CompareValue(a, pattern, count, max_report, out));
}
Status FaultEngine::CheckMatmul(const MatmulArgs& args, uint32_t max_report,
                                MatmulCheckResult* out) {
  VMM_FORWARD(kCheck, CheckMatmul(args, max_report, out));
}
Status FaultEngine::Synchronize() { VMM_FORWARD(kSynchronize, Synchronize()); }

Status FaultEngine::MemoryInfo(uint64_t* free_bytes, uint64_t* total_bytes) {
  VMM_FORWARD(kMemoryInfo, MemoryInfo(free_bytes, total_bytes));
}
Status FaultEngine::Granularity(const AllocProps& props, GranularityKind kind, uint64_t* bytes) {
  VMM_FORWARD(kProperties, Granularity(props, kind, bytes));
}
Status FaultEngine::AllocProperties(AllocHandle handle, AllocProps* granted) {
  VMM_FORWARD(kProperties, AllocProperties(handle, granted));
}
Status FaultEngine::Export(AllocHandle handle, int* fd) {
  VMM_FORWARD(kExport, Export(handle, fd));
}
Status FaultEngine::Import(int fd, AllocHandle* out) { VMM_FORWARD(kImport, Import(fd, out)); }
// The state read back around a step with expect_error (each mapping's access through the wrapped
// engine's GetAccess, uncounted): one call here.
Status FaultEngine::Inventory(EngineInventory* out) { VMM_FORWARD(kQuery, Inventory(out)); }
Status FaultEngine::Retain(DevicePtr va, AllocHandle* out) {
  VMM_FORWARD(kRetain, Retain(va, out));
}
Status FaultEngine::SameAllocation(AllocHandle a, AllocHandle b, bool* same) {
  VMM_FORWARD(kSameMemory, SameAllocation(a, b, same));
}
Status FaultEngine::AddressRange(DevicePtr va, DevicePtr* base, uint64_t* size) {
  VMM_FORWARD(kAddressRange, AddressRange(va, base, size));
}
Status FaultEngine::ProbeCapability(Capability capability, std::string* why_not) {
  VMM_FORWARD(kProperties, ProbeCapability(capability, why_not));
}

#undef VMM_FORWARD

}  // namespace vmm
