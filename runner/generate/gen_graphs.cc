// The generator's graph actions: capture (every node kind), instantiate, replay, update (with a
// variant of the exec's graph whose result the generator knows), set_node and destroy. A replay's
// effect on the data is simulated node by node on a copy of the model, which is kept only when
// every node could run.
#include <algorithm>

#include "runner/generate/generator_impl.h"
#include "runner/generate/graph_model.h"

namespace vmm::gen {

using Type = Node::Type;

std::vector<Node> Generator::MakeBody(int depth, bool conditional_body, int device, bool* memory) {
  std::vector<Node> body;
  const int count = static_cast<int>(rng.Between(1, depth == 0 ? 4 : 2));
  std::vector<std::string> tensors, writable;
  for (const auto& [name, t] : model.tensors) {
    if (t.graph_memory || !model.reservations.at(t.buffer).reserved) continue;  // no address yet
    tensors.push_back(name);
    if (model.Accessible(t, device, Perm::kReadWrite)) writable.push_back(name);
  }
  if (tensors.empty()) return body;  // nothing has an address to capture
  // Mostly memory a replay could write now (else the exec waits for a remap to be replayed).
  auto target = [&] {
    return !writable.empty() && rng.Percent(80) ? rng.Pick(writable) : rng.Pick(tensors);
  };
  for (int i = 0; i < count; ++i) {
    Node n;
    const int roll = static_cast<int>(rng.Below(100));
    if (roll < 25) {
      n.type = Type::kFill;
      n.tensor = target();
      n.seed = rng.Below(1000);
    } else if (roll < 40) {
      n.type = Type::kMemset;
      n.tensor = target();
      n.word = rng.Percent(50) ? 0 : static_cast<uint32_t>(rng.Next());
    } else if (roll < 55) {
      n.type = Type::kCopy;
      std::vector<std::pair<std::string, std::string>> pairs;
      for (const std::string& to : tensors) {
        const Tensor& d = model.tensors[to];
        if (!model.Accessible(d, device, Perm::kReadWrite)) continue;  // checked at capture
        for (const std::string& from : tensors) {
          const Tensor& s = model.tensors[from];
          if (from != to && s.Bytes() == d.Bytes() && model.Accessible(s, device, Perm::kRead) &&
              !VaOverlap(s, d))
            pairs.emplace_back(from, to);
        }
        if (!conditional_body)
          for (const auto& [name, snap] : model.snapshots)
            if (snap.bytes == d.Bytes() && (!snap.host || snap.pinned))
              pairs.emplace_back(name, to);
      }
      if (pairs.empty()) continue;
      // Between two tensors, often a kernel's copy: a kernel node instead of a memcpy node.
      std::vector<std::pair<std::string, std::string>> between_tensors;
      for (const auto& p : pairs)
        if (model.tensors.count(p.first) > 0) between_tensors.push_back(p);
      if (!between_tensors.empty() && rng.Percent(60)) n.op = "kernel_copy";
      std::tie(n.from, n.to) = rng.Pick(n.op.empty() ? pairs : between_tensors);
    } else if (roll < 60 && model.tensors.count("MA") > 0) {
      n.type = Type::kMatmul;
      n.a = "MA", n.b = "MB", n.c = "MC";
    } else if (roll < 66) {  // add, scale or axpy: a kernel node; its inputs are judged at replay
      const std::vector<std::string>& c_pool =
          !writable.empty() && rng.Percent(80) ? writable : tensors;
      if (!PickElementwise(tensors, c_pool, false, &n)) continue;
    } else if (roll < 70 && !conditional_body) {
      n.type = Type::kHostFunc;
    } else if (roll < 80 && depth == 0) {
      n.type = rng.Percent(50) ? Type::kIf : Type::kWhile;
      n.tensor = "W";
      n.seed = rng.Below(4);  // the word's index
      n.body = MakeBody(depth + 1, true, device, memory);
      if (n.type == Type::kWhile) {
        std::set<std::string> touched, written;
        for (const Node& b : n.body) Touches(model, b, &touched, &written);
        if (written.count(model.tensors["W"].buffer) > 0) continue;  // the body may not write it
      }
      if (n.body.empty()) continue;
    } else if (roll < 88 && depth == 0 && !conditional_body) {
      n.type = Type::kParallel;
      std::set<std::string> seen;
      for (int b = 0; b < 2; ++b) {
        std::vector<Node> branch = MakeBody(depth + 1, false, device, memory);
        std::set<std::string> touched, written;
        for (const Node& x : branch) Touches(model, x, &touched, &written);
        bool clash = false;
        for (const std::string& t : touched) clash = clash || seen.count(t) > 0;
        if (clash || branch.empty()) continue;
        seen.insert(touched.begin(), touched.end());
        n.branches.push_back(std::move(branch));
      }
      if (n.branches.size() < 2) continue;
    } else if (roll < 92 && !conditional_body) {
      n.type = Type::kRecord;
      n.event = "ev" + std::to_string(rng.Below(2));
      Node wait;
      wait.type = Type::kWait;
      wait.event = n.event;
      n.name = Name("record " + n.event);
      body.push_back(n);
      wait.name = Name("wait " + wait.event);
      body.push_back(wait);
      continue;
    } else if (roll < 96 && depth == 0 && !conditional_body && model.tensors.count("GM") > 0 &&
               !gm_held) {
      Node alloc, fill, free;
      alloc.type = Type::kAlloc, fill.type = Type::kFill, free.type = Type::kFree;
      alloc.tensor = fill.tensor = free.tensor = "GM";
      fill.seed = rng.Below(1000);
      alloc.name = Name("allocate GM");
      fill.name = Name("fill GM");
      free.name = Name("free GM");
      body.push_back(alloc);
      body.push_back(fill);
      body.push_back(free);
      *memory = true;
      gm_held = true;
      continue;
    } else if (!conditional_body) {
      std::vector<std::string> children;
      for (const auto& [name, gr] : graphs)
        if (gr.live && !gr.memory && !gr.conditional && gr.device == device)
          children.push_back(name);
      if (children.empty()) continue;
      n.type = Type::kChild;
      n.from = rng.Pick(children);
      n.body = graphs[n.from].nodes;
    } else {
      continue;
    }
    body.push_back(std::move(n));
  }
  return body;
}

bool Generator::Capture() {
  const int device = Device();
  const std::string graph = Fresh("g");
  bool memory = false;
  const bool gm_before = gm_held;
  std::vector<Node> body = MakeBody(0, false, device, &memory);
  if (body.empty() || !CopiesCapturable(model, body, device) ||
      !AddressesCurrent(model, body, false)) {
    gm_held = gm_before;
    return false;
  }
  NameNodes(graph, &body);
  Stamp(model, body);
  std::vector<YamlValue> items;
  for (const Node& n : body) items.push_back(NodeStep(n, device));
  Emit(Op("capture").Add("graph", graph).Add("steps", List(std::move(items))).Build());
  Graph& g = graphs[graph];
  g.nodes = std::move(body);
  g.device = device;
  g.live = true;
  g.memory = memory;
  std::function<bool(const std::vector<Node>&)> conditional = [&](const std::vector<Node>& ns) {
    for (const Node& n : ns)
      if (n.type == Type::kIf || n.type == Type::kWhile || conditional(n.body)) return true;
    return false;
  };
  g.conditional = conditional(g.nodes);
  return true;
}

bool Generator::Instantiate() {
  std::vector<std::string> ready;
  for (const auto& [name, g] : graphs)
    if (g.live && ((!g.memory && !g.conditional) || g.live_execs == 0)) ready.push_back(name);
  if (ready.empty()) return false;
  const std::string graph = rng.Pick(ready);
  Graph& g = graphs[graph];
  if (const std::string why = UnwritableMemset(model, g.nodes, g.device, true); !why.empty()) {
    // The driver refuses it (rule memset_node_without_write_access): sometimes say so. An address
    // of a freed reservation is refused by the validator (what it points at now is unknown).
    if (why.rfind("stale ", 0) == 0 || !options.expect_errors || !rng.Percent(40)) return false;
    Emit(Op("instantiate")
             .Add("graph", graph)
             .Add("exec", Fresh("e"))
             .Add("expect_error", "CUDA_ERROR_INVALID_VALUE")
             .Build());
    return true;
  }
  const std::string exec = Fresh("e");
  MapBuilder step = Op("instantiate");
  step.Add("graph", graph).Add("exec", exec);
  if (rng.Percent(20)) step.Flag("upload", true);
  ++g.live_execs;
  execs[exec] = Exec{graph, g.nodes, g.device, true};
  Emit(step.Build());
  return true;
}

bool Generator::Replay() {
  std::vector<std::string> live;
  for (const auto& [name, e] : execs)
    if (e.live) live.push_back(name);
  if (live.empty()) return false;
  const std::string exec = rng.Pick(live);
  const Exec& e = execs[exec];
  Model after = model;
  const uint64_t repeat = rng.Percent(20) ? static_cast<uint64_t>(rng.Between(2, 3)) : 1;
  for (uint64_t i = 0; i < repeat; ++i)
    if (!RunNodes(*this, e.nodes, e.device, after, true)) return false;
  model = std::move(after);
  MapBuilder step = Op("replay");
  step.Add("exec", exec);
  if (repeat > 1) step.Num("repeat", repeat);
  Emit(step.Build());
  return true;
}

bool Generator::Update() {
  std::vector<std::string> live;
  for (const auto& [name, e] : execs)
    if (e.live && !graphs[e.graph].memory) live.push_back(name);
  if (live.empty()) return false;
  const std::string exec = rng.Pick(live);
  Exec& e = execs[exec];
  // A variant of the exec's current nodes: new parameters (success), one node more (topology
  // changed), or a fill turned into a memset (node type changed).
  std::vector<Node> variant = e.nodes;
  std::string expect = "success";
  const int mode = static_cast<int>(rng.Below(4));
  std::function<void(std::vector<Node>&)> mutate = [&](std::vector<Node>& ns) {
    for (Node& n : ns) {
      n.name.clear();
      n.enabled = true;  // a fresh capture: every node runs
      if (n.type == Type::kFill && rng.Percent(60)) n.seed = rng.Below(1000);
      if (n.type == Type::kMemset && rng.Percent(60)) n.word = static_cast<uint32_t>(rng.Next());
      if (n.type == Type::kElementwise && n.op != "add" && rng.Percent(50))
        n.alpha = PickFactor(n.op);  // a kernel node's new argument: the update takes it
      if (n.type != Type::kChild) mutate(n.body);
      for (auto& b : n.branches) mutate(b);
      if (n.type == Type::kRecord || n.type == Type::kWait) n.name = "";
    }
  };
  mutate(variant);
  // A top-level kernel copy sometimes writes elsewhere: a kernel node's new pointer argument,
  // which the update takes like any other (a memcpy node keeps its copy's direction).
  for (Node& n : variant) {
    if (n.type != Type::kCopy || n.op.empty() || !rng.Percent(40)) continue;
    const Tensor& from = model.tensors.at(n.from);
    std::vector<std::string> targets;
    for (const auto& [name, t] : model.tensors)
      if (name != n.from && t.Bytes() == from.Bytes() && !t.graph_memory &&
          model.reservations.at(t.buffer).reserved &&
          model.Accessible(t, e.device, Perm::kReadWrite) && !VaOverlap(t, from) &&
          !model.PhysOverlap(t, from))
        targets.push_back(name);
    if (!targets.empty()) n.to = rng.Pick(targets);
  }
  if (mode == 1) {
    Node extra;
    extra.type = Type::kHostFunc;
    variant.push_back(extra);
    expect = "error_topology_changed";
  } else if (mode == 2) {
    bool changed = false;
    for (Node& n : variant)
      if (!changed && n.type == Type::kFill) {
        n.type = Type::kMemset;
        n.word = 0;
        changed = true;
      }
    if (!changed) return false;
    expect = "error_node_type_changed";
  }
  const std::string graph = Fresh("g");
  // Events and memory nodes keep names made when they were first captured; give them new ones.
  std::function<void(std::vector<Node>&)> rename = [&](std::vector<Node>& ns) {
    for (Node& n : ns) {
      if (n.type == Type::kRecord) n.name = Name("record " + n.event);
      if (n.type == Type::kWait) n.name = Name("wait " + n.event);
      if (n.type != Type::kChild) rename(n.body);
      for (auto& b : n.branches) rename(b);
    }
  };
  rename(variant);
  NameNodes(graph, &variant);
  Stamp(model, variant);
  if (!CopiesCapturable(model, variant, e.device) || !AddressesCurrent(model, variant, false))
    return false;
  // A child graph node copies a graph that must still live (in a fork's branches too).
  std::function<bool(const std::vector<Node>&)> children_live = [&](const std::vector<Node>& ns) {
    for (const Node& n : ns) {
      if (n.type == Type::kChild) {
        if (!graphs[n.from].live) return false;
        continue;  // its body is the copy made at its capture
      }
      if (!children_live(n.body)) return false;
      for (const auto& b : n.branches)
        if (!children_live(b)) return false;
    }
    return true;
  };
  if (!children_live(variant)) return false;
  // A memset whose parameters change is checked again: where the exec's device may not write,
  // the H200 answered cudaGraphExecUpdateError; an unchanged one is not checked. A topology
  // change is found first.
  if (const int refused = ChangedUnwritableMemset(model, e.nodes, variant, e.device)) {
    if (refused == 2) return false;   // depends on where the driver put a reservation again
    if (mode == 2) return false;      // which refusal the driver finds first was not measured
    if (mode != 1) expect = "error";  // modes 0 and 3 change parameters only
  }
  std::vector<YamlValue> items;
  for (const Node& n : variant) items.push_back(NodeStep(n, e.device));
  Emit(Op("capture").Add("graph", graph).Add("steps", List(std::move(items))).Build());
  Graph& g = graphs[graph];
  g.nodes = variant;
  g.device = e.device;
  g.live = true;
  g.conditional = graphs[e.graph].conditional;
  MapBuilder step = Op("update");
  step.Add("exec", exec).Add("graph", graph);
  if (expect != "success" || rng.Percent(50)) step.Add("expect", expect);
  Emit(step.Build());
  if (expect == "success") {
    KeepNames(e.nodes, &variant);
    e.nodes = std::move(variant);
  }
  return true;
}

bool Generator::SetNode() {
  struct Target {
    std::string exec, node;
    bool params = true;  // false: set_node may only enable or disable it (add, scale, axpy,
                         // kernel_copy)
  };
  std::vector<Target> targets;
  for (const auto& [name, e] : execs) {
    if (!e.live || !graphs[e.graph].live) continue;
    std::function<void(const std::vector<Node>&)> walk = [&](const std::vector<Node>& ns) {
      for (const Node& n : ns) {
        const bool writable =
            n.type == Type::kMemset &&
            model.Accessible(model.tensors.at(n.tensor), e.device, Perm::kReadWrite);
        if (n.type == Type::kFill || writable) targets.push_back({name, n.name});
        if (n.type == Type::kElementwise || (n.type == Type::kCopy && !n.op.empty()))
          targets.push_back({name, n.name, false});
        for (const auto& b : n.branches) walk(b);
      }
    };
    walk(e.nodes);
  }
  if (targets.empty()) return false;
  const Target t = rng.Pick(targets);
  Exec& e = execs[t.exec];
  std::function<Node*(std::vector<Node>&)> find = [&](std::vector<Node>& ns) -> Node* {
    for (Node& n : ns) {
      if (n.name == t.node) return &n;
      for (auto& b : n.branches)
        if (Node* f = find(b)) return f;
    }
    return nullptr;
  };
  Node* n = find(e.nodes);
  MapBuilder step = Op("set_node");
  step.Add("exec", t.exec).Add("node", t.node);
  if (!t.params || rng.Percent(30)) {
    n->enabled = !n->enabled;
    step.Flag("enabled", n->enabled);
    Emit(step.Build());
    return true;
  }
  std::vector<Node> one = {*n};
  Stamp(model, one);  // new parameters hold the buffers' addresses now
  n->captured = one[0].captured;
  if (n->type == Type::kFill) {
    n->seed = rng.Below(1000);
    step.Num("seed", n->seed);
  } else {
    n->word = static_cast<uint32_t>(rng.Below(4));
    step.Num("value", n->word);
  }
  Emit(step.Build());
  return true;
}

bool Generator::DestroyGraphOrExec() {
  std::vector<std::string> live_execs, live_graphs;
  for (const auto& [name, e] : execs)
    if (e.live) live_execs.push_back(name);
  for (const auto& [name, g] : graphs)
    if (g.live) live_graphs.push_back(name);
  if (!live_execs.empty() && (live_graphs.empty() || rng.Percent(50))) {
    const std::string exec = rng.Pick(live_execs);
    execs[exec].live = false;
    --graphs[execs[exec].graph].live_execs;
    Emit(Op("destroy_exec").Add("exec", exec).Build());
    return true;
  }
  if (live_graphs.empty()) return false;
  const std::string graph = rng.Pick(live_graphs);
  graphs[graph].live = false;
  if (graphs[graph].memory) gm_held = false;
  Emit(Op("destroy_graph").Add("graph", graph).Build());
  return true;
}

}  // namespace vmm::gen
