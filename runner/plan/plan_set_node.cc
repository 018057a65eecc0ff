// PlanBuilder's per-node updates (set_node): the node, named by the captured step that made it, in
// the graph the exec was instantiated from (which must be live: CUDA names an exec's nodes by that
// graph's); the fields its type takes; memset and memcpy nodes keep their size; only kernel, memset
// and memcpy nodes can be disabled; and after the change no two unordered nodes race.
#include <string_view>
#include <utility>

#include "runner/base/format.h"
#include "runner/plan/plan_builder.h"

namespace vmm {

namespace {

// One key of a node's parameters and, for a buffer, the PlanStep slot it fills and how the node
// uses that buffer.
struct NodeKey {
  const char* key = nullptr;
  int PlanStep::*slot = nullptr;  // nullptr: a value (seed, value, byte), not a buffer
  Access use = Access::kRead;
};

// What set_node may change on a node, one row per op whose nodes take new parameters. A node of any
// other op takes only `enabled`. The rules a change must keep (sizes, shapes, overlaps, access)
// follow the table in SetNode.
struct SettableNode {
  Op op;
  NodeKey keys[3];       // the unused ones have no key
  const char* accepted;  // the keys as a message lists them
  bool keeps_size;       // memset and memcpy nodes keep their width: a new buffer must match it
};
constexpr SettableNode kSettableNodes[] = {
    {Op::kFill,
     {{"buffer", &PlanStep::buffer, Access::kReadWrite}, {"seed"}},
     "buffer and seed",
     false},
    {Op::kMatmul,
     {{"a", &PlanStep::a, Access::kRead},
      {"b", &PlanStep::b, Access::kRead},
      {"c", &PlanStep::c, Access::kReadWrite}},
     "a, b and c",
     false},
    {Op::kMemset,
     {{"buffer", &PlanStep::buffer, Access::kReadWrite}, {"value"}, {"byte"}},
     "buffer and value or byte",
     true},
    {Op::kCopy,  // a copy from a host snapshot keeps its source: `to` only (Takes)
     {{"from", &PlanStep::other, Access::kRead}, {"to", &PlanStep::buffer, Access::kReadWrite}},
     "from and to",
     true},
};

const SettableNode* SettableRow(Op op) {
  for (const SettableNode& row : kSettableNodes)
    if (row.op == op) return &row;
  return nullptr;
}

// The row's key `key`, or nullptr when the node does not take it.
const NodeKey* Takes(const SettableNode* row, std::string_view key, bool host_source) {
  if (row == nullptr || (host_source && key == "from")) return nullptr;
  for (const NodeKey& k : row->keys)
    if (k.key != nullptr && key == k.key) return &k;
  return nullptr;
}

// The buffers a node of `spec`'s op touches with its parameters, in the row's order (a buffer the
// node does not name, -1, is left out by the caller).
std::vector<std::pair<int, Access>> UsesOf(const SettableNode& row, const PlanStep& spec) {
  std::vector<std::pair<int, Access>> uses;
  for (const NodeKey& k : row.keys)
    if (k.slot != nullptr) uses.emplace_back(spec.*k.slot, k.use);
  return uses;
}

// The step keys that name a buffer, in the order their messages come.
constexpr const char* kBufferKeys[] = {"buffer", "a", "b", "c", "from", "to"};
const Located<std::string>& BufferKey(const Step& step, std::string_view key) {
  return key == "buffer" ? step.buffer()
         : key == "a"    ? step.a()
         : key == "b"    ? step.b()
         : key == "c"    ? step.c()
         : key == "from" ? step.from()
                         : step.to();
}

}  // namespace

void PlanBuilder::CheckExecRaces(const Step& step, const ExecModel& exec) {
  const GraphModel& g = graph_models_[exec.graph];
  for (size_t n = 0; n < exec.nodes.size(); ++n) {
    for (size_t m = 0; m < n; ++m) {
      if (g.ancestors.size() <= n || g.ancestors[n][m]) continue;
      if (std::string race = Race(exec.nodes[m], exec.nodes[n]); !race.empty()) {
        return Error(step.loc, "after this change " + race);
      }
    }
  }
}

void PlanBuilder::SetNode(const Step& step, PlanStep* p) {
  ResolveExec(step, p);
  if (p->exec < 0) return;
  ExecModel& exec = exec_models_[p->exec];
  if (exec.graph < 0) return;
  const std::string& graph = plan_.graphs[exec.graph];
  if (graphs_.LiveSlot(graph) != exec.graph) {
    return Error(At(step.exec(), step),
                 "set_node on exec '" + step.exec().value + "' needs graph '" + graph +
                     "', which it was instantiated from: CUDA names an exec's nodes by that "
                     "graph's nodes, and it is no longer live (keep it until the last set_node)");
  }
  int index = -1;
  std::vector<std::string> names;
  for (size_t i = 0; i < exec.nodes.size(); ++i) {
    if (!exec.nodes[i].named) continue;
    names.push_back(exec.nodes[i].name);
    if (exec.nodes[i].name == step.node().value) index = static_cast<int>(i);
  }
  if (index < 0) {
    const std::string close = SuggestName(step.node().value, names);
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    return Error(At(step.node(), step),
                 "exec '" + step.exec().value + "' has no node made by a step named '" +
                     step.node().value + "' (in the capture of '" + graph + "')" +
                     (!close.empty() ? "; did you mean '" + close + "'?"
                      : list.empty() ? "; name the captured steps to refer to their nodes"
                                     : "; its named nodes: " + list));
  }
  NodeModel& node = exec.nodes[index];
  p->node_name = node.name;
  const std::string what = "node '" + node.name + "' (" + NodeTypeName(node.type) + ")";
  // Which keys the node takes: its op's row.
  const Op op = node.spec.op;
  const SettableNode* row = SettableRow(op);
  const char* accepted = row == nullptr ? "" : node.host_source ? "to" : row->accepted;
  bool changes = false, ok = true, given = step.enabled().set;
  auto refuse_key = [&](const char* key, const SourceLoc& loc) {
    given = true;
    Error(loc,
          std::string("set_node: '") + key + "' does not apply to " + what +
              (*accepted != '\0' ? std::string("; it takes ") + accepted
                                 : std::string("; its parameters cannot be set, only 'enabled'")));
    ok = false;
  };
  PlanStep spec = node.spec;
  for (const char* key : kBufferKeys) {
    const Located<std::string>& field = BufferKey(step, key);
    if (!field.set) continue;
    const NodeKey* k = Takes(row, key, node.host_source);
    if (k == nullptr) {
      refuse_key(key, field.loc);
      continue;
    }
    changes = true;
    const int slot = ResolveBuffer(field, step);
    if (slot < 0) {
      ok = false;
      continue;
    }
    const int old = std::exchange(spec.*k->slot, slot);
    // Memset and memcpy nodes keep their size: cudaGraphExecMemsetNodeSetParams and
    // cudaGraphExecMemcpyNodeSetParams1D may refuse a new width.
    if (row->keeps_size && old >= 0 && plan_.buffers[old].bytes != plan_.buffers[slot].bytes) {
      Error(field.loc, "set_node: " + what + " moves " + FormatBytes(plan_.buffers[old].bytes) +
                           "; '" + field.value + "' has " + FormatBytes(plan_.buffers[slot].bytes) +
                           " (a memset or memcpy node keeps its size)");
      ok = false;
    }
  }
  if (step.seed().set) {
    if (Takes(row, "seed", node.host_source) != nullptr) {
      spec.seed = step.seed().value;
      changes = true;
    } else {
      refuse_key("seed", step.seed().loc);
    }
  }
  if (step.value().set || step.byte().set) {
    if (Takes(row, "value", node.host_source) != nullptr) {
      Pattern(step, &spec);
      changes = true;
    } else {
      refuse_key(step.value().set ? "value" : "byte",
                 At(step.value().set ? step.value() : step.byte(), step));
    }
  }
  if (step.enabled().set) {
    if (!CanDisable(node.type)) {
      Error(At(step.enabled(), step), "set_node: " + what +
                                          " cannot be enabled or disabled; cudaGraphNodeSetEnabled "
                                          "takes kernel, memset and memcpy nodes only");
      ok = false;
    }
    p->enabled = step.enabled().value ? 1 : 0;
  }
  if (!changes && !given) {
    return Error(step.loc, "set_node changes nothing: give " + what + " new parameters" +
                               (*accepted != '\0' ? " (" + std::string(accepted) + ")" : "") +
                               " or 'enabled'");
  }
  if (!ok) return;
  // A buffer the capture could not resolve (reported at the captured step) stays -1 in the node:
  // nothing about it can be checked here.
  if (op == Op::kMatmul && changes) {
    if (spec.a < 0 || spec.b < 0 || spec.c < 0) return;
    if (!MatmulShapes(step, &spec)) return;
    if (Overlap(spec.c, spec.a) || Overlap(spec.c, spec.b)) {
      return Error(step.loc, "set_node: the matmul output '" + plan_.buffers[spec.c].name +
                                 "' would overlap an input");
    }
  }
  if (op == Op::kCopy && spec.other >= 0 && spec.buffer >= 0 && Overlap(spec.other, spec.buffer)) {
    return Error(step.loc, "set_node: the copy's source and destination would overlap");
  }
  // As at instantiate: cudaGraphExecMemsetNodeSetParams checks the destination (the H200 refused
  // one mapped read-only, cudaErrorInvalidValue).
  if (op == Op::kMemset && changes && spec.buffer >= 0) {
    if (std::string why =
            AccessProblemText(spec.buffer, Access::kReadWrite, exec_devices_[p->exec]);
        !why.empty()) {
      return Error(step.loc, "set_node: " + what + " would write '" +
                                 plan_.buffers[spec.buffer].name + "', which " + why +
                                 " at this step: cudaGraphExecMemsetNodeSetParams refuses that "
                                 "(CUDA_ERROR_INVALID_VALUE on the H200); set_access first");
    }
  }
  if (changes) {
    spec.body.clear();
    node.spec = spec;
    node.uses = UsesOf(*row, spec);  // changes: the op has a row
    std::erase_if(node.uses, [](const std::pair<int, Access>& u) { return u.first < 0; });
    // The new parameters hold the buffers' addresses now.
    node.reservation_ids = ReservationIds(node.uses, nullptr);
    p->body.push_back(std::move(spec));
  }
  if (step.enabled().set) exec.enabled[index] = step.enabled().value;
  CheckExecRaces(step, exec);
}

}  // namespace vmm
