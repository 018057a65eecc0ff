// The generator's graph actions: capture (every node kind), instantiate, replay, update (with a
// variant of the exec's graph whose result the generator knows), set_node and destroy. A replay's
// effect on the data is simulated node by node on a copy of the model, which is kept only when
// every node could run.
#include <algorithm>

#include "runner/generate/generator_impl.h"

namespace vmm::gen {
namespace {

using Type = Node::Type;

// The buffers (reservations) a node touches, and those it writes.
void Touches(const Model& m, const Node& n, std::set<std::string>* touched,
             std::set<std::string>* written) {
  auto buf = [&](const std::string& t) -> std::string {
    auto it = m.tensors.find(t);
    return it == m.tensors.end() ? t : it->second.buffer;  // snapshots stand for themselves
  };
  switch (n.type) {
    case Type::kFill:
    case Type::kMemset:
    case Type::kAlloc:
    case Type::kFree:
      touched->insert(buf(n.tensor));
      written->insert(buf(n.tensor));
      break;
    case Type::kCopy:
      touched->insert(buf(n.from));
      touched->insert(buf(n.to));
      written->insert(buf(n.to));
      break;
    case Type::kMatmul:
      for (const std::string* t : {&n.a, &n.b, &n.c}) touched->insert(buf(*t));
      written->insert(buf(n.c));
      break;
    case Type::kIf:
    case Type::kWhile:
      touched->insert(buf(n.tensor));
      if (n.type == Type::kWhile) written->insert(buf(n.tensor));
      for (const Node& b : n.body) Touches(m, b, touched, written);
      break;
    case Type::kChild:
      for (const Node& b : n.body) Touches(m, b, touched, written);
      break;
    case Type::kParallel:
      for (const auto& branch : n.branches)
        for (const Node& b : branch) Touches(m, b, touched, written);
      break;
    case Type::kHostFunc:
    case Type::kRecord:
    case Type::kWait:
      break;
  }
}

// Records in each node the reservation each of its buffers has now (a child's nodes keep theirs).
void Stamp(const Model& m, std::vector<Node>& nodes) {
  for (Node& n : nodes) {
    if (n.type == Type::kChild) continue;
    n.captured.clear();
    for (const std::string* t : {&n.tensor, &n.from, &n.to, &n.a, &n.b, &n.c}) {
      auto it = m.tensors.find(*t);
      if (it == m.tensors.end() || it->second.graph_memory) continue;
      const Reservation& r = m.reservations.at(it->second.buffer);
      n.captured[it->second.buffer] = r.reserved ? r.instance : -1;
    }
    Stamp(m, n.body);
    for (auto& b : n.branches) Stamp(m, b);
  }
}

// The 32-bit word `index` of tensor `t`, when the model knows it.
std::optional<uint32_t> WordOf(const Model& m, const Tensor& t, uint64_t index) {
  Tensor word = t;
  word.offset += index * 4;
  word.shape = {1};
  const Content c = m.Read(word);
  if (c.size() == 1 && c[0].kind == PieceKind::kConst) return static_cast<uint32_t>(c[0].a);
  return std::nullopt;
}

// Runs `nodes` on `m` as a replay on `device` would; false when one could not run (memory without
// the access it needs, a read of never-written memory, an unknown or unbounded condition).
bool RunNodes(const Generator& g, const std::vector<Node>& nodes, int device, Model& m, bool run) {
  auto tensor = [&](const std::string& name) -> const Tensor* {
    auto it = m.tensors.find(name);
    return it == m.tensors.end() ? nullptr : &it->second;
  };
  auto rw = [&](const std::string& name) {
    const Tensor* t = tensor(name);
    return t != nullptr && (t->graph_memory || m.Accessible(*t, device, Perm::kReadWrite));
  };
  auto readable = [&](const std::string& name) {
    const Tensor* t = tensor(name);
    if (t == nullptr) return m.snapshots.count(name) > 0;
    return t->graph_memory || m.Accessible(*t, device, Perm::kRead);
  };
  auto content = [&](const std::string& name) {
    const Tensor* t = tensor(name);
    if (t == nullptr) return m.snapshots.at(name).content;
    return t->graph_memory ? Uniform(t->Bytes(), PieceKind::kOpaque, 0) : m.Read(*t);
  };
  for (const Node& n : nodes) {
    if (!n.enabled) continue;
    for (const auto& [buffer, instance] : n.captured) {
      const Reservation& r = m.reservations.at(buffer);
      if (instance < 0 || !r.reserved || r.instance != instance) return false;  // a stale address
    }
    switch (n.type) {
      case Type::kFill:
      case Type::kMemset: {
        if (!rw(n.tensor)) return false;
        const Tensor& t = *tensor(n.tensor);
        if (run && !t.graph_memory)
          m.Write(t, n.type == Type::kFill ? Generator::FillContent(t, n.seed)
                                           : Uniform(t.Bytes(), PieceKind::kConst, n.word));
        break;
      }
      case Type::kCopy: {
        if (!readable(n.from) || !rw(n.to)) return false;
        if (!run) break;
        const Content c = content(n.from);
        if (HasUnset(c)) return false;
        const Tensor* from = tensor(n.from);
        if (from != nullptr && m.PhysOverlap(*from, *tensor(n.to))) return false;
        m.Write(*tensor(n.to), c);
        break;
      }
      case Type::kMatmul: {
        if (!readable(n.a) || !readable(n.b) || !rw(n.c)) return false;
        if (!run) break;
        const Tensor &a = *tensor(n.a), &b = *tensor(n.b), &c = *tensor(n.c);
        if (HasUnset(m.Read(a)) || HasUnset(m.Read(b))) return false;
        if (m.PhysOverlap(c, a) || m.PhysOverlap(c, b)) return false;
        Model& mm = m;
        const Content ca = mm.Read(a), cb = mm.Read(b);
        Content out;
        if (IsConst(ca, 0) || IsConst(cb, 0)) {
          out = Uniform(c.Bytes(), PieceKind::kConst, 0);
        } else {
          const uint64_t salt = (a.shape[0] << 40) ^ (a.shape[1] << 20) ^ b.shape[1];
          out = Uniform(c.Bytes(), PieceKind::kOpaque, TokenOf({&ca, &cb}, salt));
        }
        m.Write(c, out);
        break;
      }
      case Type::kIf:
      case Type::kWhile: {
        const Tensor* w = tensor(n.tensor);
        const bool word_ok = n.type == Type::kIf ? readable(n.tensor) : rw(n.tensor);
        if (w == nullptr || !word_ok) return false;
        // Every body node needs its access whether or not it runs.
        Model probe = m;
        if (!RunNodes(g, n.body, device, probe, false)) return false;
        if (!run) break;
        const std::optional<uint32_t> word = WordOf(m, *w, n.seed);
        if (!word) return false;
        uint32_t passes = n.type == Type::kIf ? (*word != 0 ? 1 : 0) : *word;
        if (passes > 4) return false;  // a poisoned counter would loop for billions of passes
        for (uint32_t i = 0; i < passes; ++i)
          if (!RunNodes(g, n.body, device, m, true)) return false;
        if (n.type == Type::kWhile) {
          Tensor at = *w;
          at.offset += n.seed * 4;
          at.shape = {1};
          m.Write(at, Uniform(4, PieceKind::kConst, 0));
        }
        break;
      }
      case Type::kChild:
        if (!RunNodes(g, n.body, device, m, run)) return false;
        break;
      case Type::kParallel: {
        // Branches touch different buffers (capture made sure); they must not share memory now.
        std::vector<std::set<std::string>> sets;
        for (const auto& branch : n.branches) {
          std::set<std::string> touched, written;
          for (const Node& b : branch) Touches(m, b, &touched, &written);
          sets.push_back(touched);
        }
        for (size_t i = 0; i < sets.size(); ++i)
          for (size_t j = i + 1; j < sets.size(); ++j)
            for (const std::string& x : sets[i])
              for (const std::string& y : sets[j]) {
                auto tx = m.tensors.find(x), ty = m.tensors.find(y);
                if (tx != m.tensors.end() && ty != m.tensors.end() &&
                    m.PhysOverlap(tx->second, ty->second))
                  return false;
              }
        for (const auto& branch : n.branches)
          if (!RunNodes(g, branch, device, m, run)) return false;
        break;
      }
      case Type::kAlloc:
      case Type::kFree:
      case Type::kHostFunc:
      case Type::kRecord:
      case Type::kWait:
        break;
    }
  }
  return true;
}

// Node names in `nodes`, depth first (every named node).
void CollectNames(const std::vector<Node>& nodes, std::vector<std::string>* out) {
  for (const Node& n : nodes) {
    out->push_back(n.name);
    CollectNames(n.body, out);
    for (const auto& b : n.branches) CollectNames(b, out);
  }
}

// Gives every node of `to` the name and enabled state of its counterpart in `from` (same shape):
// an updated exec keeps both.
void KeepNames(const std::vector<Node>& from, std::vector<Node>* to) {
  for (size_t i = 0; i < from.size() && i < to->size(); ++i) {
    (*to)[i].name = from[i].name;
    (*to)[i].enabled = from[i].enabled;
    KeepNames(from[i].body, &(*to)[i].body);
    for (size_t b = 0; b < from[i].branches.size() && b < (*to)[i].branches.size(); ++b)
      KeepNames(from[i].branches[b], &(*to)[i].branches[b]);
  }
}

// Whether every buffer `nodes` touch is reserved now (a captured node records its address), and
// every child graph's nodes still hold the reservations their capture saw.
bool AddressesCurrent(const Model& m, const std::vector<Node>& nodes, bool child) {
  for (const Node& n : nodes) {
    if (child || n.type == Type::kChild) {
      for (const auto& [buffer, instance] : n.captured) {
        const Reservation& r = m.reservations.at(buffer);
        if (!r.reserved || r.instance != instance) return false;
      }
    } else {
      for (const std::string* t : {&n.tensor, &n.from, &n.to, &n.a, &n.b, &n.c}) {
        auto it = m.tensors.find(*t);
        if (it != m.tensors.end() && !it->second.graph_memory &&
            !m.reservations.at(it->second.buffer).reserved)
          return false;
      }
    }
    if (!AddressesCurrent(m, n.body, child || n.type == Type::kChild)) return false;
    for (const auto& b : n.branches)
      if (!AddressesCurrent(m, b, child)) return false;
  }
  return true;
}

// Whether every copy in `nodes` (bodies and branches included; a child's were captured before)
// may be captured now: a captured copy's memory is checked then (cudaMemcpyAsync).
bool CopiesCapturable(const Model& m, const std::vector<Node>& nodes, int device) {
  for (const Node& n : nodes) {
    if (n.type == Type::kCopy) {
      auto from = m.tensors.find(n.from);
      if (from != m.tensors.end() && !m.Accessible(from->second, device, Perm::kRead)) return false;
      if (!m.Accessible(m.tensors.at(n.to), device, Perm::kReadWrite)) return false;
    }
    if (n.type != Type::kChild && !CopiesCapturable(m, n.body, device)) return false;
    for (const auto& b : n.branches)
      if (!CopiesCapturable(m, b, device)) return false;
  }
  return true;
}

// The first memset node (top level, branches and, with `children`, child graphs and conditional
// bodies) whose destination `device` cannot write now at the address it holds: what
// cudaGraphInstantiate refuses. "" when none.
std::string UnwritableMemset(const Model& m, const std::vector<Node>& nodes, int device,
                             bool children) {
  for (const Node& n : nodes) {
    if (n.type == Type::kMemset && n.tensor != "GM") {
      const Tensor& t = m.tensors.at(n.tensor);
      const Reservation& r = m.reservations.at(t.buffer);
      auto stamp = n.captured.find(t.buffer);
      const bool current = stamp != n.captured.end() && r.reserved && r.instance == stamp->second;
      if (!current) return "stale " + n.name;  // never sent: the old address may hold anything
      if (!m.Accessible(t, device, Perm::kReadWrite)) return n.name;
    }
    if (children && (n.type == Type::kChild || n.type == Type::kIf || n.type == Type::kWhile)) {
      std::string why = UnwritableMemset(m, n.body, device, children);
      if (!why.empty()) return why;
    }
    for (const auto& b : n.branches) {
      std::string why = UnwritableMemset(m, b, device, children);
      if (!why.empty()) return why;
    }
  }
  return "";
}

// Whether a memset of `now` whose parameters differ from its counterpart in `before` (same
// shape, position by position, bodies and branches included) writes where `device` may not: 1,
// or 2 when that depends on where the driver put a reservation made again since (its address may
// or may not be the old one), else 0.
int ChangedUnwritableMemset(const Model& m, const std::vector<Node>& before,
                            const std::vector<Node>& now, int device) {
  int worst = 0;
  for (size_t i = 0; i < now.size() && i < before.size(); ++i) {
    const Node &n = now[i], &b = before[i];
    if (n.type == Type::kMemset && b.type == Type::kMemset && n.tensor != "GM" &&
        !m.Accessible(m.tensors.at(n.tensor), device, Perm::kReadWrite)) {
      if (n.word != b.word || n.tensor != b.tensor)
        worst = std::max(worst, 1);
      else if (n.captured != b.captured)
        worst = 2;
    }
    worst = std::max(worst, ChangedUnwritableMemset(m, b.body, n.body, device));
    for (size_t k = 0; k < n.branches.size() && k < b.branches.size(); ++k)
      worst = std::max(worst, ChangedUnwritableMemset(m, b.branches[k], n.branches[k], device));
  }
  return worst;
}

}  // namespace

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
              !(s.buffer == d.buffer && s.offset < d.offset + d.Bytes() &&
                d.offset < s.offset + s.Bytes()))
            pairs.emplace_back(from, to);
        }
        if (!conditional_body)
          for (const auto& [name, snap] : model.snapshots)
            if (snap.bytes == d.Bytes() && (!snap.host || snap.pinned))
              pairs.emplace_back(name, to);
      }
      if (pairs.empty()) continue;
      std::tie(n.from, n.to) = rng.Pick(pairs);
    } else if (roll < 63 && model.tensors.count("MA") > 0) {
      n.type = Type::kMatmul;
      n.a = "MA", n.b = "MB", n.c = "MC";
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

YamlValue Generator::NodeStep(const Node& n, int device) const {
  auto with_device = [&](MapBuilder& b) {
    if (device != 0) b.Num("device", static_cast<uint64_t>(device));
  };
  auto steps = [&](const std::vector<Node>& nodes) {
    std::vector<YamlValue> items;
    for (const Node& x : nodes) items.push_back(NodeStep(x, device));
    return List(std::move(items));
  };
  switch (n.type) {
    case Type::kFill: {
      MapBuilder b = Op("fill");
      b.Add("name", n.name).Add("buffer", n.tensor).Num("seed", n.seed);
      with_device(b);
      return b.Build();
    }
    case Type::kMemset: {
      MapBuilder b = Op("memset");
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%08X", n.word);
      b.Add("name", n.name).Add("buffer", n.tensor).Add("value", hex);
      with_device(b);
      return b.Build();
    }
    case Type::kCopy: {
      MapBuilder b = Op("copy");
      b.Add("name", n.name).Add("from", n.from).Add("to", n.to);
      with_device(b);
      return b.Build();
    }
    case Type::kMatmul: {
      MapBuilder b = Op("matmul");
      b.Add("name", n.name).Add("a", n.a).Add("b", n.b).Add("c", n.c);
      with_device(b);
      return b.Build();
    }
    case Type::kHostFunc:
      return Op("host_func").Add("name", n.name).Build();
    case Type::kRecord:
      return Op("record_event").Add("name", n.name).Add("event", n.event).Build();
    case Type::kWait:
      return Op("wait_event").Add("name", n.name).Add("event", n.event).Build();
    case Type::kIf:
    case Type::kWhile: {
      MapBuilder b = Op(n.type == Type::kIf ? "if" : "while");
      b.Add("name", n.name).Add("buffer", n.tensor);
      if (n.seed != 0) b.Num("index", n.seed);
      b.Add("steps", steps(n.body));
      return b.Build();
    }
    case Type::kParallel: {
      std::vector<YamlValue> branches;
      for (const auto& branch : n.branches)
        branches.push_back(MapBuilder().Add("steps", steps(branch)).Build());
      return Op("parallel").Add("name", n.name).Add("branches", List(std::move(branches))).Build();
    }
    case Type::kAlloc:
      return Op("mem_alloc").Add("name", n.name).Add("buffer", n.tensor).Build();
    case Type::kFree:
      return Op("mem_free").Add("name", n.name).Add("buffer", n.tensor).Build();
    case Type::kChild:
      return Op("child_graph").Add("name", n.name).Add("graph", n.from).Build();
  }
  return YamlValue{};
}

void Generator::NameNodes(const std::string& graph, std::vector<Node>* nodes) {
  for (Node& n : *nodes) {
    if (!n.name.empty() && n.type != Type::kChild && n.type != Type::kIf &&
        n.type != Type::kWhile && n.type != Type::kParallel)
      continue;  // named when made (events, memory nodes)
    const char* what = "";
    switch (n.type) {
      case Type::kFill:
        what = "fill ";
        break;
      case Type::kMemset:
        what = "memset ";
        break;
      case Type::kCopy:
        what = "copy to ";
        break;
      case Type::kMatmul:
        what = "matmul ";
        break;
      case Type::kHostFunc:
        what = "host function";
        break;
      case Type::kIf:
        what = "if ";
        break;
      case Type::kWhile:
        what = "while ";
        break;
      case Type::kParallel:
        what = "fork";
        break;
      case Type::kChild:
        what = "child ";
        break;
      case Type::kRecord:
      case Type::kWait:
      case Type::kAlloc:
      case Type::kFree:
        break;
    }
    const std::string subject = n.type == Type::kCopy     ? n.to
                                : n.type == Type::kChild  ? n.from
                                : n.type == Type::kMatmul ? n.c
                                                          : n.tensor;
    n.name = Name(graph + ": " + what + subject);
    if (n.type != Type::kChild) NameNodes(graph, &n.body);
    for (auto& b : n.branches) NameNodes(graph, &b);
  }
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
      if (n.type != Type::kChild) mutate(n.body);
      for (auto& b : n.branches) mutate(b);
      if (n.type == Type::kRecord || n.type == Type::kWait) n.name = "";
    }
  };
  mutate(variant);
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
  if (rng.Percent(30)) {
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
