// The generator's data actions: fill, memset, write_value, busy, copy and kernel_copy, matmul,
// snapshot, the data checks, check_address and synchronize. Every expectation comes from the
// model's contents.
#include "runner/generate/generator_impl.h"

namespace vmm::gen {
namespace {

// A 32-bit pattern worth writing: zero, a poison byte repeated, or a small flag.
uint32_t PickWord(Rng& rng) {
  switch (rng.Below(4)) {
    case 0:
      return 0;
    case 1:
      return 0xA5A5A5A5u;
    case 2:
      return static_cast<uint32_t>(rng.Between(1, 3));
    default:
      return static_cast<uint32_t>(rng.Next());
  }
}

std::string Hex(uint32_t word) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08X", word);
  return text;
}

}  // namespace

bool Generator::Fill() {
  const int device = Device();
  auto targets = TensorsWhere([&](const Tensor& t) { return Writable(t, device); });
  if (targets.empty()) return false;
  const Tensor& t = *rng.Pick(targets);
  const uint64_t seed = rng.Below(1000);
  MapBuilder step = Op("fill");
  step.Add("buffer", t.name).Num("seed", seed);
  if (device != 0) step.Num("device", static_cast<uint64_t>(device));
  if (rng.Percent(10)) step.Flag("async", true);
  model.Write(t, FillContent(t, seed));
  Emit(step.Build());
  return true;
}

bool Generator::Memset() {
  const int device = Device();
  auto targets = TensorsWhere([&](const Tensor& t) { return Writable(t, device); });
  if (targets.empty()) return false;
  const Tensor& t = *rng.Pick(targets);
  MapBuilder step = Op("memset");
  step.Add("buffer", t.name);
  uint32_t word;
  if (rng.Percent(30)) {
    const uint32_t byte = static_cast<uint32_t>(rng.Below(256));
    word = byte * 0x01010101u;
    step.Num("byte", byte);
  } else {
    word = PickWord(rng);
    step.Add("value", Hex(word));
  }
  if (device != 0) step.Num("device", static_cast<uint64_t>(device));
  model.Write(t, Uniform(t.Bytes(), PieceKind::kConst, word));
  Emit(step.Build());
  return true;
}

bool Generator::WriteValue() {
  const int device = Device();
  auto targets = TensorsWhere([&](const Tensor& t) { return Writable(t, device); });
  if (targets.empty()) return false;
  const Tensor& t = *rng.Pick(targets);
  const uint64_t offset = rng.Below(std::min<uint64_t>(t.Elements(), 64)) * 4;
  const uint32_t word = PickWord(rng);
  MapBuilder step = Op("write_value");
  step.Add("buffer", t.name);
  if (offset != 0 || rng.Percent(30)) step.Num("offset", offset);
  step.Add("value", Hex(word));
  if (device != 0) step.Num("device", static_cast<uint64_t>(device));
  Tensor word_at = t;
  word_at.offset += offset;
  word_at.shape = {1};
  model.Write(word_at, Uniform(4, PieceKind::kConst, word));
  Emit(step.Build());
  return true;
}

bool Generator::Busy() {
  // One in four is a reader in flight (touch: read): read access is enough, and it writes nothing.
  const bool reader = rng.Percent(25);
  auto targets =
      TensorsWhere([&](const Tensor& t) { return reader ? Readable(t, 0) : Writable(t, 0); });
  if (targets.empty()) return false;
  const Tensor& t = *rng.Pick(targets);
  MapBuilder step = Op("busy");
  step.Add("buffer", t.name).Add("duration", std::to_string(rng.Between(1, 20) * 100) + "us");
  if (reader) {
    step.Add("touch", "read");
  } else {
    if (rng.Percent(30))
      step.Add("touch", "write");  // a writer in flight: the same words at the end
    uint32_t word = 0x3F800000u;   // the default: 1.0f
    if (rng.Percent(50)) {
      word = PickWord(rng);
      step.Add("value", Hex(word));
    }
    model.Write(t, Uniform(t.Bytes(), PieceKind::kConst, word));
  }
  if (rng.Percent(50)) step.Flag("async", true);
  Emit(step.Build());
  return true;
}

