// PlanBuilder's graph steps: capture, instantiate, replay, update, set_node, trim, destroy_graph,
// destroy_exec, and synchronize. A graph remembers the nodes its capture made (plan_graph_nodes.cc)
// and the buffers each touches; an exec copies them at instantiate, takes the new graph's node
// parameters at a successful update and a node's new ones at set_node, and a replay checks the
// buffers of its enabled nodes against the memory state at that step.
#include <algorithm>

#include "runner/base/format.h"
#include "runner/plan/plan_builder.h"

namespace vmm {

void PlanBuilder::ResolveGraph(const Step& step, PlanStep* p) {
  std::string error;
  p->graph = graphs_.Resolve(step.graph().value, &error);
  if (p->graph < 0) {
    Error(At(step.graph(), step),
          error + (LiveInParent(&PlanBuilder::graphs_, step.graph().value) ? BlockHint() : ""));
  }
}

void PlanBuilder::ResolveExec(const Step& step, PlanStep* p) {
  std::string error;
  p->exec = execs_.Resolve(step.exec().value, &error);
  if (p->exec < 0) {
    Error(At(step.exec(), step),
          error + (LiveInParent(&PlanBuilder::execs_, step.exec().value) ? BlockHint() : ""));
  }
}

template <>
void PlanBuilder::PlanOp<Op::kCapture>(const Step& step, PlanStep* p, BufferUses*) {
  if (step.steps.empty())
    Error(step.loc, "capture '" + step.graph().value + "' records nothing; add steps to record");
  CaptureContext context;
  context.graph = step.graph().value;
  context.line = step.loc.line;
  context.lane_deps.emplace_back();  // lane 0: the capturing stream itself
  capture_ = &context;
  CaptureSteps(step.steps, 0, &p->body);
  capture_ = nullptr;
  // A capture records one device's stream: the graph's work runs on the device of its first step
  // that runs on a device (CaptureSteps refuses the others elsewhere).
  p->device = context.device >= 0 ? context.device : 0;
  std::string error;
  p->graph = graphs_.Create(step.graph().value, step.loc.line, &error);
  if (!error.empty()) return Error(At(step.graph(), step), error);
  // The buffers its allocation nodes hold now have this graph's addresses.
  for (const NodeModel& node : context.model.nodes)
    if (node.alloc >= 0)
      graph_allocs_[node.alloc] = GraphAllocation{p->graph, false, node.spec.line, 0};
  graph_models_.push_back(std::move(context.model));
  graph_devices_.push_back(p->device);
}

template <>
void PlanBuilder::PlanOp<Op::kInstantiate>(const Step& step, PlanStep* p, BufferUses*) {
  ResolveGraph(step, p);
  p->upload = step.upload().value;
  p->auto_free_on_launch = step.auto_free_on_launch().value;
  p->device_launch = step.device_launch().value;
  if (p->device_launch && p->auto_free_on_launch) {
    Error(At(step.device_launch(), step),
          "device_launch and auto_free_on_launch exclude each other (cudaGraphInstantiate refuses "
          "cudaGraphInstantiateFlagDeviceLaunch with cudaGraphInstantiateFlagAutoFreeOnLaunch)");
  }
  if (p->graph >= 0) {
    const GraphModel& g = graph_models_[p->graph];
    if ((g.memory_nodes || g.conditional_nodes) && g.live_execs > 0) {
      std::string live;
      for (size_t e = 0; e < exec_models_.size(); ++e) {
        if (exec_models_[e].graph == p->graph &&
            execs_.LiveSlot(plan_.execs[e]) == static_cast<int>(e))
          live = plan_.execs[e];
      }
      Error(At(step.graph(), step),
            "graph '" + step.graph().value + "' holds " +
                (g.memory_nodes ? "graph memory nodes" : "conditional nodes (if / while)") +
                ", so it can have one executable graph at a time (CUDA refuses a second "
                "instantiation); destroy exec '" +
                live + "' first");
    }
    bool stale = false;
    if (std::string why = UnwritableMemset(g.nodes, graph_devices_[p->graph], &stale); stale) {
      // Whether the driver refuses depends on what its VA allocator put at the old address since
      // (on the H200 a reservation landed there and the instantiate succeeded): never sent.
      Error(At(step.graph(), step), "instantiate of graph '" + step.graph().value + "': " + why +
                                        ": the node would write wherever that address points now; "
                                        "capture the graph again after the reserve");
    } else if (!why.empty()) {
      Refusal(At(step.graph(), step),
              "instantiate of graph '" + step.graph().value + "' would be refused: " + why +
                  ": cudaGraphInstantiate checks a memset node's destination "
                  "(CUDA_ERROR_INVALID_VALUE on the H200); set_access with read_write first",
              "memset_node_without_write_access");
    }
    if (p->device_launch) {
      bool work = false;
      for (const NodeModel& node : g.nodes) {
        work = work || CanDisable(node.type) || node.type == NodeType::kGraph;
        if (!DeviceLaunchable(node.type) || node.host_source) {
          Error(At(step.device_launch(), step),
                "graph '" + step.graph().value +
                    "' cannot be instantiated for device launch: node '" + node.name + "' is " +
                    (node.host_source ? std::string("a copy from host memory")
                                      : std::string("a ") + NodeTypeName(node.type) + " node") +
                    " (a device-launch graph holds only kernel, device memcpy, memset and child "
                    "graph nodes)");
          break;
        }
      }
      if (!work) {
        Error(At(step.device_launch(), step), "graph '" + step.graph().value +
                                                  "' cannot be instantiated for device launch: it "
                                                  "has no kernel, memcpy or memset node");
      }
    }
  }
  std::string error;
  // The exec runs the graph's kernels where they were captured: `device` may only say so.
  const int graph_device = p->graph >= 0 ? graph_devices_[p->graph] : p->device;
  if (step.device().set && p->device != graph_device) {
    Error(step.device().loc,
          "graph '" + step.graph().value + "' was captured on device " +
              std::to_string(graph_device) +
              "; its exec runs its kernels there: instantiate it on device " +
              std::to_string(graph_device) +
              ", or capture its kernels with 'device: " + std::to_string(p->device) + "'");
  }
  p->device = graph_device;
  p->exec = execs_.Create(step.exec().value, step.loc.line, &error);
  if (!error.empty()) return Error(At(step.exec(), step), error);
  ExecModel exec;
  if (p->graph >= 0) {
    GraphModel& g = graph_models_[p->graph];
    ++g.live_execs;
    exec.graph = p->graph;
    exec.nodes = g.nodes;
    exec.enabled.assign(g.nodes.size(), true);
  }
  exec.auto_free_on_launch = p->auto_free_on_launch;
  exec_models_.push_back(std::move(exec));
  exec_devices_.push_back(p->device);
}

template <>
void PlanBuilder::PlanOp<Op::kReplay>(const Step& step, PlanStep* p, BufferUses*) {
  ResolveExec(step, p);
  if (p->exec < 0) return;
  p->device = exec_devices_[p->exec];  // an exec replays on the device it was instantiated on
  // A repeated replay launches the exec again while what the first left alive still lives.
  for (uint32_t i = 0; i < std::min<uint32_t>(p->repeat, 2); ++i) {
    const size_t errors = diagnostics_->size();
    ReplayExec(step, p->exec);
    if (diagnostics_->size() != errors) break;
  }
}

template <>
void PlanBuilder::PlanOp<Op::kUpdate>(const Step& step, PlanStep* p, BufferUses*) {
  ResolveGraph(step, p);
  ResolveExec(step, p);
  if (p->exec >= 0) p->device = exec_devices_[p->exec];  // the exec's own device
  if (p->exec >= 0 && p->graph >= 0 && graph_devices_[p->graph] != p->device) {
    Error(At(step.graph(), step), "graph '" + step.graph().value + "' was captured on device " +
                                      std::to_string(graph_devices_[p->graph]) + ", exec '" +
                                      step.exec().value + "' runs on device " +
                                      std::to_string(p->device) +
                                      "; an update takes a graph of the exec's own device");
  }
  p->expect = Expectation::kUpdateCode;
  p->expect_update = UpdateCode::kSuccess;
  const std::string& e = step.expect().value;
  if (!e.empty() && !ParseUpdateCode(e, &p->expect_update)) {
    Error(At(step.expect(), step),
          "'expect' of update must be an update result such as success, got '" + e + "'");
  }
  if (step.expect_error_node().set) {
    const std::string& name = step.expect_error_node().value;
    if (p->expect_update == UpdateCode::kSuccess) {
      Error(At(step.expect_error_node(), step),
            "'expect_error_node' names the node that blocks a refused update, but this update "
            "expects success; give 'expect' the refusal you expect");
    } else if (p->graph >= 0) {
      std::vector<std::string> names;
      bool found = false;
      for (const NodeModel& node : graph_models_[p->graph].nodes) {
        if (!node.named) continue;
        names.push_back(node.name);
        found = found || node.name == name;
      }
      if (!found) {
        const std::string close = SuggestName(name, names);
        std::string list;
        for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
        Error(At(step.expect_error_node(), step),
              "'expect_error_node' names '" + name +
                  "', which is not a named step of the capture of '" + step.graph().value +
                  "' (the update reports a node of that graph)" +
                  (!close.empty() ? "; did you mean '" + close + "'?"
                   : list.empty() ? "; name its steps to refer to them"
                                  : "; its named steps: " + list));
      }
    }
    p->node_name = name;
  }
  // A successful cudaGraphExecUpdate copies the graph's node parameters: from now on the exec's
  // nodes do what the graph's do (they keep the names of the graph the exec was made from). The
  // plan trusts the expectation: a refused update leaves the exec as it was.
  if (p->exec < 0 || p->graph < 0 || p->expect_update != UpdateCode::kSuccess) return;
  ExecModel& exec = exec_models_[p->exec];
  const std::vector<NodeModel>& nodes = graph_models_[p->graph].nodes;
  if (exec.nodes.size() != nodes.size()) {
    exec.nodes = nodes;
    exec.enabled.assign(nodes.size(), true);
    return;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string name = std::move(exec.nodes[i].name);
    const bool named = exec.nodes[i].named;
    exec.nodes[i] = nodes[i];
    exec.nodes[i].name = std::move(name);
    exec.nodes[i].named = named;
  }
}

template <>
void PlanBuilder::PlanOp<Op::kSetNode>(const Step& step, PlanStep* p, BufferUses*) {
  SetNode(step, p);
}

template <>
void PlanBuilder::PlanOp<Op::kTrim>(const Step&, PlanStep*, BufferUses*) {}

template <>
void PlanBuilder::PlanOp<Op::kDestroyGraph>(const Step& step, PlanStep* p, BufferUses*) {
  ResolveGraph(step, p);
  // Execs made from the graph stay valid (CUDA semantics), and so do the graph allocations still
  // alive: destroying a graph frees none of them.
  graphs_.End(step.graph().value, step.loc.line);
}

template <>
void PlanBuilder::PlanOp<Op::kDestroyExec>(const Step& step, PlanStep* p, BufferUses*) {
  ResolveExec(step, p);
  if (p->exec >= 0 && exec_models_[p->exec].graph >= 0)
    --graph_models_[exec_models_[p->exec].graph].live_execs;
  execs_.End(step.exec().value, step.loc.line);
}

template <>
void PlanBuilder::PlanOp<Op::kSynchronize>(const Step&, PlanStep*, BufferUses*) {}

}  // namespace vmm

