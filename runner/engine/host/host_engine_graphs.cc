// HostEngine: capture, lanes, graph nodes, instantiate, replay, update, per-node updates, graph
// memory and structure (host_graph.h and host_graph_memory.h hold the rules).
#include <cstring>

#include "runner/base/format.h"
#include "runner/base/stopwatch.h"
#include "runner/engine/host/host_engine_impl.h"
#include "runner/engine/kernel_params.h"

namespace vmm::host {
namespace {

// cudaGraphInstantiateFlags values (driver_types.h), so the report says the same on both backends.
constexpr unsigned long long kAutoFreeOnLaunch = 1;
constexpr unsigned long long kDeviceLaunch = 4;

}  // namespace

const HostGraph* HostEngine::FindGraph(GraphHandle graph) const {
  auto it = graphs_.find(graph.value);
  return it == graphs_.end() ? nullptr : &it->second;
}
Status HostEngine::UnknownGraph(const char* function, GraphHandle graph) {
  return CudaError(function, kInvalidValue, "unknown or destroyed graph " + Hex(graph.value));
}
Status HostEngine::UnknownExec(const char* function, ExecHandle exec) {
  return CudaError(function, kInvalidValue, "unknown or destroyed exec " + Hex(exec.value));
}

Status HostEngine::NeedCapture(const char* function) const {
  if (capturing_) return Status::Ok();
  return CudaError(function, "CUDA_ERROR_ILLEGAL_STATE", "the stream is not capturing");
}

void HostEngine::HoldAllocations(const HostGraph& graph, bool hold) {
  for (const GraphNode& node : graph.nodes) {
    if (node.type != NodeType::kMemAlloc) continue;
    if (hold) {
      pool_.Hold(node.ptr);
    } else {
      pool_.Drop(node.ptr);
    }
  }
}

Status HostEngine::BeginCapture() {
  VMM_RETURN_IF_ERROR(kernels_.Poisoned());
  if (capturing_) {
    return CudaError("cuStreamBeginCapture", "CUDA_ERROR_ILLEGAL_STATE",
                     "the stream is already capturing");
  }
  capturing_ = true;
  invalidated_by_.clear();
  capture_.emplace();
  capture_allocs_.clear();
  return Status::Ok();
}

Status HostEngine::EndCapture(GraphHandle* out) {
  if (!capturing_)
    return CudaError("cuStreamEndCapture", "CUDA_ERROR_ILLEGAL_STATE",
                     "the stream is not capturing");
  capturing_ = false;
  HostGraph graph;
  Status s = invalidated_by_.empty()
                 ? capture_->Finish(&graph)
                 : CudaError("cuStreamEndCapture", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
                             "the capture was invalidated by " + invalidated_by_);
  capture_.reset();
  if (!s.ok()) {
    for (DevicePtr ptr : capture_allocs_) pool_.Drop(ptr);  // no graph holds them
    return s;
  }
  const uint64_t id = ids_.Next();
  graphs_.emplace(id, std::move(graph));
  out->value = id;
  return Status::Ok();
}

Status HostEngine::CaptureLane(int lane) {
  VMM_RETURN_IF_ERROR(NeedCapture("cuStreamGetCaptureInfo"));
  return capture_->SetLane(lane);
}
Status HostEngine::ForkLane(int from, int to) {
  VMM_RETURN_IF_ERROR(NeedCapture("cuStreamWaitEvent"));
  return capture_->Fork(from, to);
}
Status HostEngine::JoinLane(int from, int into) {
  VMM_RETURN_IF_ERROR(NeedCapture("cuStreamWaitEvent"));
  return capture_->Join(from, into);
}
Status HostEngine::NameCapturedNode(const std::string& name) {
  VMM_RETURN_IF_ERROR(NeedCapture("cuStreamGetCaptureInfo"));
  return capture_->NameLast(name);
}

Status HostEngine::RecordEvent(int event) {
  VMM_RETURN_IF_ERROR(NeedCapture("cuEventRecordWithFlags"));
  GraphNode node = MakeNode(NodeType::kEventRecord);
  node.event = event;
  return capture_->Add(std::move(node));
}

Status HostEngine::WaitEvent(int event) {
  VMM_RETURN_IF_ERROR(NeedCapture("cuStreamWaitEvent"));
  GraphNode node = MakeNode(NodeType::kEventWait);
  node.event = event;
  return capture_->Add(std::move(node));
}

Status HostEngine::GraphAlloc(uint64_t bytes, DevicePtr* ptr) {
  VMM_RETURN_IF_ERROR(NeedCapture("cuMemAllocAsync"));
  if (bytes == 0) return CudaError("cuMemAllocAsync", kInvalidValue, "zero bytes");
  VMM_RETURN_IF_ERROR(pool_.Reserve(bytes, current_, ptr));  // on the capturing device
  capture_allocs_.push_back(*ptr);
  GraphNode node = MakeNode(NodeType::kMemAlloc);
  node.ptr = *ptr;
  node.count = bytes;
  return capture_->Add(std::move(node));
}

Status HostEngine::GraphFree(DevicePtr ptr) {
  if (!capturing_) return pool_.Free(ptr, "cuMemFreeAsync");
  GraphNode node = MakeNode(NodeType::kMemFree);
  node.ptr = ptr;
  return capture_->Add(std::move(node));
}

Status HostEngine::CaptureChildGraph(GraphHandle child) {
  VMM_RETURN_IF_ERROR(NeedCapture("cuGraphAddChildGraphNode"));
  const HostGraph* g = FindGraph(child);
  if (g == nullptr) return UnknownGraph("cuGraphAddChildGraphNode", child);
  if (g->HasMemoryNodes()) {
    return CudaError("cuGraphAddChildGraphNode", "CUDA_ERROR_NOT_SUPPORTED",
                     "a graph with memory nodes can be a child only by moving it");
  }
  if (g->HasConditionalNodes()) {
    return CudaError("cuGraphAddChildGraphNode", kInvalidValue,
                     "a graph with conditional nodes cannot be a child graph");
  }
  GraphNode node = MakeNode(NodeType::kGraph);
  node.child = std::make_shared<const HostGraph>(*g);
  return capture_->Add(std::move(node));
}

Status HostEngine::GraphMemory(GraphMemoryUsage* out) {
  VMM_RETURN_IF_ERROR(SyncPoint("cuDeviceGetGraphMemAttribute"));
  *out = pool_.Usage(current_);
  return Status::Ok();
}

Status HostEngine::TrimGraphMemory() {
  VMM_RETURN_IF_ERROR(SyncPoint("cuDeviceGraphMemTrim"));
  pool_.Trim(current_);
  return Status::Ok();
}

Status HostEngine::CheckMemsetNodes(const char* function, const HostGraph& graph) const {
  for (const GraphNode& node : graph.nodes) {
    // The graph's own memory exists when a replay reaches its alloc node (the driver's business);
    // an address that lies in another graph's memory, or in nothing, is checked.
    if (node.type == NodeType::kMemset && !graph.Allocates(node.dst)) {
      Status s = data_.CheckRef("memset node '" + node.name + "'", kInvalidValue, "dst",
                                DataRef::Device(node.dst), uint64_t{node.count} * 4,
                                Access::kReadWrite, current_);
      // "memset node 'x': CUDA_ERROR_...: why" becomes "<function>: CUDA_ERROR_...: node 'x': why".
      if (!s.ok()) {
        const std::string m = s.message();
        const size_t why = m.find(kInvalidValue);
        return CudaError(
            function, kInvalidValue,
            "memset node '" + node.name + "': " +
                (why == std::string::npos ? m : m.substr(why + std::strlen(kInvalidValue) + 2)));
      }
    }
    // Child graphs and conditional bodies alike (the H200 refused a while body's memset).
    if (node.child != nullptr) VMM_RETURN_IF_ERROR(CheckMemsetNodes(function, *node.child));
  }
  return Status::Ok();
}

Status HostEngine::InstantiateWith(GraphHandle graph, const InstantiateOptions& options,
                                   ExecHandle* out, InstantiateInfo* info) {
  const char* fn = "cuGraphInstantiateWithFlags";
  Stopwatch watch;
  const HostGraph* g = FindGraph(graph);
  if (g == nullptr) return UnknownGraph(fn, graph);
  if (options.device_launch && options.auto_free_on_launch) {
    return CudaError(fn, kInvalidValue, "device launch excludes auto-free-on-launch");
  }
  if (options.device_launch) {
    for (const GraphNode& node : g->nodes) {
      if (!DeviceLaunchable(node.type) || node.HostCopy()) {
        return CudaError(fn, kInvalidValue,
                         "node '" + node.name + "' cannot be in a graph for device launch");
      }
    }
  }
  if (g->HasMemoryNodes() || g->HasConditionalNodes()) {
    for (const auto& [id, exec] : execs_) {
      if (exec.from == graph.value) {
        return CudaError(fn, kInvalidValue,
                         std::string("a graph with ") +
                             (g->HasMemoryNodes() ? "memory" : "conditional") +
                             " nodes has one executable graph at a time");
      }
    }
  }
  // cudaGraphInstantiate checks every memset node's destination: on the H200 it refused
  // (cudaErrorInvalidValue) one without read_write access for the device, mapped or not
  // (tools/twin_fidelity_probe.cc). Child graphs and conditional bodies are checked alike.
  VMM_RETURN_IF_ERROR(CheckMemsetNodes(fn, *g));
  const uint64_t id = ids_.Next();
  // A copy: the exec outlives changes to (and destruction of) the graph.
  // It belongs to the device it was instantiated on: its replays run there.
  Exec& exec = execs_.emplace(id, Exec{*g, graph.value, options.auto_free_on_launch, current_})
                   .first->second;
  HoldAllocations(exec.graph, true);
  out->value = id;
  if (info != nullptr) {
    info->instantiate_us = watch.ElapsedUs();
    info->flags = (options.auto_free_on_launch ? kAutoFreeOnLaunch : 0) |
                  (options.device_launch ? kDeviceLaunch : 0);
    info->upload_us = -1;
    if (options.upload) {  // nothing to move to a device here: the twin uploads instantly
      Stopwatch upload;
      info->upload_us = upload.ElapsedUs();
    }
  }
  return Status::Ok();
}

Status HostEngine::RunGraph(const HostGraph& graph, const Exec* exec) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {  // creation order is a topological order
    Status s = Run(graph.nodes[i], exec);
    if (!s.ok()) return s.WithContext("node " + std::to_string(i));
  }
  return Status::Ok();
}

