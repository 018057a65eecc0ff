#include "runner/engine/cuda/graph_ops.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/graph_kernels.h"
#include "runner/base/format.h"
#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/kernel_params.h"

namespace vmm::cuda {

void NodeNames::Add(cudaGraph_t graph, cudaGraphNode_t node, std::string name) {
  names_[node] = std::move(name);
  order_[graph].push_back(node);
}

const std::string* NodeNames::Find(cudaGraphNode_t node) const {
  auto it = names_.find(node);
  return it == names_.end() ? nullptr : &it->second;
}

cudaGraphNode_t NodeNames::FindNode(cudaGraph_t graph, const std::string& name) const {
  for (cudaGraphNode_t node : Order(graph)) {
    const std::string* n = Find(node);
    if (n != nullptr && *n == name) return node;
  }
  return nullptr;
}

const std::vector<cudaGraphNode_t>& NodeNames::Order(cudaGraph_t graph) const {
  static const std::vector<cudaGraphNode_t> kNone;
  auto it = order_.find(graph);
  return it == order_.end() ? kNone : it->second;
}

std::vector<cudaGraphNode_t> NodeNames::DescribeOrder(
    cudaGraph_t graph, const std::vector<cudaGraphNode_t>& all) const {
  std::vector<cudaGraphNode_t> order;
  for (cudaGraphNode_t node : Order(graph))
    if (std::find(all.begin(), all.end(), node) != all.end()) order.push_back(node);
  for (cudaGraphNode_t node : all)
    if (std::find(order.begin(), order.end(), node) == order.end()) order.push_back(node);
  return order;
}

namespace {

// The graph a child graph node holds, or nullptr for every other node.
Status ChildGraphOf(cudaGraphNode_t node, cudaGraph_t* out) {
  *out = nullptr;
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphNodeGetType(node, &type)));
  if (type != cudaGraphNodeTypeGraph) return Status::Ok();
  return CUDA_CALL(cudaGraphChildGraphNodeGetGraph(node, out));
}

}  // namespace

Status NodeNames::CopyToClone(cudaGraph_t original, cudaGraph_t clone) {
  StatusOr<std::vector<cudaGraphNode_t>> originals = GraphNodes(original);
  if (!originals.ok()) return originals.status();
  StatusOr<std::vector<cudaGraphNode_t>> copies = GraphNodes(clone);
  if (!copies.ok()) return copies.status();
  if (originals->size() != copies->size()) {
    return RuntimeError("a graph's copy has " + std::to_string(copies->size()) +
                        " nodes where the original has " + std::to_string(originals->size()));
  }
  for (cudaGraphNode_t node : DescribeOrder(original, *originals)) {
    cudaGraphNode_t copy = nullptr;
    if (cudaGraphNodeFindInClone(&copy, node, clone) != cudaSuccess || copy == nullptr) {
      (void)cudaGetLastError();
      copy = (*copies)[std::find(originals->begin(), originals->end(), node) - originals->begin()];
    }
    const std::string* name = Find(node);
    Add(clone, copy, name != nullptr ? *name : std::string());
    cudaGraph_t child = nullptr, copied_child = nullptr;
    VMM_RETURN_IF_ERROR(ChildGraphOf(node, &child));
    if (child == nullptr) continue;
    VMM_RETURN_IF_ERROR(ChildGraphOf(copy, &copied_child));
    if (copied_child == nullptr) return RuntimeError("a child graph node's copy holds no graph");
    VMM_RETURN_IF_ERROR(CopyToClone(child, copied_child));
  }
  return Status::Ok();
}

void NodeNames::Forget(cudaGraph_t graph) {
  auto it = order_.find(graph);
  if (it == order_.end()) return;
  for (cudaGraphNode_t node : it->second) names_.erase(node);
  order_.erase(it);
}

