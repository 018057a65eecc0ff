// CudaEngine: instantiation (with its options), replay, whole-graph and per-node updates, kernel
// nodes and structure read back, and destruction of graphs and execs. An exec runs, updates and
// changes its nodes on the device (lane) it was instantiated on (exec_lanes_); a graph's kernels
// are read with the registry of the device it was captured on (graph_lanes_).
#include <algorithm>
#include <string>
#include <utility>

#include "runner/base/format.h"
#include "runner/base/stopwatch.h"
#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/cuda_engine_impl.h"
#include "runner/engine/cuda/graph_ops.h"

namespace vmm::cuda {
namespace {

template <typename T>
T* FindObject(std::map<uint64_t, T>& objects, uint64_t id) {
  auto it = objects.find(id);
  return it == objects.end() ? nullptr : &it->second;
}

Status UnknownHandle(const std::string& what, const char* kind) {
  return RuntimeError(what + ": unknown " + kind +
                      " handle (never created by this engine, or already destroyed)");
}

// Drops the names of `graph`'s nodes and of its child graphs' copies and conditional bodies, and
// those bodies' entries (node handles of a destroyed graph may be reused by the runtime).
void ForgetNames(NodeNames& names, ConditionalBodies& bodies, cudaGraph_t graph) {
  StatusOr<std::vector<cudaGraphNode_t>> nodes = GraphNodes(graph);
  if (nodes.ok()) {
    for (cudaGraphNode_t node : *nodes) {
      cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
      cudaGraph_t child = nullptr;
      if (cudaGraphNodeGetType(node, &type) != cudaSuccess) continue;
      if (type == cudaGraphNodeTypeGraph &&
          cudaGraphChildGraphNodeGetGraph(node, &child) == cudaSuccess) {
        ForgetNames(names, bodies, child);
      } else if (auto it = bodies.find(node); it != bodies.end()) {
        const cudaGraph_t body = it->second.body;
        bodies.erase(it);
        ForgetNames(names, bodies, body);
      }
    }
  }
  (void)cudaGetLastError();
  names.Forget(graph);
}

}  // namespace

// --- Execs ---

Status CudaEngine::InstantiateWith(GraphHandle graph, const InstantiateOptions& options,
                                   ExecHandle* out, InstantiateInfo* info) {
  auto what = [&] { return "Instantiate(graph=" + std::to_string(graph.value) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  Graph* g = FindObject(graphs_, graph.value);
  if (g == nullptr) return UnknownHandle(what(), "graph");
  unsigned long long flags = 0;
  if (options.auto_free_on_launch) flags |= cudaGraphInstantiateFlagAutoFreeOnLaunch;
  if (options.device_launch) flags |= cudaGraphInstantiateFlagDeviceLaunch;
  // What a launch allocates and leaves alive, and what it frees of other graphs' allocations.
  ExecMemory memory;
  memory.graph = graph.value;
  StatusOr<std::vector<cudaGraphNode_t>> nodes = memory_node_graphs_.count(graph.value) != 0
                                                     ? GraphNodes(g->get())
                                                     : std::vector<cudaGraphNode_t>{};
  if (!nodes.ok()) return Annotate(nodes.status(), what);
  for (cudaGraphNode_t node : *nodes) {
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaGraphNodeGetType(node, &type)), what));
    if (type == cudaGraphNodeTypeMemAlloc) {
      cudaMemAllocNodeParams p = {};
      VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaGraphMemAllocNodeGetParams(node, &p)), what));
      memory.allocs.push_back(static_cast<DevicePtr>(reinterpret_cast<uintptr_t>(p.dptr)));
    } else if (type == cudaGraphNodeTypeMemFree) {
      void* p = nullptr;
      VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaGraphMemFreeNodeGetParams(node, &p)), what));
      memory.frees.push_back(static_cast<DevicePtr>(reinterpret_cast<uintptr_t>(p)));
    }
  }
  for (auto f = memory.frees.begin(); f != memory.frees.end();) {  // freed in the same graph
    auto a = std::find(memory.allocs.begin(), memory.allocs.end(), *f);
    if (a == memory.allocs.end()) {
      ++f;
      continue;
    }
    memory.allocs.erase(a);
    f = memory.frees.erase(f);
  }
  Stopwatch watch;
  StatusOr<GraphExec> exec = InstantiateGraph(g->get(), flags);
  const double instantiate_us = watch.ElapsedUs();
  if (!exec.ok()) return Annotate(exec.status(), what);
  double upload_us = -1;
  if (options.upload) {
    Stopwatch upload;
    Enqueuing enqueuing(*lane_);
    VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaGraphUpload(exec->get(), stream())), what));
    enqueuing.Done();
    VMM_RETURN_IF_ERROR(Annotate(SyncStream(), what));
    upload_us = upload.ElapsedUs();
  }
  const uint64_t id = NextId();
  execs_.emplace(id, std::move(exec).value());
  exec_memory_.emplace(id, std::move(memory));
  exec_lanes_[id] = lane_;  // it replays on this device, whatever is selected later
  out->value = id;
  if (info != nullptr) *info = InstantiateInfo{instantiate_us, upload_us, flags};
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
  Enqueuing enqueuing(lane);
  VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaGraphLaunch(e->get(), s)), what));
  const ExecMemory& memory = exec_memory_[exec.value];
  for (DevicePtr p : memory.allocs) live_graph_allocs_[p] = lane.ordinal;
  for (DevicePtr p : memory.frees) live_graph_allocs_.erase(p);
  if (timed) VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaEventRecord(lane.stop.get(), s)), what));
  enqueuing.Done();
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
  return Annotate(UpdateGraphExec(e->get(), g->get(), names_, result), what);
}