bool Generator::Copy() {
  const int device = Device();
  // Pairs of the same size: a readable source (tensor or snapshot) and a writable destination
  // that shares no memory with it, or a tensor into a snapshot of its size.
  struct Choice {
    std::string from, to;
  };
  std::vector<Choice> choices;
  auto sources = TensorsWhere([&](const Tensor& t) { return Readable(t, device); });
  auto dests = TensorsWhere([&](const Tensor& t) { return Writable(t, device); });
  for (const Tensor* d : dests) {
    for (const Tensor* s : sources)
      if (s->Bytes() == d->Bytes() && s != d && !VaOverlap(*s, *d) && !model.PhysOverlap(*s, *d))
        choices.push_back({s->name, d->name});
    for (const auto& [name, snap] : model.snapshots)
      if (snap.bytes == d->Bytes() && !HasUnset(snap.content)) choices.push_back({name, d->name});
  }
  for (const Tensor* s : sources)
    for (const auto& [name, snap] : model.snapshots)
      if (snap.bytes == s->Bytes() && rng.Percent(30)) choices.push_back({s->name, name});
  if (choices.empty()) return false;
  // Between two tensors, often a copy by a kernel: the same bits, the SMs' access.
  std::vector<Choice> between_tensors;
  for (const Choice& c : choices)
    if (model.snapshots.count(c.from) == 0 && model.snapshots.count(c.to) == 0)
      between_tensors.push_back(c);
  const bool by_kernel = !between_tensors.empty() && rng.Percent(60);
  const Choice c = rng.Pick(by_kernel ? between_tensors : choices);
  const bool from_snapshot = model.snapshots.count(c.from) > 0;
  const bool to_snapshot = model.snapshots.count(c.to) > 0;
  MapBuilder step = Op(by_kernel ? "kernel_copy" : "copy");
  step.Add("from", c.from).Add("to", c.to);
  if (device != 0) step.Num("device", static_cast<uint64_t>(device));
  if (!from_snapshot && !to_snapshot && rng.Percent(15)) step.Flag("async", true);
  const Content content =
      from_snapshot ? model.snapshots[c.from].content : model.Read(model.tensors[c.from]);
  if (to_snapshot) {
    model.snapshots[c.to].content = content;
  } else {
    model.Write(model.tensors[c.to], content);
  }
  Emit(step.Build());
  return true;
}

bool Generator::Matmul() {
  if (model.tensors.count("MA") == 0) return false;
  const int device = Device();
  const Tensor &a = model.tensors["MA"], &b = model.tensors["MB"], &c = model.tensors["MC"];
  if (!Readable(a, device) || !Readable(b, device) || !Writable(c, device)) return false;
  if (model.PhysOverlap(c, a) || model.PhysOverlap(c, b)) return false;
  MapBuilder step = Op("matmul");
  step.Add("a", "MA").Add("b", "MB").Add("c", "MC");
  if (device != 0) step.Num("device", static_cast<uint64_t>(device));
  model.Write(c, MatmulContent(a, b, c));
  Emit(step.Build());
  if (rng.Percent(40) && Readable(a, 0) && Readable(b, 0) && Readable(c, 0)) {
    MapBuilder check = Op("check_matmul");
    check.Add("a", "MA").Add("b", "MB").Add("c", "MC");
    if (rng.Percent(30)) check.Add("verify", "host");
    Emit(check.Build());
  }
  return true;
}

namespace {

// The factors the generator writes. None is 1, and no scale factor is an axpy factor plus one or
// is 2, so that two results the model names apart also differ in their data: axpy(alpha, x, x) is
// scale(x, alpha + 1), add(x, x) is scale(x, 2), each rounded once.
constexpr const char* kScaleFactors[] = {"0.75", "-1.25", "3"};
constexpr const char* kAxpyFactors[] = {"0.5", "-2", "1.75"};

}  // namespace

