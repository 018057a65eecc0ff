// PlanBuilder's graph steps: capture, instantiate, replay, update, destroy_graph, destroy_exec, and
// synchronize. A graph remembers the buffers its kernels touch; an exec inherits them at
// instantiate and takes the new graph's at update, and a replay checks them against the memory
// state at that step.
#include "runner/plan/plan_builder.h"

namespace vmm {

void PlanBuilder::ResolveGraph(const Step& step, PlanStep* p) {
  std::string error;
  p->graph = graphs_.Resolve(step.graph.value, &error);
  if (p->graph < 0) {
    Error(At(step.graph, step),
          error + (LiveInParent(&PlanBuilder::graphs_, step.graph.value) ? BlockHint() : ""));
  }
}

void PlanBuilder::ResolveExec(const Step& step, PlanStep* p) {
  std::string error;
  p->exec = execs_.Resolve(step.exec.value, &error);
  if (p->exec < 0) {
    Error(At(step.exec, step),
          error + (LiveInParent(&PlanBuilder::execs_, step.exec.value) ? BlockHint() : ""));
  }
}

template <>
void PlanBuilder::PlanOp<Op::kCapture>(const Step& step, PlanStep* p, BufferUses*) {
  BufferUses uses;
  if (step.steps.empty())
    Error(step.loc, "capture '" + step.graph.value + "' records nothing; add fill or matmul steps");
  p->body.reserve(step.steps.size());
  for (size_t i = 0; i < step.steps.size(); ++i)
    p->body.push_back(Visit(step.steps[i], static_cast<int>(i), &uses));
  // A capture records one device's stream: the graph's kernels run on the device of the first.
  if (!p->body.empty()) p->device = p->body.front().device;
  for (size_t i = 1; i < p->body.size(); ++i) {
    if (p->body[i].device == p->device) continue;
    const Step& inner = step.steps[i];
    Error(At(inner.device, inner),
          "a capture records on one device's stream: this " + std::string(OpName(inner.op)) +
              " runs on device " + std::to_string(p->body[i].device) + ", the capture's first " +
              OpName(step.steps[0].op) + " (line " + std::to_string(step.steps[0].loc.line) +
              ") on device " + std::to_string(p->device) + "; capture each device's work apart");
  }
  std::string error;
  p->graph = graphs_.Create(step.graph.value, step.loc.line, &error);
  if (!error.empty()) return Error(At(step.graph, step), error);
  graph_uses_.push_back(std::move(uses));
  graph_devices_.push_back(p->device);
}

template <>
void PlanBuilder::PlanOp<Op::kInstantiate>(const Step& step, PlanStep* p, BufferUses*) {
  ResolveGraph(step, p);
  std::string error;
  // The exec runs the graph's kernels where they were captured: `device` may only say so.
  const int graph_device = p->graph >= 0 ? graph_devices_[p->graph] : p->device;
  if (step.device.set && p->device != graph_device) {
    Error(step.device.loc,
          "graph '" + step.graph.value + "' was captured on device " +
              std::to_string(graph_device) +
              "; its exec runs its kernels there: instantiate it on device " +
              std::to_string(graph_device) +
              ", or capture its kernels with 'device: " + std::to_string(p->device) + "'");
  }
  p->device = graph_device;
  p->exec = execs_.Create(step.exec.value, step.loc.line, &error);
  if (!error.empty()) return Error(At(step.exec, step), error);
  exec_uses_.push_back(p->graph >= 0 ? graph_uses_[p->graph] : BufferUses{});
  exec_devices_.push_back(p->device);
}

template <>
void PlanBuilder::PlanOp<Op::kReplay>(const Step& step, PlanStep* p, BufferUses*) {
  ResolveExec(step, p);
  if (p->exec < 0) return;
  p->device = exec_devices_[p->exec];  // an exec replays on the device it was instantiated on
  for (const auto& [buffer, need] : exec_uses_[p->exec]) {
    Use(buffer, need, "replay of '" + step.exec.value + "' would touch", At(step.exec, step),
        p->device);
  }
}

template <>
void PlanBuilder::PlanOp<Op::kUpdate>(const Step& step, PlanStep* p, BufferUses*) {
  ResolveGraph(step, p);
  ResolveExec(step, p);
  // cudaGraphExecUpdate copies the graph's parameters: from now on the exec touches its buffers.
  if (p->exec >= 0 && p->graph >= 0) {
    exec_uses_[p->exec] = graph_uses_[p->graph];
    p->device = exec_devices_[p->exec];
    if (graph_devices_[p->graph] != p->device) {
      Error(At(step.graph, step), "graph '" + step.graph.value + "' was captured on device " +
                                      std::to_string(graph_devices_[p->graph]) + ", exec '" +
                                      step.exec.value + "' runs on device " +
                                      std::to_string(p->device) +
                                      "; an update takes a graph of the exec's own device");
    }
  }
  p->expect = Expectation::kUpdateCode;
  p->expect_update = UpdateCode::kSuccess;
  const std::string& e = step.expect.value;
  if (!e.empty() && !ParseUpdateCode(e, &p->expect_update)) {
    Error(At(step.expect, step),
          "'expect' of update must be an update result such as success, got '" + e + "'");
  }
}

template <>
void PlanBuilder::PlanOp<Op::kDestroyGraph>(const Step& step, PlanStep* p, BufferUses*) {
  ResolveGraph(step, p);
  // Execs made from the graph stay valid (CUDA semantics).
  graphs_.End(step.graph.value, step.loc.line);
}

template <>
void PlanBuilder::PlanOp<Op::kDestroyExec>(const Step& step, PlanStep* p, BufferUses*) {
  ResolveExec(step, p);
  execs_.End(step.exec.value, step.loc.line);
}

template <>
void PlanBuilder::PlanOp<Op::kSynchronize>(const Step&, PlanStep*, BufferUses*) {}

}  // namespace vmm