Status CudaEngine::ExecNode(ExecHandle exec, const std::string& name, const char* call,
                            cudaGraphExec_t* raw_exec, cudaGraphNode_t* node) {
  auto what = [&] {
    return std::string(call) + "(exec=" + std::to_string(exec.value) + ", node=" + name + ")";
  };
  GraphExec* e = FindObject(execs_, exec.value);
  if (e == nullptr) return UnknownHandle(what(), "exec");
  Graph* g = FindObject(graphs_, exec_memory_[exec.value].graph);
  if (g == nullptr) {
    return RuntimeError(what() +
                        ": the graph the exec was instantiated from is destroyed; CUDA names an "
                        "exec's nodes by that graph's nodes");
  }
  *node = names_.FindNode(g->get(), name);
  if (*node == nullptr)
    return RuntimeError(what() + ": the graph has no node named '" + name + "'");
  *raw_exec = e->get();
  return BindLane(*exec_lanes_[exec.value]);  // the exec's nodes change in its own context
}

Status CudaEngine::SetNodeParams(ExecHandle exec, const std::string& name,
                                 const NodeParams& params) {
  cudaGraphExec_t e = nullptr;
  cudaGraphNode_t node = nullptr;
  VMM_RETURN_IF_ERROR(ExecNode(exec, name, "SetNodeParams", &e, &node));
  return Annotate(SetExecNodeParams(e, node, params),
                  [&] { return "SetNodeParams(" + name + ")"; });
}

Status CudaEngine::SetNodeEnabled(ExecHandle exec, const std::string& name, bool enabled) {
  cudaGraphExec_t e = nullptr;
  cudaGraphNode_t node = nullptr;
  VMM_RETURN_IF_ERROR(ExecNode(exec, name, "SetNodeEnabled", &e, &node));
  return Annotate(CUDA_CALL(cudaGraphNodeSetEnabled(e, node, enabled ? 1 : 0)),
                  [&] { return "SetNodeEnabled(" + name + ")"; });
}

Status CudaEngine::KernelNodes(GraphHandle graph, std::vector<KernelNodeParams>* out) {
  auto what = [&] { return "KernelNodes(graph=" + std::to_string(graph.value) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  Graph* g = FindObject(graphs_, graph.value);
  if (g == nullptr) return UnknownHandle(what(), "graph");
  const Lane& lane = *graph_lanes_[graph.value];  // its kernels are that device's functions
  return Annotate(ReadKernelNodes(lane.kernels, g->get(), out), what);
}

Status CudaEngine::DescribeGraph(GraphHandle graph, GraphStructure* out) {
  auto what = [&] { return "DescribeGraph(graph=" + std::to_string(graph.value) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  Graph* g = FindObject(graphs_, graph.value);
  if (g == nullptr) return UnknownHandle(what(), "graph");
  const Lane& lane = *graph_lanes_[graph.value];  // its kernels are that device's functions
  return Annotate(DescribeCudaGraph(lane.kernels, g->get(), names_, event_numbers_,
                                    conditional_bodies_, driver_dot_, out),
                  what);
}

Status CudaEngine::DestroyGraph(GraphHandle graph) {
  VMM_RETURN_IF_ERROR(Bind());
  auto it = graphs_.find(graph.value);
  if (it == graphs_.end()) {
    return UnknownHandle("DestroyGraph(graph=" + std::to_string(graph.value) + ")", "graph");
  }
  ForgetNames(names_, conditional_bodies_, it->second.get());
  graphs_.erase(it);
  graph_lanes_.erase(graph.value);
  memory_node_graphs_.erase(graph.value);
  return Status::Ok();
}

Status CudaEngine::DestroyExec(ExecHandle exec) {
  VMM_RETURN_IF_ERROR(Bind());
  if (execs_.erase(exec.value) == 0) {
    return UnknownHandle("DestroyExec(exec=" + std::to_string(exec.value) + ")", "exec");
  }
  exec_memory_.erase(exec.value);
  exec_lanes_.erase(exec.value);
  return Status::Ok();
}

}  // namespace vmm::cuda
