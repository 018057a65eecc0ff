// PlanBuilder's capture bodies: the node each captured step makes, the lanes (capture streams) of
// parallel branches, graph memory (mem_alloc / mem_free), events, host functions, child graphs,
// replays of execs, and per-node updates (set_node).
//
// Lanes follow CUDA stream capture: each lane has a dependency set, the nodes the next node
// captured on it will depend on. A captured step makes one node that depends on its lane's set
// and becomes the set. `parallel` forks: every branch after the first gets a new lane whose set
// is the forking lane's (an event recorded there and waited for); the first branch continues on
// the forking lane. After the branches, the forking lane waits for every other branch's last
// nodes (the join), so its set is its own followed by theirs.
//
// Rules on a graph's nodes (checked as each node is added, against the nodes before it):
//   - two nodes that neither precedes touch one buffer and one of them writes it: a data race;
//   - a node touching a buffer that a mem_alloc of the same graph allocates is ordered after that
//     node, and a mem_free of the same graph is ordered after every node touching the buffer.
#include <algorithm>

#include "runner/base/format.h"
#include "runner/plan/plan_builder.h"

namespace vmm {
namespace {

// The node a captured step of `op` makes (kEmpty for ops that make none): a kernel node for a
// capturable op of the kernel family (fill, matmul, add, ...: a new kernel op needs no row), else
// its row here.
NodeType NodeTypeOf(Op op) {
  constexpr std::pair<Op, NodeType> kNodes[] = {
      {Op::kMemset, NodeType::kMemset},       {Op::kCopy, NodeType::kMemcpy},
      {Op::kHostFunc, NodeType::kHost},       {Op::kRecordEvent, NodeType::kEventRecord},
      {Op::kWaitEvent, NodeType::kEventWait}, {Op::kMemAlloc, NodeType::kMemAlloc},
      {Op::kMemFree, NodeType::kMemFree},     {Op::kChildGraph, NodeType::kGraph},
      {Op::kIf, NodeType::kConditional},      {Op::kWhile, NodeType::kConditional},
  };
  for (const auto& [o, type] : kNodes)
    if (o == op) return type;
  const OpInfo& row = Describe(op);
  return row.family == OpFamily::kKernel && row.has(kCapturable) ? NodeType::kKernel
                                                                 : NodeType::kEmpty;
}

}  // namespace

int PlanBuilder::Owner(int slot) const {
  const int base = plan_.buffers[slot].base;
  return base >= 0 ? base : slot;
}

void PlanBuilder::CaptureSteps(const std::vector<Step>& steps, int lane,
                               std::vector<PlanStep>* out) {
  out->reserve(out->size() + steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    capture_->lane = lane;
    BufferUses uses;
    RefuseInBody(steps[i]);
    PlanStep p = Visit(steps[i], static_cast<int>(i), &uses);
    p.lane = lane;
    p.node_name = p.label;
    CaptureDevice(steps[i], &p);
    // Every captured step but a parallel one makes one node; it is added even when the step had
    // errors, so the lanes stay as the author meant and later steps are judged against them.
    if (p.op != Op::kParallel && Describe(p.op).has(kCapturable))
      AddNode(steps[i], p, std::move(uses));
    out->push_back(std::move(p));
  }
}

void PlanBuilder::CaptureDevice(const Step& step, PlanStep* p) {
  // Steps that do not run on a device of their own (events, host functions, graph memory, child
  // graphs, parallel) record on the capture's stream: they take its device.
  if (!Describe(p->op).has(kOnDevice)) return;
  if (capture_->device < 0) {
    capture_->device = p->device;
    capture_->device_step = &step;
    return;
  }
  if (p->device == capture_->device) return;
  const Step& first = *capture_->device_step;
  Error(At(step.device(), step),
        "a capture records on one device's stream: this " + std::string(OpName(step.op)) +
            " runs on device " + std::to_string(p->device) + ", the capture's first " +
            OpName(first.op) + " (line " + std::to_string(first.loc.line) + ") on device " +
            std::to_string(capture_->device) + "; capture each device's work apart");
}

std::string PlanBuilder::Race(const NodeModel& a, const NodeModel& b) const {
  for (const auto& [x, ax] : a.uses) {
    for (const auto& [y, ay] : b.uses) {
      if ((ax != Access::kReadWrite && ay != Access::kReadWrite) || !Overlap(x, y)) continue;
      const std::string& bx = plan_.buffers[x].name;
      const std::string& by = plan_.buffers[y].name;
      return "'" + a.name + "' and '" + b.name + "' are not ordered (they are in parallel " +
             "branches) and both touch " +
             (x == y ? "'" + bx + "'" : "'" + bx + "' / '" + by + "'") +
             ", which one of them writes: a data race; put them in one branch or use other buffers";
    }
  }
  return "";
}

void PlanBuilder::AddNode(const Step& step, const PlanStep& p, BufferUses uses) {
  GraphModel& g = capture_->model;
  NodeModel node;
  node.name = p.label;
  node.named = p.named;
  node.type = NodeTypeOf(p.op);
  node.deps = capture_->lane_deps[p.lane];
  // A name that did not resolve (-1) was reported already; the node touches nothing known there.
  std::erase_if(uses, [](const std::pair<int, Access>& u) { return u.first < 0; });
  node.uses = std::move(uses);
  node.reservation_ids = ReservationIds(
      node.uses, p.op == Op::kChildGraph && p.graph >= 0 ? &graph_models_[p.graph] : nullptr);
  // A node records the addresses its buffers have now: each must be reserved now (a child graph's
  // copy: still the reservation its own capture saw). An address of nothing, or of memory the
  // driver may since have given to something else, makes a graph no scenario can reason about
  // (on the H200 a freed range came back as a snapshot's memory).
  for (size_t u = 0; u < node.uses.size(); ++u) {
    const int id = node.reservation_ids[u];
    const int owner = Owner(node.uses[u].first);
    if (id == kGraphMemory || (id >= 0 && id == reservation_id_[owner])) continue;
    const std::string& name = plan_.buffers[owner].name;
    Error(step.loc,
          "'" + node.name + "' records the address of '" + plan_.buffers[node.uses[u].first].name +
              "', but '" + name + "' " +
              (id < 0 ? std::string("is not reserved at this step")
                      : "was freed since graph '" + plan_.graphs[p.graph] + "' was captured") +
              ": a graph node keeps the address a buffer has when it is captured; " +
              (id < 0 ? "reserve '" + name + "' first" : "capture that graph again"));
  }
  if (p.op == Op::kIf || p.op == Op::kWhile)
    node.body_memsets = std::move(capture_->pending_body_memsets);
  if (p.op == Op::kMemAlloc) node.alloc = p.buffer;
  if (p.op == Op::kMemFree) node.freed = p.buffer;
  // A memcpy node with a host side: a copy from a host snapshot (device snapshots are device
  // memory; the plan refuses a node that writes a snapshot).
  node.host_source =
      p.op == Op::kCopy && p.snapshot >= 0 && IsHostPlace(plan_.snapshot_places[p.snapshot]);
  node.spec = p;
  const int n = static_cast<int>(g.nodes.size());
  std::vector<bool> ancestors(static_cast<size_t>(n), false);
  for (int d : node.deps) {
    ancestors[d] = true;
    for (int m = 0; m < d; ++m)
      if (g.ancestors[d][m]) ancestors[m] = true;
  }
  auto alloc_node = [&](int buffer) {
    for (int m = 0; m < n; ++m)
      if (g.nodes[m].alloc == buffer) return m;
    return -1;
  };
  auto free_node = [&](int buffer) {
    for (int m = 0; m < n; ++m)
      if (g.nodes[m].freed == buffer) return m;
    return -1;
  };
  for (const auto& [buffer, need] : node.uses) {
    const int owner = Owner(buffer);
    const int a = alloc_node(owner);
    if (a < 0) continue;
    const std::string what = "'" + node.name + "' touches '" + plan_.buffers[buffer].name + "'";
    if (!ancestors[a]) {
      Error(step.loc, what + ", which '" + g.nodes[a].name +
                          "' allocates in this graph, but is not ordered after that allocation "
                          "(put it after the mem_alloc, in its branch or after the parallel step)");
    } else if (const int f = free_node(owner); f >= 0) {
      Error(step.loc, what + " after '" + g.nodes[f].name + "' freed it (or in parallel with it)");
    }
  }
  if (node.freed >= 0 && alloc_node(node.freed) >= 0) {
    for (int m = 0; m < n; ++m) {
      bool touches = g.nodes[m].alloc == node.freed;
      for (const auto& [buffer, need] : g.nodes[m].uses)
        touches = touches || Owner(buffer) == node.freed;
      if (touches && !ancestors[m]) {
        Error(step.loc, "'" + node.name + "' frees '" + plan_.buffers[node.freed].name +
                            "' while '" + g.nodes[m].name +
                            "' may still touch it: order the free after every node that touches "
                            "the buffer");
        break;
      }
    }
  }
  for (int m = 0; m < n; ++m) {
    if (ancestors[m]) continue;
    if (std::string race = Race(g.nodes[m], node); !race.empty()) {
      Error(step.loc, race);
      break;
    }
  }
  g.memory_nodes = g.memory_nodes || IsMemoryNode(node.type);
  g.ancestors.push_back(std::move(ancestors));
  g.nodes.push_back(std::move(node));
  capture_->lane_deps[p.lane] = {n};
}

template <>
void PlanBuilder::PlanOp<Op::kParallel>(const Step& step, PlanStep* p, BufferUses*) {
  CaptureContext& c = *capture_;  // Visit refuses a parallel step outside a capture
  const int lane = c.lane;
  // Fork: every branch but the first gets a lane that starts from this lane's dependencies.
  p->branch_lanes.push_back(lane);
  for (size_t b = 1; b < step.branches().size(); ++b) {
    p->branch_lanes.push_back(static_cast<int>(c.lane_deps.size()));
    c.lane_deps.push_back(c.lane_deps[lane]);
  }
  // The branches' steps are numbered on, across branches, so each has its own index in the
  // parallel step's record.
  int index = 0;
  for (size_t b = 0; b < step.branches().size(); ++b) {
    std::vector<PlanStep> planned;
    CaptureSteps(step.branches()[b], p->branch_lanes[b], &planned);
    for (PlanStep& s : planned) s.index = index++;
    p->branches.push_back(std::move(planned));
  }
  // Join: this lane waits for every other branch's last nodes.
  std::vector<int>& deps = c.lane_deps[lane];
  for (size_t b = 1; b < p->branch_lanes.size(); ++b) {
    for (int n : c.lane_deps[p->branch_lanes[b]])
      if (std::find(deps.begin(), deps.end(), n) == deps.end()) deps.push_back(n);
  }
  c.lane = lane;
}

void PlanBuilder::ResolveEvent(const Step& step, PlanStep* p) {
  auto [it, inserted] =
      event_slots_.try_emplace(step.event().value, static_cast<int>(plan_.events.size()));
  if (inserted) plan_.events.push_back(step.event().value);
  p->event = it->second;
}

template <>
void PlanBuilder::PlanOp<Op::kRecordEvent>(const Step& step, PlanStep* p, BufferUses*) {
  ResolveEvent(step, p);
}

template <>
void PlanBuilder::PlanOp<Op::kWaitEvent>(const Step& step, PlanStep* p, BufferUses*) {
  ResolveEvent(step, p);
}

template <>
void PlanBuilder::PlanOp<Op::kHostFunc>(const Step&, PlanStep*, BufferUses*) {}

template <>
void PlanBuilder::PlanOp<Op::kMemAlloc>(const Step& step, PlanStep* p, BufferUses*) {
  p->buffer = ResolveBuffer(step.buffer(), step);
  if (p->buffer < 0) return;
  const PlanBuffer& b = plan_.buffers[p->buffer];
  const SourceLoc& at = At(step.buffer(), step);
  // A refused allocation allocates nothing: later steps see the buffer as it was.
  auto refuse = [&](const std::string& message) {
    Error(at, message);
    p->buffer = -1;
  };
  if (b.base >= 0) {
    return refuse("'" + b.name +
                  "' is a view; mem_alloc allocates a whole buffer (declare one under 'buffers' "
                  "and take views of it)");
  }
  if (reserved_by_[p->buffer].second != 0) {
    const auto& [label, line] = reserved_by_[p->buffer];
    return refuse("buffer '" + b.name + "' is reserved (by step '" + label + "' at line " +
                  std::to_string(line) +
                  "): a graph allocation needs a buffer of its own, that no reserve step uses");
  }
  for (const NodeModel& node : capture_->model.nodes) {
    if (node.alloc == p->buffer) {
      return refuse("buffer '" + b.name + "' is already allocated in this capture (by '" +
                    node.name + "')");
    }
  }
  const GraphAllocation& a = graph_allocs_[p->buffer];
  if (a.graph >= 0 && graphs_.LiveSlot(plan_.graphs[a.graph]) == a.graph) {
    refuse("buffer '" + b.name + "' is the allocation of graph '" + plan_.graphs[a.graph] +
           "' (mem_alloc at line " + std::to_string(a.alloc_line) +
           "), which is still live: its address belongs to that graph; destroy the graph first "
           "or use another buffer");
  } else if (a.live) {
    refuse("buffer '" + b.name + "' still holds a live graph allocation (mem_alloc at line " +
           std::to_string(a.alloc_line) + "); free it first (mem_free)");
  }
}

template <>
void PlanBuilder::PlanOp<Op::kMemFree>(const Step& step, PlanStep* p, BufferUses*) {
  p->buffer = ResolveBuffer(step.buffer(), step);
  if (p->buffer < 0) return;
  const PlanBuffer& b = plan_.buffers[p->buffer];
  const SourceLoc& at = At(step.buffer(), step);
  if (b.base >= 0) {
    Error(at, "'" + b.name + "' is a view; mem_free frees the whole buffer '" +
                  plan_.buffers[b.base].name + "'");
    p->buffer = -1;
    return;
  }
  GraphAllocation& a = graph_allocs_[p->buffer];
  if (capture_ != nullptr) {
    for (const NodeModel& node : capture_->model.nodes) {
      if (node.freed == p->buffer) {
        Error(at,
              "buffer '" + b.name + "' is already freed in this capture (by '" + node.name + "')");
        return;
      }
      if (node.alloc == p->buffer) return;  // allocated and freed in one graph
    }
    if (a.graph < 0) {
      Error(at, "buffer '" + b.name +
                    "' is not a graph allocation: mem_free frees memory a mem_alloc allocated");
      return;
    }
    for (const NodeModel& node : graph_models_[a.graph].nodes) {
      if (node.freed == p->buffer) {
        Error(at, "buffer '" + b.name + "' is freed in the graph that allocates it ('" + node.name +
                      "'); CUDA frees an allocation in its own graph or in another, not both");
        return;
      }
    }
    return;  // whether it is live is checked when an exec of this graph is replayed
  }
  if (a.graph < 0) {
    Error(at, "buffer '" + b.name +
                  "' is not a graph allocation: mem_free frees memory a mem_alloc allocated");
  } else if (!a.live) {
    Error(at, "buffer '" + b.name + "' holds no live graph allocation at this step" +
                  (a.freed_line > 0 ? ": it was freed at line " + std::to_string(a.freed_line)
                                    : ": replay an exec of '" + plan_.graphs[a.graph] +
                                          "' first (its mem_alloc is at line " +
                                          std::to_string(a.alloc_line) + ")"));
  }
  a.live = false;
  a.freed_line = step.loc.line;
}

template <>
void PlanBuilder::PlanOp<Op::kChildGraph>(const Step& step, PlanStep* p, BufferUses* uses) {
  ResolveGraph(step, p);
  if (p->graph < 0) return;
  const GraphModel& child = graph_models_[p->graph];
  if (child.conditional_nodes) {
    Error(At(step.graph(), step),
          "graph '" + step.graph().value +
              "' holds conditional nodes (if / while): CUDA cannot embed "
              "such a graph as a child graph; capture its steps here instead");
  } else if (child.memory_nodes) {
    Error(At(step.graph(), step), "graph '" + step.graph().value +
                                      "' holds graph memory nodes: CUDA embeds such a graph only "
                                      "by moving it into its parent, and child_graph copies it; "
                                      "use a graph without mem_alloc and mem_free");
  }
  for (const NodeModel& node : child.nodes)
    for (const auto& [buffer, need] : node.uses) AddUse(uses, buffer, need);
}

void PlanBuilder::ReplayExec(const Step& step, int e) {
  const ExecModel& exec = exec_models_[e];
  const SourceLoc& at = At(step.exec(), step);
  const std::string actor = "replay of '" + step.exec().value + "'";
  auto allocated_here = [&](int owner) {
    for (const NodeModel& node : exec.nodes)
      if (node.alloc == owner) return true;
    return false;
  };
  auto freed_here = [&](int owner) {
    for (const NodeModel& node : exec.nodes)
      if (node.freed == owner) return true;
    return false;
  };
  for (size_t i = 0; i < exec.nodes.size(); ++i) {
    if (!exec.enabled[i]) continue;  // a disabled node touches nothing
    const NodeModel& node = exec.nodes[i];
    for (size_t u = 0; u < node.uses.size(); ++u) {
      const auto& [buffer, need] = node.uses[u];
      const int owner = Owner(buffer);
      if (allocated_here(owner)) continue;
      const int captured = u < node.reservation_ids.size() ? node.reservation_ids[u] : kGraphMemory;
      if (captured != kGraphMemory && captured != reservation_id_[owner]) {
        const std::string& name = plan_.buffers[owner].name;
        Error(at, actor + " would touch '" + plan_.buffers[buffer].name + "' at the address '" +
                      node.name + "' recorded, but " +
                      (captured < 0 ? "'" + name +
                                          "' was not reserved then (the node holds no "
                                          "address of it)"
                                    : "'" + name + "' was freed since (line " +
                                          std::to_string(freed_line_[owner]) + ")" +
                                          (reservation_id_[owner] >= 0
                                               ? " and reserved again, maybe elsewhere"
                                               : "")) +
                      ": a graph keeps the addresses it captured; capture it after the reserve, "
                      "or give the node its buffers anew (set_node, update)");
        continue;
      }
      Use(buffer, need, actor + " would touch", at, exec_devices_[e]);
    }
  }
  for (const NodeModel& node : exec.nodes) {
    if (node.freed >= 0 && !allocated_here(node.freed) && !graph_allocs_[node.freed].live) {
      Error(at, actor + " frees '" + plan_.buffers[node.freed].name + "' ('" + node.name +
                    "'), which holds no live graph allocation at this step");
    }
  }
  for (const NodeModel& node : exec.nodes) {
    if (node.alloc < 0 || freed_here(node.alloc)) continue;
    GraphAllocation& a = graph_allocs_[node.alloc];
    if (a.live && !exec.auto_free_on_launch) {
      Error(at, actor + " allocates '" + plan_.buffers[node.alloc].name +
                    "' again while an earlier allocation is still live (cudaGraphLaunch refuses "
                    "it: cudaErrorInvalidValue); free it first (mem_free), or instantiate with "
                    "auto_free_on_launch: true");
    }
    a.live = true;
  }
  for (const NodeModel& node : exec.nodes) {
    if (node.freed < 0 || allocated_here(node.freed)) continue;
    graph_allocs_[node.freed].live = false;
    graph_allocs_[node.freed].freed_line = step.loc.line;
  }
}

}  // namespace vmm

namespace vmm {

std::vector<int> PlanBuilder::ReservationIds(const BufferUses& uses,
                                             const GraphModel* child) const {
  std::vector<int> ids;
  ids.reserve(uses.size());
  for (const auto& [buffer, need] : uses) {
    const int owner = Owner(buffer);
    int id = kGraphMemory;
    if (child != nullptr) {  // the address the child's own capture took
      for (const NodeModel& n : child->nodes)
        for (size_t u = 0; u < n.uses.size() && id == kGraphMemory; ++u)
          if (Owner(n.uses[u].first) == owner && u < n.reservation_ids.size())
            id = n.reservation_ids[u];
    } else if (graph_allocs_[owner].graph < 0) {
      bool allocated_in_capture = false;
      if (capture_ != nullptr)
        for (const NodeModel& n : capture_->model.nodes)
          allocated_in_capture = allocated_in_capture || n.alloc == owner;
      if (!allocated_in_capture) id = reservation_id_[owner];  // -1: not reserved now
    }
    ids.push_back(id);
  }
  return ids;
}

}  // namespace vmm