namespace vmm {

std::string PlanBuilder::AccessProblemText(int buffer, Access need, int device) const {
  const PlanBuffer& b = plan_.buffers[buffer];
  const int owner = b.base >= 0 ? b.base : buffer;
  if (graph_allocs_[owner].graph >= 0) return "";  // graph memory: read_write while it lives
  const ReservationState& r = reservations_[owner];
  if (!r.reserved()) return "is not reserved";
  const ByteRange range{b.offset, b.offset + b.bytes};
  if (range.end > r.size()) return "ends past its reservation";
  const std::string on = ForDevice(device);
  switch (r.FirstProblem(range, need, device)) {
    case AccessProblem::kNone:
      return "";
    case AccessProblem::kNotMapped:
      return "is not mapped";
    case AccessProblem::kPartlyMapped:
      return "is only partly mapped";
    case AccessProblem::kNeverSet:
      return "has no access yet" + on;
    case AccessProblem::kAccessNone:
      return "has access 'none'" + on;
    case AccessProblem::kReadOnly:
      return "is mapped read-only" + on;
  }
  return "";
}

std::string PlanBuilder::UnwritableMemset(const std::vector<NodeModel>& nodes, int device,
                                          bool* stale) const {
  for (const NodeModel& node : nodes) {
    if (node.type == NodeType::kGraph && node.spec.graph >= 0) {
      std::string why = UnwritableMemset(graph_models_[node.spec.graph].nodes, device, stale);
      if (!why.empty()) return why;
    }
    if (std::string why = UnwritableMemset(node.body_memsets, device, stale); !why.empty())
      return why;
    if (node.type != NodeType::kMemset) continue;
    for (size_t u = 0; u < node.uses.size(); ++u) {
      const int buffer = node.uses[u].first;
      const int owner = Owner(buffer);
      const int captured = u < node.reservation_ids.size() ? node.reservation_ids[u] : kGraphMemory;
      *stale = captured != kGraphMemory && captured != reservation_id_[owner];
      std::string why = *stale ? "holds an address of '" + plan_.buffers[owner].name +
                                     "' from a reservation freed since"
                               : AccessProblemText(buffer, Access::kReadWrite, device);
      if (!why.empty())
        return "memset node '" + node.name + "' writes '" + plan_.buffers[buffer].name +
               "', which " + why;
    }
  }
  return "";
}

}  // namespace vmm
