// Graphs of the host backend: what stream capture records, and the cudaGraphExecUpdate rules.
//
// Capture on the engine's single stream records one kernel node per Fill/Matmul, each depending on
// the node before it (a chain), exactly the graph cudaStreamBeginCapture/EndCapture builds on one
// stream. Every node carries the KernelNodeParams the CUDA backend reads back from the driver:
// kernel name and launch geometry from kernels/launch_config.h, and the kernel's arguments packed
// as the CUDA ABI lays them out (little-endian, naturally aligned, no tail padding):
//   vmm_matmul_f32(const float* a, const float* b, float* c, uint32 m, uint32 n, uint32 k) -> 36 B
//   vmm_fill_f32(float* dst, uint64 count, uint64 seed)                                    -> 24 B
#pragma once

#include <cstdint>
#include <vector>

#include "runner/engine/engine.h"

namespace vmm::host {

// Graph node types. Capture here only ever creates kernel nodes; the type is kept so that the
// update rule "a node may not change type" is stated in code, not assumed.
enum class NodeType { kKernel };

enum class KernelKind { kFill, kMatmul };

struct FillArgs {
  DevicePtr dst = 0;
  uint64_t count = 0;
  uint64_t seed = 0;
};

struct GraphNode {
  NodeType type = NodeType::kKernel;
  std::vector<uint32_t> dependencies;  // indices of the nodes this one waits for
  KernelKind kind = KernelKind::kFill;
  FillArgs fill;      // valid when kind == kFill
  MatmulArgs matmul;  // valid when kind == kMatmul
  KernelNodeParams params;
};

// The node a captured launch records (dependencies left empty; HostGraph::Append sets them).
GraphNode MakeFillNode(DevicePtr dst, uint64_t count, uint64_t seed);
GraphNode MakeMatmulNode(const MatmulArgs& args);

// A captured graph, and (with the same shape) an executable graph: Instantiate copies the nodes,
// so an exec is independent of the graph it came from.
struct HostGraph {
  std::vector<GraphNode> nodes;

  // Appends `node` after the current last node (stream order).
  void Append(GraphNode node);
  std::vector<KernelNodeParams> KernelNodes() const;
};

// cudaGraphExecUpdate(exec, graph) under the CUDA programming guide's rules, as far as they can
// arise for graphs captured on one stream with kernel nodes only:
//   - node count or any node's dependencies differ -> kErrorTopologyChanged, error_node = -1:
//     the driver names no node for a topology change (an H200 with driver 580.159 returned a null
//     errorNode whether nodes were added or removed);
//   - a node's type differs                        -> kErrorNodeTypeChanged, error_node = index;
//   - otherwise kSuccess: the exec takes every node of `graph` (arguments, grid, block, shared
//     memory and function). Changing the function is allowed because both kernels live in one
//     module (the guide forbids only a change of owning context/module, to or from a
//     dynamic-parallelism kernel, or of the cooperative attribute, none of which exist here).
// A refused update leaves `exec` unchanged and sets api_error to "cudaErrorGraphExecUpdateFailure".
UpdateResult UpdateExec(HostGraph* exec, const HostGraph& graph);

}  // namespace vmm::host
