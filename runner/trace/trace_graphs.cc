#include "runner/trace/trace_graphs.h"

namespace vmm::trace {

std::string TraceGraphs::Skip(const std::string& why) {
  ++skipped_[why];
  return "";
}

void TraceGraphs::Begin(uint64_t stream) { captures_[stream] = Capture{}; }

void TraceGraphs::Abandon(uint64_t stream) {
  if (captures_.erase(stream) != 0) ++skipped_["capture that failed to end"];
}

void TraceGraphs::Add(uint64_t stream, const std::string& step, GraphWrite write) {
  Capture& c = captures_[stream];
  c.steps.push_back(step);
  c.writes.push_back(write);
}

std::string TraceGraphs::End(uint64_t stream, uint64_t graph,
                             const std::function<bool(const GraphWrite&)>& writable) {
  auto it = captures_.find(stream);
  if (it == captures_.end()) return Skip("cuStreamEndCapture of a capture begun before the trace");
  Capture c = std::move(it->second);
  captures_.erase(it);
  if (c.steps.empty())
    return Skip("capture of kernels given no reserved memory (and what was made from it)");
  for (const GraphWrite& w : c.writes)
    if (!writable(w)) return Skip("capture of memory unmapped before the capture ended");
  Graph& g = graphs_[graph];
  g.name = "g" + std::to_string(next_graph_++);
  g.writes = c.writes;
  std::string body;
  for (const std::string& s : c.steps) body += (body.empty() ? "" : ", ") + s;
  return "{op: capture, graph: " + g.name + ", steps: [" + body + "]}";
}

std::string TraceGraphs::Instantiate(uint64_t graph, uint64_t exec) {
  auto it = graphs_.find(graph);
  if (it == graphs_.end())
    return Skip("capture of kernels given no reserved memory (and what was made from it)");
  Graph& e = execs_[exec];
  e.name = "e" + std::to_string(next_exec_++);
  e.writes = it->second.writes;
  return "{op: instantiate, graph: " + it->second.name + ", exec: " + e.name + "}";
}

std::string TraceGraphs::Replay(uint64_t exec, std::vector<GraphWrite>* writes) {
  auto it = execs_.find(exec);
  if (it == execs_.end())
    return Skip("capture of kernels given no reserved memory (and what was made from it)");
  *writes = it->second.writes;
  return "{op: replay, exec: " + it->second.name + "}";
}

std::string TraceGraphs::DestroyGraph(uint64_t graph) {
  auto it = graphs_.find(graph);
  if (it == graphs_.end())
    return Skip("capture of kernels given no reserved memory (and what was made from it)");
  const std::string step = "{op: destroy_graph, graph: " + it->second.name + "}";
  graphs_.erase(it);
  return step;
}

std::string TraceGraphs::DestroyExec(uint64_t exec) {
  auto it = execs_.find(exec);
  if (it == execs_.end())
    return Skip("capture of kernels given no reserved memory (and what was made from it)");
  const std::string step = "{op: destroy_exec, exec: " + it->second.name + "}";
  execs_.erase(it);
  return step;
}

}  // namespace vmm::trace