Status HostEngine::Replay(ExecHandle exec, OpTiming* timing) {
  if (timing != nullptr) timing->gpu_us = -1;
  VMM_RETURN_IF_ERROR(SyncPoint("cuGraphLaunch"));
  VMM_RETURN_IF_ERROR(kernels_.Ordered());
  auto it = execs_.find(exec.value);
  if (it == execs_.end()) return UnknownExec("cuGraphLaunch", exec);
  Stopwatch watch;
  VMM_RETURN_IF_ERROR(RunGraph(it->second.graph, &it->second).WithContext("cuGraphLaunch"));
  if (timing != nullptr) timing->gpu_us = watch.ElapsedUs();
  return Status::Ok();
}

Status HostEngine::Update(ExecHandle exec, GraphHandle graph, UpdateResult* result) {
  auto it = execs_.find(exec.value);
  if (it == execs_.end()) return UnknownExec("cuGraphExecUpdate", exec);
  const HostGraph* g = FindGraph(graph);
  if (g == nullptr) return UnknownGraph("cuGraphExecUpdate", graph);
  const int device = it->second.device;
  *result = UpdateExec(&it->second.graph, *g, [&](const GraphNode& node) {
    return g->Allocates(node.dst) ||
           data_
               .CheckRef("cuGraphExecUpdate", kInvalidValue, "dst", DataRef::Device(node.dst),
                         uint64_t{node.count} * 4, Access::kReadWrite, device)
               .ok();
  });
  return Status::Ok();
}

