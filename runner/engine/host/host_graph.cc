#include "runner/engine/host/host_graph.h"

#include <algorithm>
#include <utility>

#include "runner/engine/graph_structure.h"
#include "runner/engine/host/address_space.h"
#include "runner/engine/kernel_params.h"

namespace vmm::host {

GraphNode MakeKernelNode(KernelNodeParams params) {
  GraphNode node;
  node.params = std::move(params);
  return node;
}

GraphNode MakeMemsetNode(DevicePtr dst, uint64_t count, uint32_t pattern) {
  GraphNode node = MakeNode(NodeType::kMemset);
  node.dst = dst;
  node.count = count;
  node.pattern = pattern;
  return node;
}

GraphNode MakeCopyNode(DevicePtr dst, DevicePtr src, uint64_t bytes) {
  GraphNode node = MakeNode(NodeType::kMemcpy);
  node.dst = dst;
  node.src = src;
  node.count = bytes;
  return node;
}

GraphNode MakeDataCopyNode(DataRef dst, DataRef src, uint64_t bytes) {
  GraphNode node = MakeCopyNode(dst.addr, src.addr, bytes);
  node.dst_place = dst.place;
  node.src_place = src.place;
  return node;
}

GraphNode MakeNode(NodeType type) {
  GraphNode node;
  node.type = type;
  return node;
}

GraphNode MakeSetConditionNode(const ConditionArgs& condition) {
  GraphNode node;
  node.condition = condition;
  node.params = SetConditionKernelParams(condition.word, condition.handle);
  return node;
}

GraphNode MakeNextPassNode(const ConditionArgs& condition) {
  GraphNode node;
  node.condition = condition;
  node.params = NextPassKernelParams(condition.word, condition.passes, condition.handle);
  return node;
}

GraphNode MakeConditionalNode(const ConditionArgs& condition) {
  GraphNode node = MakeNode(NodeType::kConditional);
  node.condition = condition;
  return node;
}

std::vector<KernelNodeParams> HostGraph::KernelNodes() const {
  std::vector<KernelNodeParams> out;
  for (const GraphNode& node : nodes)
    if (node.type == NodeType::kKernel) out.push_back(node.params);
  return out;
}

int HostGraph::Find(const std::string& name) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

bool HostGraph::HasMemoryNodes() const {
  return std::any_of(nodes.begin(), nodes.end(),
                     [](const GraphNode& n) { return IsMemoryNode(n.type); });
}

bool HostGraph::Allocates(DevicePtr p) const {
  return std::any_of(nodes.begin(), nodes.end(), [&](const GraphNode& n) {
    return n.type == NodeType::kMemAlloc && p >= n.ptr && p - n.ptr < n.count;
  });
}

bool HostGraph::HasConditionalNodes() const {
  return std::any_of(nodes.begin(), nodes.end(),
                     [](const GraphNode& n) { return n.type == NodeType::kConditional; });
}

GraphStructure HostGraph::Describe() const {
  GraphStructure out;
  for (const GraphNode& node : nodes) {
    GraphNodeInfo info;
    info.name = node.name;
    info.type = node.type;
    info.dependencies = node.dependencies;
    switch (node.type) {
      case NodeType::kKernel:
        info.detail = node.params.function;
        info.operands = KernelOperands(node.params.function, node.params.arg_bytes);
        break;
      case NodeType::kMemset:
        info.detail = MemsetDetail(node.pattern);
        info.operands = {{node.dst, node.count * 4, Access::kReadWrite}};
        break;
      case NodeType::kMemcpy:
        info.detail = MemcpyDetail(IsHostPlace(node.src_place), IsHostPlace(node.dst_place));
        // Host memory (a host snapshot) is no device operand.
        if (!IsHostPlace(node.src_place))
          info.operands.push_back({node.src, node.count, Access::kRead});
        if (!IsHostPlace(node.dst_place))
          info.operands.push_back({node.dst, node.count, Access::kReadWrite});
        break;
      case NodeType::kEventRecord:
      case NodeType::kEventWait:
        info.detail = EventDetail(node.event);
        break;
      case NodeType::kMemAlloc:
        info.detail = AllocDetail(node.count);
        info.operands = {{node.ptr, node.count, Access::kReadWrite}};
        break;
      case NodeType::kMemFree:
        info.operands = {{node.ptr, 0, Access::kReadWrite}};
        break;
      case NodeType::kGraph:
        info.children = node.child->Describe().nodes;
        break;
      case NodeType::kConditional:
        info.detail = ConditionKindName(node.condition.kind);
        if (node.child != nullptr) info.children = node.child->Describe().nodes;
        break;
      case NodeType::kHost:
      case NodeType::kEmpty:
        break;
    }
    out.nodes.push_back(std::move(info));
  }
  out.dot = StructureDot(out);
  return out;
}

CaptureBuilder::CaptureBuilder() {
  lanes_.emplace_back(std::vector<uint32_t>{});
  last_.push_back(-1);
}

Status CaptureBuilder::Lane(int lane, const char* function) const {
  if (lane >= 0 && static_cast<size_t>(lane) < lanes_.size() && lanes_[lane].has_value())
    return Status::Ok();
  return CudaError(function, "CUDA_ERROR_INVALID_VALUE",
                   "lane " + std::to_string(lane) + " has not joined the capture (fork it first)");
}

Status CaptureBuilder::NoBody(const char* function) const {
  if (bodies_.empty()) return Status::Ok();
  return CudaError(function, "CUDA_ERROR_INVALID_VALUE",
                   "a conditional body ('" + bodies_.back().name +
                       "') is being captured: its work is one chain on one stream");
}

Status CaptureBuilder::SetLane(int lane) {
  VMM_RETURN_IF_ERROR(NoBody("cuStreamGetCaptureInfo"));
  VMM_RETURN_IF_ERROR(Lane(lane, "cuStreamGetCaptureInfo"));
  lane_ = lane;
  return Status::Ok();
}

Status CaptureBuilder::Fork(int from, int to) {
  VMM_RETURN_IF_ERROR(NoBody("cuStreamWaitEvent"));
  VMM_RETURN_IF_ERROR(Lane(from, "cuEventRecord"));
  if (to < 0) return CudaError("cuStreamWaitEvent", "CUDA_ERROR_INVALID_VALUE", "negative lane");
  if (static_cast<size_t>(to) >= lanes_.size()) {
    lanes_.resize(static_cast<size_t>(to) + 1);
    last_.resize(static_cast<size_t>(to) + 1, -1);
  }
  if (lanes_[to].has_value()) {
    return CudaError("cuStreamWaitEvent", "CUDA_ERROR_INVALID_VALUE",
                     "lane " + std::to_string(to) + " is already part of the capture");
  }
  lanes_[to] = lanes_[from];
  return Status::Ok();
}

Status CaptureBuilder::Join(int from, int into) {
  VMM_RETURN_IF_ERROR(NoBody("cuStreamWaitEvent"));
  VMM_RETURN_IF_ERROR(Lane(from, "cuEventRecord"));
  VMM_RETURN_IF_ERROR(Lane(into, "cuStreamWaitEvent"));
  std::vector<uint32_t>& deps = *lanes_[into];
  for (uint32_t n : *lanes_[from])
    if (std::find(deps.begin(), deps.end(), n) == deps.end()) deps.push_back(n);
  return Status::Ok();
}

Status CaptureBuilder::Add(GraphNode node) {
  if (!bodies_.empty()) {  // one chain in the open body
    Body& body = bodies_.back();
    if (body.last >= 0) node.dependencies = {static_cast<uint32_t>(body.last)};
    body.last = static_cast<int>(body.graph.nodes.size());
    body.unnamed = body.last;
    body.graph.nodes.push_back(std::move(node));
    return Status::Ok();
  }
  node.dependencies = *lanes_[lane_];
  const auto index = static_cast<uint32_t>(graph_.nodes.size());
  graph_.nodes.push_back(std::move(node));
  lanes_[lane_] = std::vector<uint32_t>{index};
  last_[lane_] = static_cast<int>(index);
  return Status::Ok();
}

Status CaptureBuilder::NameLast(const std::string& name) {
  if (!bodies_.empty()) {
    Body& body = bodies_.back();
    if (body.unnamed < 0) {
      return CudaError(
          "cuStreamGetCaptureInfo", "CUDA_ERROR_INVALID_VALUE",
          "no node was captured in the body of '" + body.name + "' to name '" + name + "'");
    }
    body.graph.nodes[body.unnamed].name = name;
    body.unnamed = -1;
    return Status::Ok();
  }
  const int last = last_[lane_];
  if (last < 0) {
    return CudaError(
        "cuStreamGetCaptureInfo", "CUDA_ERROR_INVALID_VALUE",
        "no node was captured on lane " + std::to_string(lane_) + " to name '" + name + "'");
  }
  graph_.nodes[last].name = name;
  last_[lane_] = -1;
  return Status::Ok();
}

Status CaptureBuilder::BeginBody(GraphNode conditional, const std::string& name) {
  Body body;
  body.condition = conditional.condition;
  body.name = name;
  body.node = static_cast<uint32_t>(bodies_.empty() ? graph_.nodes.size()
                                                    : bodies_.back().graph.nodes.size());
  VMM_RETURN_IF_ERROR(Add(std::move(conditional)));
  bodies_.push_back(std::move(body));
  return Status::Ok();
}

Status CaptureBuilder::EndBody() {
  if (bodies_.empty()) {
    return CudaError("cuStreamEndCapture", "CUDA_ERROR_ILLEGAL_STATE",
                     "no conditional body is being captured");
  }
  Body body = std::move(bodies_.back());
  bodies_.pop_back();
  HostGraph& outer = bodies_.empty() ? graph_ : bodies_.back().graph;
  outer.nodes[body.node].child = std::make_shared<const HostGraph>(std::move(body.graph));
  return Status::Ok();
}

const ConditionArgs* CaptureBuilder::OpenCondition(std::string* name) const {
  if (bodies_.empty()) return nullptr;
  *name = bodies_.back().name;
  return &bodies_.back().condition;
}

Status CaptureBuilder::Finish(HostGraph* out) {
  if (!bodies_.empty()) {
    return CudaError(
        "cuStreamEndCapture", "CUDA_ERROR_ILLEGAL_STATE",
        "the body of conditional node '" + bodies_.back().name + "' is still being captured");
  }
  std::vector<bool> has_dependent(graph_.nodes.size(), false);
  for (const GraphNode& node : graph_.nodes)
    for (uint32_t d : node.dependencies) has_dependent[d] = true;
  const std::vector<uint32_t>& joined = *lanes_[0];
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (has_dependent[i] || std::find(joined.begin(), joined.end(), i) != joined.end()) continue;
    return CudaError("cuStreamEndCapture", "CUDA_ERROR_STREAM_CAPTURE_UNJOINED",
                     "node '" + graph_.nodes[i].name +
                         "' was captured on a forked lane that was never joined back");
  }
  *out = std::move(graph_);
  return Status::Ok();
}

}  // namespace vmm::host
