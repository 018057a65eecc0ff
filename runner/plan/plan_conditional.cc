// PlanBuilder's conditional nodes: `if` and `while` in a capture body (CUDA 12.4+ conditional
// nodes). Each makes, on its lane, a kernel node that reads the condition word and sets the
// condition (cudaGraphSetConditional), then the conditional node, whose body graph holds the
// steps of `steps` as one chain (a `while` body ends with a kernel node that subtracts one from
// the counter, adds one to the `passes` word and sets the condition again).
//
// The plan models the conditional node as one node of its graph that touches what its body
// touches (the body may run) plus the condition word (read; a while loop writes its counter and
// `passes`). Its body is planned in a graph model of its own, discarded afterwards: body nodes
// are no nodes of the graph (set_node and expect_error_node cannot name them).
//
// Rules (CUDA's, cudaConditionalNodeParams in driver_types.h, and the language's):
//   - a body holds kernels (fill, matmul), memsets, device-to-device copies, child graphs of such
//     nodes and nested if / while; not host_func, record_event, wait_event, mem_alloc, mem_free
//     (CUDA refuses host, event and memory nodes in a body), nor parallel (a body is one chain);
//   - the condition word lies inside its buffer;
//   - a while body must not write its counter's buffer (the loop would then not be bounded by
//     the counter: it could run forever on the GPU).
#include "runner/plan/plan_builder.h"

namespace vmm {

namespace {

// Why `op` cannot be in a conditional body, or nullptr when it can.
const char* NotInBody(Op op) {
  switch (op) {
    case Op::kHostFunc:
      return "a host node";
    case Op::kRecordEvent:
    case Op::kWaitEvent:
      return "an event node";
    case Op::kMemAlloc:
    case Op::kMemFree:
      return "a graph memory node";
    case Op::kParallel:
      return "branches (a conditional body is captured as one chain)";
    default:
      return nullptr;
  }
}

}  // namespace

bool PlanBuilder::RefuseInBody(const Step& step) {
  if (capture_ == nullptr || capture_->bodies == 0) return false;
  const char* why = NotInBody(step.op);
  if (why == nullptr) return false;
  Error(step.loc, std::string("'") + OpName(step.op) + "' cannot be in the body of " +
                      capture_->body_kind + " step '" + capture_->body_label + "': it makes " +
                      why +
                      ", and a conditional body holds only fill, matmul, memset, copy (device to "
                      "device), child_graph and nested if / while; move it before or after the " +
                      capture_->body_kind);
  return true;
}

void PlanBuilder::Conditional(const Step& step, PlanStep* p, BufferUses* uses) {
  CaptureContext& c = *capture_;  // Visit refuses if / while outside a capture
  const bool loop = step.op == Op::kWhile;
  const char* kind = OpName(step.op);
  p->buffer = ResolveBuffer(step.buffer(), step);
  if (p->buffer >= 0) {
    const PlanBuffer& b = plan_.buffers[p->buffer];
    const uint64_t words = b.bytes / 4;
    if (step.index().value >= words) {
      Error(At(step.index(), step),
            std::string(kind) + ": 'index' " + std::to_string(step.index().value) +
                " is past the end of '" + b.name + "', which holds " + std::to_string(words) +
                " 32-bit words; give an index below " + std::to_string(words));
    }
    p->offset = step.index().value * 4;
    AddUse(uses, p->buffer, loop ? Access::kReadWrite : Access::kRead);
  }
  if (step.passes().set) {
    p->other = ResolveBuffer(step.passes(), step);
    if (p->other >= 0) AddUse(uses, p->other, Access::kReadWrite);
  }

  // The body: a graph of its own on this lane (one chain).
  GraphModel outer_model = std::move(c.model);
  std::vector<std::vector<int>> outer_deps = std::move(c.lane_deps);
  const std::string outer_kind = c.body_kind, outer_label = c.body_label;
  const int lane = c.lane;
  c.model = GraphModel{};
  c.lane_deps.assign(static_cast<size_t>(lane) + 1, {});
  ++c.bodies;
  c.body_kind = kind;
  c.body_label = p->label;
  CaptureSteps(step.steps, lane, &p->body);
  GraphModel body = std::move(c.model);
  --c.bodies;
  c.body_kind = outer_kind;
  c.body_label = outer_label;
  c.model = std::move(outer_model);
  c.lane_deps = std::move(outer_deps);
  c.lane = lane;

  c.pending_body_memsets.clear();
  for (const NodeModel& node : body.nodes) {
    if (node.type == NodeType::kMemset || node.type == NodeType::kGraph)
      c.pending_body_memsets.push_back(node);
    for (const NodeModel& nested : node.body_memsets) c.pending_body_memsets.push_back(nested);
  }
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const NodeModel& node = body.nodes[i];
    const Step& inner = node.spec.src != nullptr ? *node.spec.src : step;
    if (node.host_source) {
      Error(inner.loc, "'" + node.name + "' copies from host memory (a host snapshot): a " +
                           "conditional body holds device-to-device copies only; copy to the " +
                           "device before the capture");
    }
    if (node.type == NodeType::kGraph && node.spec.graph >= 0) {
      const GraphModel& child = graph_models_[node.spec.graph];
      for (const NodeModel& n : child.nodes) {
        if (ConditionalBodyAccepts(n.type) && !n.host_source) continue;
        Error(inner.loc, "child graph '" + plan_.graphs[node.spec.graph] + "' holds '" + n.name +
                             "', " +
                             (n.host_source ? std::string("a copy from host memory")
                                            : std::string("a ") + NodeTypeName(n.type) + " node") +
                             ", which a conditional body cannot hold (kernel, memset, device "
                             "memcpy, child graph and conditional nodes only)");
        break;
      }
    }
    for (const auto& [buffer, need] : node.uses) {
      AddUse(uses, buffer, need);
      if (loop && p->buffer >= 0 && need == Access::kReadWrite && Overlap(buffer, p->buffer)) {
        Error(inner.loc, "'" + node.name + "' writes '" + plan_.buffers[buffer].name +
                             "', which holds the counter of while step '" + p->label +
                             "': the loop would no longer be bounded by its counter (it could "
                             "run forever); use another buffer");
      }
    }
  }
  c.model.conditional_nodes = true;
}

template <>
void PlanBuilder::PlanOp<Op::kIf>(const Step& step, PlanStep* p, BufferUses* uses) {
  Conditional(step, p, uses);
}

template <>
void PlanBuilder::PlanOp<Op::kWhile>(const Step& step, PlanStep* p, BufferUses* uses) {
  Conditional(step, p, uses);
}

}  // namespace vmm
