// DescribeCudaGraph: a graph's nodes, edges and operands read back from the runtime, and its DOT
// text (from that structure, or from cudaGraphDebugDotPrint).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/graph_ops.h"
#include "runner/engine/graph_structure.h"
#include "runner/engine/kernel_params.h"

namespace vmm::cuda {
namespace {

DevicePtr Va(const void* p) { return static_cast<DevicePtr>(reinterpret_cast<uintptr_t>(p)); }

// The kernel's name and the memory it touches, from its packed arguments (kernel_params.h's
// KernelOperands).
Status KernelNode(const KernelRegistry& registry, cudaGraphNode_t node, GraphNodeInfo* info) {
  cudaKernelNodeParams p = {};
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphKernelNodeGetParams(node, &p)));
  const KernelEntry* entry = registry.Find(p.func);
  if (entry == nullptr) {
    info->detail = "unknown kernel";
    return Status::Ok();
  }
  info->detail = entry->name;
  std::vector<uint8_t> args;
  VMM_RETURN_IF_ERROR(KernelRegistry::PackArgs(*entry, p.kernelParams, &args));
  info->operands = KernelOperands(entry->name, args);
  return Status::Ok();
}

Status MemcpyNode(cudaGraphNode_t node, GraphNodeInfo* info) {
  cudaMemcpy3DParms p = {};
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphMemcpyNodeGetParams(node, &p)));
  bool from_host = p.kind == cudaMemcpyHostToDevice || p.kind == cudaMemcpyHostToHost;
  bool to_host = p.kind == cudaMemcpyDeviceToHost || p.kind == cudaMemcpyHostToHost;
  if (p.kind == cudaMemcpyDefault) {  // the runtime may keep the kind the pointers imply
    auto is_host = [](const void* ptr) {
      cudaPointerAttributes a = {};
      if (cudaPointerGetAttributes(&a, ptr) == cudaSuccess) return a.type == cudaMemoryTypeHost;
      (void)cudaGetLastError();
      return false;
    };
    from_host = is_host(p.srcPtr.ptr);
    to_host = is_host(p.dstPtr.ptr);
  }
  const uint64_t bytes = uint64_t{p.extent.width} * p.extent.height * p.extent.depth;
  info->detail = MemcpyDetail(from_host, to_host);
  // Host memory (a host snapshot) is no device operand.
  if (!from_host) info->operands.push_back({Va(p.srcPtr.ptr), bytes, Access::kRead});
  if (!to_host) info->operands.push_back({Va(p.dstPtr.ptr), bytes, Access::kReadWrite});
  return Status::Ok();
}

