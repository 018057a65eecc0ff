// CudaEngine: conditional nodes (if / while, CUDA 12.4+) inside a stream capture.
//
// BeginConditional, on the current capture stream (a lane, or the body of an enclosing
// conditional node):
//   1. cudaStreamGetCaptureInfo: the graph being built;
//   2. cudaGraphConditionalHandleCreate on that graph (no default: the kernel below sets it on
//      every launch before the node is reached);
//   3. the condition kernel (kernels/condition.cu: vmm_set_condition) captured on the stream;
//   4. cudaGraphAddNode of a cudaGraphNodeTypeConditional node after the stream's dependencies
//      (the kernel), then cudaStreamUpdateCaptureDependencies so the stream depends on it;
//   5. cudaStreamBeginCaptureToGraph on a body stream of this lane, into the node's body graph
//      (phGraph_out[0]): work captured until EndConditional goes there, as one chain.
// EndConditional captures a while loop's next-pass kernel (vmm_next_pass) at the body's end,
// then ends the body's capture (cudaStreamEndCapture returns the body graph, which stays the
// node's). The node's body is remembered (conditional_bodies_) for DescribeGraph.
#include <string>
#include <utility>

#include "kernels/kernels.h"
#include "runner/base/format.h"
#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/cuda_engine_impl.h"

namespace vmm::cuda {
Status CudaEngine::BeginConditional(ConditionKind kind, DevicePtr word, DevicePtr passes,
                                    const std::string& name) {
  auto what = [&] {
    return std::string("BeginConditional(") + ConditionKindName(kind) + ", word=" + Hex(word) +
           ", '" + name + "')";
  };
  VMM_RETURN_IF_ERROR(Bind());
  if (!capturing_) return RuntimeError(what() + ": the stream is not capturing");
  const cudaStream_t outer = work_stream();
  // The body's stream (one per nesting depth, created on first use).
  const size_t depth = bodies_.size();
  std::vector<Stream>& streams = lane_->body_streams;
  while (streams.size() <= depth) {
    StatusOr<Stream> s = CreateStream();
    if (!s.ok()) return Annotate(s.status(), what);
    streams.push_back(std::move(s).value());
  }
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  size_t count = 0;
  VMM_RETURN_IF_ERROR(Annotate(CaptureInfo(outer, &graph, &deps, &count), what));
  cudaGraphConditionalHandle handle = 0;
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0)), what));
  VMM_RETURN_IF_ERROR(Annotate(
      CUDA_CALL(kernels::LaunchSetCondition(DevicePointer<const uint32_t>(word), handle, outer)),
      what));
  // Name the condition kernel now: it is the node the stream depends on.
  VMM_RETURN_IF_ERROR(Annotate(CaptureInfo(outer, &graph, &deps, &count), what));
  if (count != 1) return RuntimeError(what() + ": the condition kernel made no single node");
  capture_names_.push_back(
      {bodies_.empty() ? nullptr : bodies_.back().body, deps[0], name + kConditionNodeSuffix});
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type =
      kind == ConditionKind::kIf ? cudaGraphCondTypeIf : cudaGraphCondTypeWhile;
  params.conditional.size = 1;
  cudaGraphNode_t node = nullptr;
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(cudaGraphAddNode(&node, graph, deps, nullptr, count, &params)), what));
  VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaStreamUpdateCaptureDependencies(
                                   outer, &node, nullptr, 1, cudaStreamSetCaptureDependencies)),
                               what));
  cudaGraph_t body = params.conditional.phGraph_out[0];
  const cudaStream_t inner = streams[depth].get();
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(cudaStreamBeginCaptureToGraph(inner, body, nullptr, nullptr, 0,
                                                       cudaStreamCaptureModeThreadLocal)),
               what));
  conditional_bodies_[node] = ConditionalBody{kind, body};
  OpenBody open;
  open.stream = inner;
  open.body = body;
  open.handle = handle;
  open.kind = kind;
  open.word = word;
  open.passes = kind == ConditionKind::kWhile ? passes : 0;
  open.name = name;
  bodies_.push_back(std::move(open));
  return Status::Ok();
}

Status CudaEngine::EndConditional() {
  VMM_RETURN_IF_ERROR(Bind());
  if (bodies_.empty()) return RuntimeError("EndConditional: no conditional body is open");
  const OpenBody& open = bodies_.back();
  auto what = [&] { return "EndConditional('" + open.name + "')"; };
  if (open.kind == ConditionKind::kWhile) {
    VMM_RETURN_IF_ERROR(
        Annotate(CUDA_CALL(kernels::LaunchNextPass(DevicePointer<uint32_t>(open.word),
                                                   DevicePointer<uint32_t>(open.passes),
                                                   open.handle, open.stream)),
                 what));
    VMM_RETURN_IF_ERROR(NameCapturedNode(open.name + kNextPassNodeSuffix));
  }
  cudaGraph_t ended = nullptr;  // the body graph itself: the conditional node owns it
  Status s = CUDA_CALL(cudaStreamEndCapture(open.stream, &ended));
  bodies_.pop_back();
  return Annotate(s, what);
}

void CudaEngine::AbortBodies() noexcept {
  while (!bodies_.empty()) {
    cudaGraph_t ended = nullptr;  // owned by its conditional node (dropped with the capture)
    if (cudaStreamEndCapture(bodies_.back().stream, &ended) != cudaSuccess)
      (void)cudaGetLastError();
    bodies_.pop_back();
  }
}

}  // namespace vmm::cuda