// The dependency set of the capture on `stream` (the nodes the next captured call will depend
// on) and the graph being built.
Status CaptureInfo(cudaStream_t stream, cudaGraph_t* graph, const cudaGraphNode_t** deps,
                   size_t* count) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  VMM_RETURN_IF_ERROR(
      CUDA_CALL(cudaStreamGetCaptureInfo(stream, &status, &id, graph, deps, nullptr, count)));
  if (status != cudaStreamCaptureStatusActive) {
    return RuntimeError("the capture on this stream is not active (status " +
                        std::to_string(static_cast<int>(status)) + ")");
  }
  return Status::Ok();
}

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

Status UpdateGraphExec(cudaGraphExec_t exec, cudaGraph_t graph, const NodeNames& names,
                       UpdateResult* result) {
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
  auto name = [&](cudaGraphNode_t node) -> std::string {
    if (node == nullptr) return "";
    const std::string* n = names.Find(node);
    return n != nullptr ? *n : "(unnamed node)";
  };
  result->error_node = name(info.errorNode);
  result->error_from_node = name(info.errorFromNode);
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

namespace {

dim3 Dim(const std::array<uint32_t, 3>& d) { return dim3(d[0], d[1], d[2]); }

// Sets kernel node `node` of `exec` to `params` (cudaGraphExecKernelNodeSetParams copies the
// argument values, so the packed call need not outlive it).
Status SetKernelNode(cudaGraphExec_t exec, cudaGraphNode_t node, const KernelNodeParams& params) {
  PackedKernelCall call;
  if (!PackKernelCall(params, &call)) return CUDA_CALL(cudaErrorInvalidValue);
  cudaKernelNodeParams p = {};
  p.func = const_cast<void*>(call.symbol);
  p.gridDim = call.grid;
  p.blockDim = call.block;
  p.sharedMemBytes = call.shared_bytes;
  p.kernelParams = call.args;
  p.extra = nullptr;
  return CUDA_CALL(cudaGraphExecKernelNodeSetParams(exec, node, &p));
}

}  // namespace

bool PackKernelCall(const KernelNodeParams& params, PackedKernelCall* out) {
  const int index = GraphKernelIndex(params.function);
  const kernels::GraphKernel* row = index < 0 ? nullptr : &kernels::kGraphKernels[index];
  if (row == nullptr || params.arg_bytes.size() != row->layout.bytes) return false;
  static_assert(kernels::kMaxKernelArgs * 8 <= sizeof(PackedKernelCall::bytes),
                "every packed layout fits the call's bytes");
  out->symbol = kernels::GraphKernelSymbol(index);
  out->grid = Dim(params.grid);
  out->block = Dim(params.block);
  out->shared_bytes = params.shared_bytes;
  std::memcpy(out->bytes, params.arg_bytes.data(), params.arg_bytes.size());
  for (int i = 0; i < row->layout.count; ++i) out->args[i] = out->bytes + row->layout.offset[i];
  return true;
}

Status SetExecNodeParams(cudaGraphExec_t exec, cudaGraphNode_t node, const NodeParams& params) {
  switch (params.kind) {
    case NodeParams::Kind::kFill:
      return SetKernelNode(exec, node, FillKernelParams(params.dst, params.count, params.seed));
    case NodeParams::Kind::kMatmul:
      return SetKernelNode(exec, node, MatmulKernelParams(params.matmul));
    case NodeParams::Kind::kMemset: {
      // Start from what the capture recorded (pitch, element size, height), so only the
      // destination, the value and the 1-D width can change.
      cudaMemsetParams p = {};
      VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGraphMemsetNodeGetParams(node, &p)));
      p.dst = reinterpret_cast<void*>(static_cast<uintptr_t>(params.dst));
      p.value = params.pattern;
      p.elementSize = 4;
      p.width = params.count;
      return CUDA_CALL(cudaGraphExecMemsetNodeSetParams(exec, node, &p));
    }
    case NodeParams::Kind::kCopy:
      return CUDA_CALL(cudaGraphExecMemcpyNodeSetParams1D(
          exec, node, reinterpret_cast<void*>(static_cast<uintptr_t>(params.dst)),
          reinterpret_cast<const void*>(static_cast<uintptr_t>(params.src)), params.count,
          cudaMemcpyDeviceToDevice));
  }
  return InternalError("unknown node parameter kind");
}

}  // namespace vmm::cuda
