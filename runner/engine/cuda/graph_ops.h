// Graph queries and updates behind the engine's graph methods, as free functions on raw runtime
// handles (the engine owns the handles; these only borrow them for the call).
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "runner/base/status.h"
#include "runner/engine/cuda/kernel_registry.h"
#include "runner/engine/engine.h"

namespace vmm::cuda {

// The conditional nodes the engine made (BeginConditional), by node: what kind and the body graph
// the node owns (cudaConditionalNodeParams::phGraph_out[0]; the runtime has no call that reads a
// conditional node's parameters back).
struct ConditionalBody {
  ConditionKind kind = ConditionKind::kIf;
  cudaGraph_t body = nullptr;
};
using ConditionalBodies = std::unordered_map<cudaGraphNode_t, ConditionalBody>;

// The names the engine gave graph nodes (NameCapturedNode: the step that made each), and per graph
// the order they were named in (capture order). A child graph node's copy of its graph gets the
// names of the graph it copied (cudaGraphNodeFindInClone).
class NodeNames {
 public:
  void Add(cudaGraph_t graph, cudaGraphNode_t node, std::string name);
  // The name of `node`, or nullptr.
  const std::string* Find(cudaGraphNode_t node) const;
  // The node of `graph` named `name`, or nullptr.
  cudaGraphNode_t FindNode(cudaGraph_t graph, const std::string& name) const;
  // The named nodes of `graph` in naming order (empty when none).
  const std::vector<cudaGraphNode_t>& Order(cudaGraph_t graph) const;
  // The order a graph's nodes are described in: its named nodes in naming order, then the rest of
  // `all` (its cudaGraphGetNodes list) in that list's order.
  std::vector<cudaGraphNode_t> DescribeOrder(cudaGraph_t graph,
                                             const std::vector<cudaGraphNode_t>& all) const;
  // Gives `clone` (a child graph node's copy of `original`) the names of `original`'s nodes, every
  // node in `original`'s describe order (an unnamed one as ""), so that the copy is described as
  // the original is; and likewise all the way down the copies of child graph nodes' graphs. A
  // node's copy is found with cudaGraphNodeFindInClone, or where the runtime does not answer that
  // for a nested copy, at the same index of cudaGraphGetNodes. (A graph with conditional nodes is
  // never copied: CUDA refuses to embed one, and so does the validator.)
  Status CopyToClone(cudaGraph_t original, cudaGraph_t clone);
  // Drops the names of `graph`'s nodes (before the graph is destroyed: handles may be reused).
  void Forget(cudaGraph_t graph);

 private:
  std::unordered_map<cudaGraphNode_t, std::string> names_;
  std::unordered_map<cudaGraph_t, std::vector<cudaGraphNode_t>> order_;
};

// The dependency set of the capture on `stream` (the nodes the next captured call will depend
// on) and the graph being built; an error when the stream's capture is not active.
Status CaptureInfo(cudaStream_t stream, cudaGraph_t* graph, const cudaGraphNode_t** deps,
                   size_t* count);

// The nodes of `graph` in cudaGraphGetNodes order.
StatusOr<std::vector<cudaGraphNode_t>> GraphNodes(cudaGraph_t graph);

// The UpdateCode for a cudaGraphExecUpdateResult value (kError for values this build does not
// know).
UpdateCode ToUpdateCode(cudaGraphExecUpdateResult result);

// cudaGraphExecUpdate(exec, graph). A refused update (cudaErrorGraphExecUpdateFailure) is a result,
// not an error: the Status is ok, result->code says why, result->api_error is
// "cudaErrorGraphExecUpdateFailure" and result->error_node / error_from_node name the blocking
// node and dependency of `graph` ("" when the runtime names none, e.g. a changed node count;
// "(unnamed node)" for a node no step named). Any other failure of the call is an error Status. The
// exec is unchanged when the update is refused.
Status UpdateGraphExec(cudaGraphExec_t exec, cudaGraph_t graph, const NodeNames& names,
                       UpdateResult* result);

// The kernel nodes of `graph` in GraphNodes order (other node types are skipped). Fails when a
// kernel node runs a kernel the registry does not know, or its arguments cannot be read.
Status ReadKernelNodes(const KernelRegistry& registry, cudaGraph_t graph,
                       std::vector<KernelNodeParams>* out);

// The driver's verbose DOT text of `graph` (cudaGraphDebugDotPrint through a private temporary
// file; about 0.35 ms a small graph on an H200).
StatusOr<std::string> DriverDotText(cudaGraph_t graph);

// The structure of `graph` read back from the runtime: named nodes in naming order, then the
// others; each node's type, detail (graph_structure.h's words), operands and dependencies; child
// graphs and conditional bodies recursively; the DOT text, from that structure (StructureDot, as
// the host twin writes it) or with `driver_dot` from cudaGraphDebugDotPrint. `events` maps the
// engine's events to their numbers, `bodies` its conditional nodes to their bodies.
Status DescribeCudaGraph(const KernelRegistry& registry, cudaGraph_t graph, const NodeNames& names,
                         const std::unordered_map<cudaEvent_t, int>& events,
                         const ConditionalBodies& bodies, bool driver_dot, GraphStructure* out);

// A kernel's call from its KernelNodeParams as the runtime takes it (cudaLaunchKernel,
// cudaGraphExecKernelNodeSetParams): its row's symbol, the geometry, and one pointer per parameter
// into the call's own copy of the packed bytes (so a call is filled in place, never copied).
struct PackedKernelCall {
  const void* symbol = nullptr;
  dim3 grid, block;
  uint32_t shared_bytes = 0;
  alignas(8) uint8_t bytes[64] = {};
  void* args[kernels::kMaxKernelArgs] = {};
};
// Fills `out` from `params`; false when the function has no row of kernels/graph_kernels.h or its
// arguments are not the row's length.
bool PackKernelCall(const KernelNodeParams& params, PackedKernelCall* out);

// Per-node updates of an exec: `node` is a node of the graph the exec was instantiated from.
// Kernel nodes get their kernel's packed arguments and geometry from its row (FillKernelParams,
// MatmulKernelParams: cudaGraphExecKernelNodeSetParams), memset nodes a 1-D memset of 32-bit words
// (cudaGraphExecMemsetNodeSetParams), memcpy nodes a device-to-device 1-D copy
// (cudaGraphExecMemcpyNodeSetParams1D).
Status SetExecNodeParams(cudaGraphExec_t exec, cudaGraphNode_t node, const NodeParams& params);

}  // namespace vmm::cuda
