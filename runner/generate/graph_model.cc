// The generator's model of graph nodes (graph_model.h): what a node touches, the addresses it
// holds, a replay's effect on the data, and what the driver refuses at capture, instantiate and
// update.
#include "runner/generate/graph_model.h"

#include <algorithm>

namespace vmm::gen {

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
    case Type::kElementwise:
      for (const std::string* t : {&n.a, &n.b, &n.c})
        if (!t->empty()) touched->insert(buf(*t));
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

namespace {

// The 32-bit word `index` of tensor `t`, when the model knows it.
std::optional<uint32_t> WordOf(const Model& m, const Tensor& t, uint64_t index) {
  Tensor word = t;
  word.offset += index * 4;
  word.shape = {1};
  const Content c = m.Read(word);
  if (c.size() == 1 && c[0].kind == PieceKind::kConst) return static_cast<uint32_t>(c[0].a);
  return std::nullopt;
}

}  // namespace

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
      case Type::kElementwise: {
        if (!readable(n.a) || (!n.b.empty() && !readable(n.b)) || !rw(n.c)) return false;
        if (!run) break;
        const Content ca = content(n.a), cb = n.b.empty() ? Content{} : content(n.b);
        if (!ElementwiseInput(ca) || (!n.b.empty() && !ElementwiseInput(cb))) return false;
        // The capture's choice holds only while the memory does: a, b and c one tensor or apart.
        auto apart = [&](const std::string& x, const std::string& y) {
          return x.empty() || y.empty() || x == y || !m.PhysOverlap(*tensor(x), *tensor(y));
        };
        const bool in_place = n.c == n.a || n.c == n.b;
        if (!apart(n.a, n.b) || (!in_place && (!apart(n.c, n.a) || !apart(n.c, n.b)))) return false;
        m.Write(*tensor(n.c), ElementwiseResult(n.op, n.alpha, ca, cb));
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

namespace {

// Node names in `nodes`, depth first (every named node).
void CollectNames(const std::vector<Node>& nodes, std::vector<std::string>* out) {
  for (const Node& n : nodes) {
    out->push_back(n.name);
    CollectNames(n.body, out);
    for (const auto& b : n.branches) CollectNames(b, out);
  }
}

}  // namespace

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

}  // namespace vmm::gen
