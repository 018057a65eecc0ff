// UpdateExec: cudaGraphExecUpdate's rules on host graphs (host_graph.h states them).
#include <deque>
#include <utility>

#include "runner/engine/host/host_graph.h"

namespace vmm::host {
namespace {

struct Refusal {
  UpdateCode code = UpdateCode::kSuccess;
  std::string node, from_node;
  bool memset = false;  // a memset node over memory the device may not write (kError)
};

// The sinks of `g` (nodes nothing depends on), in creation order.
std::vector<uint32_t> Sinks(const HostGraph& g) {
  std::vector<bool> has_dependent(g.nodes.size(), false);
  for (const GraphNode& node : g.nodes)
    for (uint32_t d : node.dependencies) has_dependent[d] = true;
  std::vector<uint32_t> sinks;
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    if (!has_dependent[i]) sinks.push_back(i);
  return sinks;
}

// Pairs the nodes of `graph` with those of `exec` (pair[i]: the exec node of graph node i), or
// says why the topology differs.
Refusal Pair(const HostGraph& exec, const HostGraph& graph, std::vector<int>* pair) {
  Refusal r;
  r.code = UpdateCode::kErrorTopologyChanged;
  const size_t n = graph.nodes.size();
  if (exec.nodes.size() != n) return r;  // no error node
  const std::vector<uint32_t> gs = Sinks(graph), es = Sinks(exec);
  if (gs.size() > es.size()) {
    r.node = graph.nodes[gs[es.size()]].name;
    return r;
  }
  pair->assign(n, -1);
  std::vector<int> back(n, -1);  // exec node -> graph node
  std::deque<uint32_t> work;
  for (size_t i = 0; i < gs.size(); ++i) {
    (*pair)[gs[i]] = static_cast<int>(es[i]);
    back[es[i]] = static_cast<int>(gs[i]);
    work.push_back(gs[i]);
  }
  while (!work.empty()) {
    const uint32_t g = work.front();
    work.pop_front();
    const GraphNode& gn = graph.nodes[g];
    const GraphNode& en = exec.nodes[(*pair)[g]];
    if (gn.dependencies.size() != en.dependencies.size()) {
      r.node = gn.name;
      return r;
    }
    for (size_t k = 0; k < gn.dependencies.size(); ++k) {
      const uint32_t gd = gn.dependencies[k], ed = en.dependencies[k];
      if ((*pair)[gd] < 0 && back[ed] < 0) {
        (*pair)[gd] = static_cast<int>(ed);
        back[ed] = static_cast<int>(gd);
        work.push_back(gd);
      } else if ((*pair)[gd] != static_cast<int>(ed)) {
        r.node = gn.name;
        r.from_node = graph.nodes[gd].name;
        return r;
      }
    }
  }
  for (size_t i = 0; i < n; ++i)
    if ((*pair)[i] < 0) return r;  // not reachable from a paired sink: no error node
  r.code = UpdateCode::kSuccess;
  return r;
}

Refusal CheckGraph(const HostGraph& exec, const HostGraph& graph, std::vector<int>* pair,
                   const MemsetCheck& writable);

// The rules for one pair of nodes of the same position. Graph memory nodes (mem_alloc, mem_free)
// pair like any other node: on the H200 (driver 580, CUDA 13) an update between two graphs of the
// same shape with memory nodes returned success and the exec then ran the new graph's work
// (reports/h200/merge-all, docs/backends.md). Older documentation says such updates are not
// supported; the twin follows the GPU.
Refusal CheckNode(const GraphNode& e, const GraphNode& g, const MemsetCheck& writable) {
  Refusal r;
  r.node = g.name;
  if (e.type != g.type) {
    r.code = UpdateCode::kErrorNodeTypeChanged;
  } else if (g.type == NodeType::kMemset &&
             (e.dst != g.dst || e.pattern != g.pattern || e.count != g.count) && writable &&
             !writable(g)) {
    // A memset whose parameters change is checked again, as at instantiate: the H200 answered
    // cudaGraphExecUpdateError for one over memory the device may not write, and success for an
    // unchanged one (tools/twin_fidelity_probe.cc, `vmm-run crosscheck`; reports/h200/session9).
    r.code = UpdateCode::kError;
    r.memset = true;
  } else if (g.type == NodeType::kMemcpy &&
             (e.src_place != g.src_place || e.dst_place != g.dst_place)) {
    r.code = UpdateCode::kErrorParametersChanged;  // a side's memory type changed
  } else if (g.type == NodeType::kConditional && e.condition.kind != g.condition.kind) {
    // An if paired with a while: the H200 answered cudaGraphExecUpdateErrorNotSupported
    // (tools/twin_fidelity_probe.cc, reports/h200/session9).
    r.code = UpdateCode::kErrorNotSupported;
  } else if (g.type == NodeType::kGraph || g.type == NodeType::kConditional) {
    // A conditional node's body updates like a child graph: on the H200 (driver 580) an update
    // between two captures with if / while nodes of the same shape returned success and the exec
    // then ran the new body (docs/backends.md, "Conditional nodes").

    std::vector<int> inner;
    r = CheckGraph(*e.child, *g.child, &inner, writable);
    // A child graph's changed node count names the child node; a conditional body's names none
    // (the H200, scenarios/conditional_update.yaml).
    if (r.code == UpdateCode::kErrorTopologyChanged && r.node.empty() && g.type == NodeType::kGraph)
      r.node = g.name;
  }
  if (r.code == UpdateCode::kSuccess) r.node.clear();
  return r;
}

// `g`'s nodes walked back from its sinks, the sinks taken newest first, each node's dependencies
// in edge order (breadth first): the order in which the H200 names a refused memset (below).
std::vector<size_t> BackwardRank(const HostGraph& g) {
  std::vector<uint32_t> sinks = Sinks(g);
  std::vector<size_t> rank(g.nodes.size(), g.nodes.size());
  std::deque<uint32_t> work(sinks.rbegin(), sinks.rend());
  size_t next = 0;
  std::vector<bool> seen(g.nodes.size(), false);
  for (uint32_t s : sinks) seen[s] = true;
  while (!work.empty()) {
    const uint32_t u = work.front();
    work.pop_front();
    rank[u] = next++;
    for (uint32_t d : g.nodes[u].dependencies) {
      if (seen[d]) continue;
      seen[d] = true;
      work.push_back(d);
    }
  }
  return rank;
}

Refusal CheckGraph(const HostGraph& exec, const HostGraph& graph, std::vector<int>* pair,
                   const MemsetCheck& writable) {
  Refusal r = Pair(exec, graph, pair);
  if (r.code != UpdateCode::kSuccess) return r;
  // The H200 stops at the first refusal in creation order that is not a memset's (crosscheck,
  // reports/h200/session9). Of the memsets it refuses it names the first met walking back from
  // the sinks, newest sink first (BackwardRank): the last of a chain, the one before a fork whose
  // branch goes on past its own memset (tools/probes/update_error_node and
  // scenarios/update_error_node.yaml on the H200, reports/h200/session15). A memset refused inside
  // a conditional body or child graph counts at its node's place (reports/h200/session10).
  Refusal memset;
  size_t memset_rank = 0;
  std::vector<size_t> rank;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    r = CheckNode(exec.nodes[(*pair)[i]], graph.nodes[i], writable);
    if (r.code == UpdateCode::kError && r.memset) {
      if (rank.empty()) rank = BackwardRank(graph);
      if (memset.code != UpdateCode::kError || rank[i] < memset_rank) {
        memset = r;
        memset_rank = rank[i];
      }
      continue;
    }
    if (r.code != UpdateCode::kSuccess) return r;
  }
  return memset.code == UpdateCode::kError ? memset : r;
}

}  // namespace

UpdateResult UpdateExec(HostGraph* exec, const HostGraph& graph, const MemsetCheck& writable) {
  UpdateResult result;
  std::vector<int> pair;
  const Refusal r = CheckGraph(*exec, graph, &pair, writable);
  if (r.code != UpdateCode::kSuccess) {
    result.code = r.code;
    result.error_node = r.node;
    result.error_from_node = r.from_node;
    result.api_error = "cudaErrorGraphExecUpdateFailure";
    return result;
  }
  // The exec keeps its names, edges and enabled states and takes everything else.
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    GraphNode& target = exec->nodes[pair[i]];
    GraphNode next = graph.nodes[i];
    next.name = std::move(target.name);
    next.dependencies = std::move(target.dependencies);
    next.enabled = target.enabled;
    target = std::move(next);
  }
  result.code = UpdateCode::kSuccess;
  return result;
}

}  // namespace vmm::host