Status Describe(const KernelRegistry& registry, cudaGraph_t graph, const NodeNames& names,
                const std::unordered_map<cudaEvent_t, int>& events, const ConditionalBodies& bodies,
                std::vector<GraphNodeInfo>* out) {
  StatusOr<std::vector<cudaGraphNode_t>> all = GraphNodes(graph);
  if (!all.ok()) return all.status();
  const std::vector<cudaGraphNode_t> order = names.DescribeOrder(graph, *all);
  auto index = [&](cudaGraphNode_t node) {
    return static_cast<uint32_t>(std::find(order.begin(), order.end(), node) - order.begin());
  };
  for (cudaGraphNode_t node : order) {
    GraphNodeInfo info;
    if (const std::string* name = names.Find(node)) info.name = *name;
    size_t count = 0;
    VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphNodeGetDependencies(node, nullptr, nullptr, &count)));
    std::vector<cudaGraphNode_t> deps(count);
    if (count > 0) {
      VMM_RETURN_IF_ERROR(
          CUDA_CALL(cudaGraphNodeGetDependencies(node, deps.data(), nullptr, &count)));
    }
    for (size_t i = 0; i < count; ++i) info.dependencies.push_back(index(deps[i]));
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphNodeGetType(node, &type)));
    switch (type) {
      case cudaGraphNodeTypeKernel:
        info.type = NodeType::kKernel;
        VMM_RETURN_IF_ERROR(KernelNode(registry, node, &info));
        break;
      case cudaGraphNodeTypeMemset: {
        info.type = NodeType::kMemset;
        cudaMemsetParams p = {};
        VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphMemsetNodeGetParams(node, &p)));
        info.detail = MemsetDetail(p.value);
        info.operands = {
            {Va(p.dst), uint64_t{p.width} * p.height * p.elementSize, Access::kReadWrite}};
        break;
      }
      case cudaGraphNodeTypeMemcpy:
        info.type = NodeType::kMemcpy;
        VMM_RETURN_IF_ERROR(MemcpyNode(node, &info));
        break;
      case cudaGraphNodeTypeHost:
        info.type = NodeType::kHost;
        break;
      case cudaGraphNodeTypeEventRecord:
      case cudaGraphNodeTypeWaitEvent: {
        const bool record = type == cudaGraphNodeTypeEventRecord;
        info.type = record ? NodeType::kEventRecord : NodeType::kEventWait;
        cudaEvent_t event = nullptr;
        VMM_RETURN_IF_ERROR(record ? CUDA_CALL(cudaGraphEventRecordNodeGetEvent(node, &event))
                                   : CUDA_CALL(cudaGraphEventWaitNodeGetEvent(node, &event)));
        auto it = events.find(event);
        info.detail = EventDetail(it == events.end() ? -1 : it->second);
        break;
      }
      case cudaGraphNodeTypeMemAlloc: {
        info.type = NodeType::kMemAlloc;
        cudaMemAllocNodeParams p = {};
        VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphMemAllocNodeGetParams(node, &p)));
        info.detail = AllocDetail(p.bytesize);
        info.operands = {{Va(p.dptr), p.bytesize, Access::kReadWrite}};
        break;
      }
      case cudaGraphNodeTypeMemFree: {
        info.type = NodeType::kMemFree;
        void* dptr = nullptr;
        VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphMemFreeNodeGetParams(node, &dptr)));
        info.operands = {{Va(dptr), 0, Access::kReadWrite}};
        break;
      }
      case cudaGraphNodeTypeGraph: {
        info.type = NodeType::kGraph;
        cudaGraph_t child = nullptr;
        VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphChildGraphNodeGetGraph(node, &child)));
        VMM_RETURN_IF_ERROR(Describe(registry, child, names, events, bodies, &info.children));
        break;
      }
      case cudaGraphNodeTypeConditional: {
        info.type = NodeType::kConditional;
        auto it = bodies.find(node);
        if (it == bodies.end()) {  // not made by BeginConditional: its body is unknown here
          info.detail = "unknown conditional";
          break;
        }
        info.detail = ConditionKindName(it->second.kind);
        VMM_RETURN_IF_ERROR(
            Describe(registry, it->second.body, names, events, bodies, &info.children));
        break;
      }
      default:  // node types no step of the language makes (external semaphores)
        info.type = NodeType::kEmpty;
        info.detail = "cudaGraphNodeType " + std::to_string(static_cast<int>(type));
        break;
    }
    out->push_back(std::move(info));
  }
  return Status::Ok();
}

}  // namespace

// cudaGraphDebugDotPrint writes a file: a private temporary file, read back and removed.
StatusOr<std::string> DriverDotText(cudaGraph_t graph) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/vmm-run-graph-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return RuntimeError("cannot create a temporary file for the graph's DOT text");
  close(fd);
  Status s = CUDA_CALL(cudaGraphDebugDotPrint(graph, path.c_str(), cudaGraphDebugDotFlagsVerbose));
  std::ostringstream text;
  if (s.ok()) {
    std::ifstream in(path);
    text << in.rdbuf();
  }
  unlink(path.c_str());
  if (!s.ok()) return s;
  return text.str();
}

Status DescribeCudaGraph(const KernelRegistry& registry, cudaGraph_t graph, const NodeNames& names,
                         const std::unordered_map<cudaEvent_t, int>& events,
                         const ConditionalBodies& bodies, bool driver_dot, GraphStructure* out) {
  *out = GraphStructure{};
  VMM_RETURN_IF_ERROR(Describe(registry, graph, names, events, bodies, &out->nodes));
  if (!driver_dot) {  // cudaGraphDebugDotPrint costs ~0.35 ms a graph (a file written and read)
    out->dot = StructureDot(*out);
    return Status::Ok();
  }
  StatusOr<std::string> dot = DriverDotText(graph);
  if (!dot.ok()) return dot.status().WithContext("cudaGraphDebugDotPrint");
  out->dot = std::move(dot).value();
  return Status::Ok();
}

}  // namespace vmm::cuda