std::string Generator::PickFactor(const std::string& op) {
  if (op == "scale") return kScaleFactors[rng.Below(std::size(kScaleFactors))];
  if (op == "axpy") return kAxpyFactors[rng.Below(std::size(kAxpyFactors))];
  return "";
}

bool Generator::PickElementwise(const std::vector<std::string>& tensors,
                                const std::vector<std::string>& c_pool, bool check_contents,
                                Node* out) {
  auto follows = [&](const std::string& name) {
    return !check_contents || ElementwiseInput(model.Read(model.tensors.at(name)));
  };
  std::vector<std::string> inputs;
  for (const std::string& name : tensors)
    if (follows(name)) inputs.push_back(name);
  if (inputs.empty()) return false;
  const int kind = static_cast<int>(rng.Below(3));
  out->type = Node::Type::kElementwise;
  out->op = kind == 0 ? "add" : kind == 1 ? "scale" : "axpy";
  out->alpha = PickFactor(out->op);
  out->a = rng.Pick(inputs);
  const Tensor& a = model.tensors.at(out->a);
  // Apart in their addresses (the validator's rule) and in the memory mapped there.
  auto apart = [&](const std::string& x, const std::string& y) {
    const Tensor &tx = model.tensors.at(x), &ty = model.tensors.at(y);
    return x == y || (!VaOverlap(tx, ty) && !model.PhysOverlap(tx, ty));
  };
  out->b = "";
  if (out->op != "scale") {
    std::vector<std::string> bs;
    for (const std::string& name : inputs)
      if (model.tensors.at(name).Bytes() == a.Bytes() && apart(name, out->a)) bs.push_back(name);
    if (bs.empty()) return false;
    out->b = rng.Pick(bs);
  }
  std::vector<std::string> cs;
  for (const std::string& name : c_pool) {
    if (model.tensors.at(name).Bytes() != a.Bytes()) continue;
    // In place (c is a or b), the other input is apart from it already.
    const bool in_place = name == out->a || name == out->b;
    if (in_place || (apart(name, out->a) && (out->b.empty() || apart(name, out->b))))
      cs.push_back(name);
  }
  if (cs.empty()) return false;
  out->c = rng.Pick(cs);
  return true;
}

bool Generator::Elementwise() {
  const int device = Device();
  std::vector<std::string> readable, writable;
  for (const Tensor* t : TensorsWhere([&](const Tensor& t) { return Readable(t, device); }))
    readable.push_back(t->name);
  for (const Tensor* t : TensorsWhere([&](const Tensor& t) { return Writable(t, device); }))
    writable.push_back(t->name);
  Node n;
  if (!PickElementwise(readable, writable, true, &n)) return false;
  const Content b = n.b.empty() ? Content{} : model.Read(model.tensors.at(n.b));
  const Content result = ElementwiseResult(n.op, n.alpha, model.Read(model.tensors.at(n.a)), b);
  MapBuilder step = Op(n.op);
  step.Add("a", n.a);
  if (!n.b.empty()) step.Add("b", n.b);
  step.Add("c", n.c);
  if (!n.alpha.empty()) step.Add("alpha", n.alpha);
  if (device != 0) step.Num("device", static_cast<uint64_t>(device));
  model.Write(model.tensors.at(n.c), result);
  Emit(step.Build());
  return true;
}

bool Generator::TakeSnapshot() {
  auto sources = TensorsWhere([&](const Tensor& t) { return Readable(t, 0); });
  if (sources.empty()) return false;
  const Tensor& t = *rng.Pick(sources);
  const std::string name = Fresh("S");
  Snapshot snap;
  snap.content = model.Read(t);
  snap.bytes = t.Bytes();
  MapBuilder step = Op("snapshot");
  step.Add("buffer", t.name).Add("snapshot", name);
  if (rng.Percent(30)) {
    snap.host = true;
    step.Add("to", "host");
    if (rng.Percent(25)) {
      snap.pinned = false;
      step.Flag("pinned", false);
    }
  }
  model.snapshots[name] = std::move(snap);
  Emit(step.Build());
  return true;
}

