#include "runner/engine/host/host_graph.h"

#include <type_traits>
#include <utility>

#include "kernels/launch_config.h"

namespace vmm::host {
namespace {

// Appends `value` at the next multiple of its size (natural alignment), little-endian.
template <typename T>
void PackArg(std::vector<uint8_t>* bytes, T value) {
  static_assert(std::is_unsigned_v<T>);
  while (bytes->size() % sizeof(T) != 0) bytes->push_back(0);
  for (size_t i = 0; i < sizeof(T); ++i) bytes->push_back(static_cast<uint8_t>(value >> (8 * i)));
}

KernelNodeParams ParamsFor(const char* function, const kernels::LaunchConfig& launch) {
  KernelNodeParams p;
  p.function = function;
  p.grid = launch.grid;
  p.block = launch.block;
  p.shared_bytes = launch.shared_bytes;
  return p;
}

}  // namespace

GraphNode MakeFillNode(DevicePtr dst, uint64_t count, uint64_t seed) {
  GraphNode node;
  node.kind = KernelKind::kFill;
  node.fill = {dst, count, seed};
  node.params = ParamsFor(kernels::kFillKernelName, kernels::FillLaunch(count));
  PackArg<uint64_t>(&node.params.arg_bytes, dst);
  PackArg<uint64_t>(&node.params.arg_bytes, count);
  PackArg<uint64_t>(&node.params.arg_bytes, seed);
  return node;
}

GraphNode MakeMatmulNode(const MatmulArgs& args) {
  GraphNode node;
  node.kind = KernelKind::kMatmul;
  node.matmul = args;
  node.params = ParamsFor(kernels::kMatmulKernelName, kernels::MatmulLaunch(args.m, args.n));
  PackArg<uint64_t>(&node.params.arg_bytes, args.a);
  PackArg<uint64_t>(&node.params.arg_bytes, args.b);
  PackArg<uint64_t>(&node.params.arg_bytes, args.c);
  PackArg<uint32_t>(&node.params.arg_bytes, args.m);
  PackArg<uint32_t>(&node.params.arg_bytes, args.n);
  PackArg<uint32_t>(&node.params.arg_bytes, args.k);
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
