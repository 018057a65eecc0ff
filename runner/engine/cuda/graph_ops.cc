#include "runner/engine/cuda/graph_ops.h"

#include <string>

#include "runner/base/format.h"
#include "runner/engine/cuda/cuda_call.h"

namespace vmm::cuda {

StatusOr<std::vector<cudaGraphNode_t>> GraphNodes(cudaGraph_t graph) {
  size_t count = 0;
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphGetNodes(graph, nullptr, &count)));
  std::vector<cudaGraphNode_t> nodes(count);
  if (count == 0) return nodes;
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphGetNodes(graph, nodes.data(), &count)));
  nodes.resize(count);  // on return, count is the number of nodes written
  return nodes;
}

UpdateCode ToUpdateCode(cudaGraphExecUpdateResult result) {
  switch (result) {
    case cudaGraphExecUpdateSuccess:
      return UpdateCode::kSuccess;
    case cudaGraphExecUpdateError:
      return UpdateCode::kError;
    case cudaGraphExecUpdateErrorTopologyChanged:
      return UpdateCode::kErrorTopologyChanged;
    case cudaGraphExecUpdateErrorNodeTypeChanged:
      return UpdateCode::kErrorNodeTypeChanged;
    case cudaGraphExecUpdateErrorFunctionChanged:
      return UpdateCode::kErrorFunctionChanged;
    case cudaGraphExecUpdateErrorParametersChanged:
      return UpdateCode::kErrorParametersChanged;
    case cudaGraphExecUpdateErrorNotSupported:
      return UpdateCode::kErrorNotSupported;
    case cudaGraphExecUpdateErrorUnsupportedFunctionChange:
      return UpdateCode::kErrorUnsupportedFunctionChange;
    case cudaGraphExecUpdateErrorAttributesChanged:
      return UpdateCode::kErrorAttributesChanged;
  }
  return UpdateCode::kError;
}

Status UpdateGraphExec(cudaGraphExec_t exec, cudaGraph_t graph, UpdateResult* result) {
  *result = UpdateResult{};
  cudaGraphExecUpdateResultInfo info = {};
  const cudaError_t err = cudaGraphExecUpdate(exec, graph, &info);
  if (err != cudaSuccess && err != cudaErrorGraphExecUpdateFailure) {
    return CudaStatus(err, "cudaGraphExecUpdate(exec, graph, &info)", __FILE__, __LINE__);
  }
  if (err == cudaErrorGraphExecUpdateFailure) {
    (void)cudaGetLastError();  // a refusal is a result: leave no error state behind
    result->api_error = cudaGetErrorName(err);
  }
  result->code = ToUpdateCode(info.result);
  if (err == cudaSuccess && info.result != cudaGraphExecUpdateSuccess) {
    // Not documented to happen; report what the runtime said rather than guess.
    result->api_error = "cudaSuccess";
  }
  if (info.errorNode != nullptr) {
    StatusOr<std::vector<cudaGraphNode_t>> nodes = GraphNodes(graph);
    if (!nodes.ok()) return nodes.status().WithContext("locating the update's error node");
    for (size_t i = 0; i < nodes->size(); ++i) {
      if ((*nodes)[i] == info.errorNode) result->error_node = static_cast<int64_t>(i);
    }
  }
  return Status::Ok();
}

Status ReadKernelNodes(const KernelRegistry& registry, cudaGraph_t graph,
                       std::vector<KernelNodeParams>* out) {
  out->clear();
  StatusOr<std::vector<cudaGraphNode_t>> nodes = GraphNodes(graph);
  if (!nodes.ok()) return nodes.status();
  for (size_t i = 0; i < nodes->size(); ++i) {
    cudaGraphNode_t node = (*nodes)[i];
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphNodeGetType(node, &type)));
    if (type != cudaGraphNodeTypeKernel) continue;
    // The params (and the argument values kernelParams points to) are owned by the node and valid
    // until it is destroyed or changed: read them before anything else touches the graph.
    cudaKernelNodeParams p = {};
    VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphKernelNodeGetParams(node, &p)));
    const KernelEntry* entry = registry.Find(p.func);
    if (entry == nullptr) {
      return RuntimeError("node " + std::to_string(i) + " runs kernel " +
                          Hex(reinterpret_cast<uintptr_t>(p.func)) +
                          ", which is none of vmm-run's kernels");
    }
    KernelNodeParams k;
    k.function = entry->name;
    k.grid = {p.gridDim.x, p.gridDim.y, p.gridDim.z};
    k.block = {p.blockDim.x, p.blockDim.y, p.blockDim.z};
    k.shared_bytes = p.sharedMemBytes;
    Status s = KernelRegistry::PackArgs(*entry, p.kernelParams, &k.arg_bytes);
    if (!s.ok()) return s.WithContext("node " + std::to_string(i));
    out->push_back(std::move(k));
  }
  return Status::Ok();
}

}  // namespace vmm::cuda