bool Generator::CheckData() {
  auto readable = TensorsWhere([&](const Tensor& t) { return Readable(t, 0); });
  if (readable.empty()) return false;
  const Tensor& t = *rng.Pick(readable);
  const Content now = model.Read(t);
  const int kind = static_cast<int>(rng.Below(4));
  if (kind == 0 && model.tensors.count("MA") > 0) {  // check_matmul, when C holds A·B now
    const Tensor &a = model.tensors["MA"], &b = model.tensors["MB"], &c = model.tensors["MC"];
    if (Readable(a, 0) && Readable(b, 0) && Readable(c, 0) &&
        model.Read(c) == MatmulContent(a, b, c)) {
      MapBuilder step = Op("check_matmul");
      step.Add("a", "MA").Add("b", "MB").Add("c", "MC");
      if (rng.Percent(30)) step.Add("verify", "host");
      Emit(step.Build());
      return true;
    }
  }
  if (kind <= 1) {  // check_equal against a snapshot of the same size, or another tensor
    std::vector<std::pair<std::string, Content>> others;
    for (const auto& [name, snap] : model.snapshots)
      if (snap.bytes == t.Bytes() && !HasUnset(snap.content))
        others.emplace_back(name, snap.content);
    const size_t snapshots = others.size();
    for (const Tensor* o : readable)
      if (o != &t && o->Bytes() == t.Bytes()) others.emplace_back(o->name, model.Read(*o));
    if (!others.empty()) {
      const size_t i = rng.Below(others.size());
      MapBuilder step = Op("check_equal");
      step.Add("buffer", t.name).Add(i < snapshots ? "snapshot" : "other", others[i].first);
      const bool equal = others[i].second == now;
      if (!equal || rng.Percent(50)) step.Add("expect", equal ? "equal" : "different");
      if (rng.Percent(10)) step.Flag("fatal", true);
      Emit(step.Build());
      return true;
    }
  }
  // check_value: every word is the pattern (equal), or some word is not (different).
  uint32_t word = 0;
  bool equal = false;
  if (!now.empty() && now.front().kind == PieceKind::kConst && rng.Percent(70)) {
    word = static_cast<uint32_t>(now.front().a);
    equal = IsConst(now, word);
  } else {
    word = PickWord(rng);
    equal = IsConst(now, word);
  }
  MapBuilder step = Op("check_value");
  step.Add("buffer", t.name);
  if ((word & 0xFF) * 0x01010101u == word && rng.Percent(30)) {
    step.Num("byte", word & 0xFF);
  } else {
    step.Add("value", Hex(word));
  }
  if (!equal || rng.Percent(50)) step.Add("expect", equal ? "equal" : "different");
  Emit(step.Build());
  return true;
}

bool Generator::CheckAddress() {
  // Two named steps whose relation the model knows: the same reservation and offset is the same
  // address; different offsets of one reservation, or two reservations alive now, are different.
  std::vector<std::string> named;
  for (const auto& [name, at] : address_steps) named.push_back(name);
  if (named.size() < 2) return false;
  const std::string x = rng.Pick(named), y = rng.Pick(named);
  if (x == y) return false;
  const AddressStep &a = address_steps[x], &b = address_steps[y];
  auto alive = [&](const AddressStep& s) {
    const Reservation& r = model.reservations[s.buffer];
    return r.reserved && r.instance == s.instance;
  };
  std::string expect;
  if (a.instance == b.instance) {
    expect = a.offset == b.offset ? "same" : "different";
  } else if (alive(a) && alive(b)) {
    expect = "different";
  } else {
    return false;
  }
  Emit(Op("check_address").Add("of", List({Scalar(x), Scalar(y)})).Add("expect", expect).Build());
  return true;
}

bool Generator::Synchronize() {
  Emit(Op("synchronize").Build());
  return true;
}

}  // namespace vmm::gen