Status HostEngine::SetNodeParams(ExecHandle exec, const std::string& name,
                                 const NodeParams& params) {
  auto it = execs_.find(exec.value);
  if (it == execs_.end()) return UnknownExec("cuGraphExecNodeSetParams", exec);
  const char* fn = params.kind == NodeParams::Kind::kMemset ? "cuGraphExecMemsetNodeSetParams"
                   : params.kind == NodeParams::Kind::kCopy ? "cuGraphExecMemcpyNodeSetParams"
                                                            : "cuGraphExecKernelNodeSetParams";
  if (graphs_.count(it->second.from) == 0) {
    return CudaError(
        fn, kInvalidValue,
        "the graph the exec was instantiated from is destroyed: its node '" + name + "' is gone");
  }
  HostGraph& graph = it->second.graph;
  const int index = graph.Find(name);
  if (index < 0) return CudaError(fn, kInvalidValue, "the exec has no node '" + name + "'");
  GraphNode& node = graph.nodes[index];
  GraphNode next;
  switch (params.kind) {
    case NodeParams::Kind::kFill:
      next = MakeKernelNode(FillKernelParams(params.dst, params.count, params.seed));
      break;
    case NodeParams::Kind::kMatmul:
      next = MakeKernelNode(MatmulKernelParams(params.matmul));
      break;
    case NodeParams::Kind::kMemset:
      // As at instantiate: the H200 refused a destination without read_write access.
      VMM_RETURN_IF_ERROR(data_.CheckRef(fn, kInvalidValue, "dst", DataRef::Device(params.dst),
                                         uint64_t{params.count} * 4, Access::kReadWrite,
                                         it->second.device));
      next = MakeMemsetNode(params.dst, params.count, params.pattern);
      break;
    case NodeParams::Kind::kCopy:
      if (node.HostCopy()) {
        return CudaError(fn, kInvalidValue, "node '" + name + "' copies host memory");
      }
      next = MakeCopyNode(params.dst, params.src, params.count);
      break;
  }
  if (next.type != node.type) {
    return CudaError(fn, kInvalidValue,
                     "node '" + name + "' is a " + NodeTypeName(node.type) + " node");
  }
  next.name = std::move(node.name);
  next.dependencies = std::move(node.dependencies);
  next.enabled = node.enabled;
  node = std::move(next);
  return Status::Ok();
}

