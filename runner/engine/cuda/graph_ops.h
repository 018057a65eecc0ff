// Graph queries and updates behind Engine::Update and Engine::KernelNodes, as free functions on
// raw runtime handles (the engine owns the handles; these only borrow them for the call).
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "runner/base/status.h"
#include "runner/engine/cuda/kernel_registry.h"
#include "runner/engine/engine.h"

namespace vmm::cuda {

// The nodes of `graph` in cudaGraphGetNodes order (creation order: for a captured graph, the order
// of the captured launches).
StatusOr<std::vector<cudaGraphNode_t>> GraphNodes(cudaGraph_t graph);

// The UpdateCode for a cudaGraphExecUpdateResult value (kError for values this build does not
// know).
UpdateCode ToUpdateCode(cudaGraphExecUpdateResult result);

// cudaGraphExecUpdate(exec, graph). A refused update (cudaErrorGraphExecUpdateFailure) is a result,
// not an error: the Status is ok, result->code says why, result->api_error is
// "cudaErrorGraphExecUpdateFailure" and result->error_node is the index of the blocking node of
// `graph` in GraphNodes order (-1 when the runtime names none, e.g. a changed node count). Any
// other failure of the call is an error Status. The exec is unchanged when the update is refused.
Status UpdateGraphExec(cudaGraphExec_t exec, cudaGraph_t graph, UpdateResult* result);

// The kernel nodes of `graph` in GraphNodes order (other node types are skipped). Fails when a
// kernel node runs a kernel the registry does not know, or its arguments cannot be read.
Status ReadKernelNodes(const KernelRegistry& registry, cudaGraph_t graph,
                       std::vector<KernelNodeParams>* out);

}  // namespace vmm::cuda
