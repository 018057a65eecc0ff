// The kinds of CUDA graph node vmm-run's captures make, with their report spelling. Shared by the
// plan (which predicts the node a captured step makes, and what instantiate allows), the engines
// (which read the node back) and the report. Plain enum; no engine here.
#pragma once

#include <cstdint>
#include <string>

namespace vmm {

// cudaGraphNodeType, the values a capture in the language can produce.
enum class NodeType : uint8_t {
  kKernel,       // fill, matmul
  kMemset,       // memset (cuMemsetD32Async)
  kMemcpy,       // copy (device to device, or host to device from a snapshot)
  kHost,         // host_func (cudaLaunchHostFunc)
  kEventRecord,  // record_event (cudaEventRecordWithFlags, external)
  kEventWait,    // wait_event (cudaStreamWaitEvent, external)
  kMemAlloc,     // mem_alloc (cudaMallocAsync while capturing)
  kMemFree,      // mem_free (cudaFreeAsync while capturing)
  kGraph,        // child_graph (cudaGraphAddChildGraphNode)
  kConditional,  // if / while (cudaGraphAddNode, cudaGraphNodeTypeConditional): a body graph
  kEmpty,        // never made by a step; reported if a driver adds one
};

// What a conditional node does with its body (cudaGraphConditionalNodeType): if runs it once when
// the condition is not zero; while runs it again and again while the condition is not zero.
enum class ConditionKind : uint8_t { kIf, kWhile };
// "if" | "while": the language's word, and a conditional node's detail in the report.
constexpr const char* ConditionKindName(ConditionKind kind) {
  return kind == ConditionKind::kIf ? "if" : "while";
}

// "kernel", "memset", "memcpy", "host", "event_record", "event_wait", "mem_alloc", "mem_free",
// "graph", "conditional", "empty" (the report spelling).
const char* NodeTypeName(NodeType type);
// Inverse of NodeTypeName; false when `name` is not one of them.
bool ParseNodeType(const std::string& name, NodeType* out);

// Whether cudaGraphNodeSetEnabled accepts the node (kernel, memset and memcpy nodes only).
constexpr bool CanDisable(NodeType type) {
  return type == NodeType::kKernel || type == NodeType::kMemset || type == NodeType::kMemcpy;
}
// Whether a graph instantiated for device launch may hold the node (kernel, memcpy, memset and
// child graph nodes only; cudaGraphInstantiate's documentation).
constexpr bool DeviceLaunchable(NodeType type) {
  return CanDisable(type) || type == NodeType::kGraph;
}
// Graph memory nodes: cudaGraphExecUpdate does not support them, and a graph holding one has at
// most one live instantiation.
constexpr bool IsMemoryNode(NodeType type) {
  return type == NodeType::kMemAlloc || type == NodeType::kMemFree;
}
// Whether a conditional node's body graph may hold the node (driver_types.h,
// cudaConditionalNodeParams: kernel, empty, child graph, memset, memcpy and conditional nodes; not
// host, event or memory nodes).
constexpr bool ConditionalBodyAccepts(NodeType type) {
  return type == NodeType::kKernel || type == NodeType::kMemset || type == NodeType::kMemcpy ||
         type == NodeType::kGraph || type == NodeType::kConditional || type == NodeType::kEmpty;
}

}  // namespace vmm
