#include "runner/engine/host/host_graph.h"

#include <utility>

#include "runner/engine/kernel_params.h"

namespace vmm::host {

GraphNode MakeFillNode(DevicePtr dst, uint64_t count, uint64_t seed) {
  GraphNode node;
  node.kind = KernelKind::kFill;
  node.fill = {dst, count, seed};
  node.params = FillKernelParams(dst, count, seed);
  return node;
}

GraphNode MakeMatmulNode(const MatmulArgs& args) {
  GraphNode node;
  node.kind = KernelKind::kMatmul;
  node.matmul = args;
  node.params = MatmulKernelParams(args);
  return node;
}

void HostGraph::Append(GraphNode node) {
  node.dependencies.clear();
  if (!nodes.empty()) node.dependencies.push_back(static_cast<uint32_t>(nodes.size() - 1));
  nodes.push_back(std::move(node));
}

std::vector<KernelNodeParams> HostGraph::KernelNodes() const {
  std::vector<KernelNodeParams> out;
  for (const GraphNode& node : nodes)
    if (node.type == NodeType::kKernel) out.push_back(node.params);
  return out;
}

UpdateResult UpdateExec(HostGraph* exec, const HostGraph& graph) {
  UpdateResult result;
  auto refuse = [&result](UpdateCode code, int64_t error_node) {
    result.code = code;
    result.error_node = error_node;
    result.api_error = "cudaErrorGraphExecUpdateFailure";
    return result;
  };
  // Topology first: nodes are paired by their place in the structure before contents are compared.
  bool same_topology = exec->nodes.size() == graph.nodes.size();
  for (size_t i = 0; same_topology && i < graph.nodes.size(); ++i)
    same_topology = exec->nodes[i].dependencies == graph.nodes[i].dependencies;
  if (!same_topology) return refuse(UpdateCode::kErrorTopologyChanged, -1);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (exec->nodes[i].type != graph.nodes[i].type)
      return refuse(UpdateCode::kErrorNodeTypeChanged, static_cast<int64_t>(i));
  }
  exec->nodes = graph.nodes;
  result.code = UpdateCode::kSuccess;
  return result;
}

}  // namespace vmm::host
