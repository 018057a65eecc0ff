// PlanBuilder's graph steps: capture, instantiate, replay, update, destroy_graph, destroy_exec.
// A graph remembers the buffers its kernels touch; an exec inherits them at instantiate and takes
// the new graph's at update, and a replay checks them against the memory state at that step.
#include "runner/plan/plan_builder.h"

namespace vmm {

void PlanBuilder::Capture(const Step& step, PlanStep* p) {
  BufferUses uses;
  if (step.steps.empty())
    Error(step.loc, "capture '" + step.graph.value + "' records nothing; add fill or matmul steps");
  p->body.reserve(step.steps.size());
  for (size_t i = 0; i < step.steps.size(); ++i)
    p->body.push_back(Visit(step.steps[i], static_cast<int>(i), &uses));
  std::string error;
  p->graph = graphs_.Create(step.graph.value, step.loc.line, &error);
  if (!error.empty()) return Error(At(step.graph, step), error);
  graph_uses_.push_back(std::move(uses));
}

void PlanBuilder::Graphs(const Step& step, PlanStep* p) {
  std::string error;
  const bool needs_graph =
      step.op == Op::kInstantiate || step.op == Op::kUpdate || step.op == Op::kDestroyGraph;
  const bool needs_exec = step.op != Op::kInstantiate && step.op != Op::kDestroyGraph;
  if (needs_graph) {
    p->graph = graphs_.Resolve(step.graph.value, &error);
    if (p->graph < 0) Error(At(step.graph, step), error);
  }
  if (needs_exec) {
    p->exec = execs_.Resolve(step.exec.value, &error);
    if (p->exec < 0) Error(At(step.exec, step), error);
  }
  switch (step.op) {
    case Op::kInstantiate:
      p->exec = execs_.Create(step.exec.value, step.loc.line, &error);
      if (!error.empty()) return Error(At(step.exec, step), error);
      exec_uses_.push_back(p->graph >= 0 ? graph_uses_[p->graph] : BufferUses{});
      return;
    case Op::kReplay:
      if (p->exec < 0) return;
      for (const auto& [buffer, need] : exec_uses_[p->exec])
        Use(buffer, need, "replay of '" + step.exec.value + "' would touch", At(step.exec, step));
      return;
    case Op::kUpdate:
      // cudaGraphExecUpdate copies the graph's parameters: from now on the exec touches its
      // buffers.
      if (p->exec >= 0 && p->graph >= 0) exec_uses_[p->exec] = graph_uses_[p->graph];
      return;
    case Op::kDestroyGraph:
      // Execs made from the graph stay valid (CUDA semantics).
      graphs_.End(step.graph.value, step.loc.line);
      return;
    case Op::kDestroyExec:
      execs_.End(step.exec.value, step.loc.line);
      return;
    default:
      return;
  }
}

}  // namespace vmm