Status HostEngine::SetNodeEnabled(ExecHandle exec, const std::string& name, bool enabled) {
  const char* fn = "cuGraphNodeSetEnabled";
  auto it = execs_.find(exec.value);
  if (it == execs_.end()) return UnknownExec(fn, exec);
  if (graphs_.count(it->second.from) == 0) {
    return CudaError(
        fn, kInvalidValue,
        "the graph the exec was instantiated from is destroyed: its node '" + name + "' is gone");
  }
  const int index = it->second.graph.Find(name);
  if (index < 0) return CudaError(fn, kInvalidValue, "the exec has no node '" + name + "'");
  GraphNode& node = it->second.graph.nodes[index];
  if (!CanDisable(node.type)) {
    return CudaError(fn, kInvalidValue,
                     "node '" + name + "' is a " + NodeTypeName(node.type) +
                         " node (only kernel, memset and memcpy nodes can be disabled)");
  }
  node.enabled = enabled;
  return Status::Ok();
}

Status HostEngine::KernelNodes(GraphHandle graph, std::vector<KernelNodeParams>* out) {
  const HostGraph* g = FindGraph(graph);
  if (g == nullptr) return UnknownGraph("cuGraphGetNodes", graph);
  *out = g->KernelNodes();
  return Status::Ok();
}

Status HostEngine::DescribeGraph(GraphHandle graph, GraphStructure* out) {
  const HostGraph* g = FindGraph(graph);
  if (g == nullptr) return UnknownGraph("cuGraphGetNodes", graph);
  *out = g->Describe();
  return Status::Ok();
}

Status HostEngine::DestroyGraph(GraphHandle graph) {
  auto it = graphs_.find(graph.value);
  if (it == graphs_.end()) return UnknownGraph("cuGraphDestroy", graph);
  HoldAllocations(it->second, false);
  graphs_.erase(it);
  return Status::Ok();
}

Status HostEngine::DestroyExec(ExecHandle exec) {
  auto it = execs_.find(exec.value);
  if (it == execs_.end()) return UnknownExec("cuGraphExecDestroy", exec);
  HoldAllocations(it->second.graph, false);
  execs_.erase(it);
  return Status::Ok();
}

}  // namespace vmm::host
