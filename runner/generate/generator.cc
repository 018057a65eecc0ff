#include "runner/generate/generator.h"

#include "runner/generate/generator_impl.h"
#include "runner/yaml/yaml_writer.h"

namespace vmm::gen {
namespace {

// The action table: every kind of step the generator writes, with how often it is tried. An
// action that finds nothing legal to do in the model's state returns false and another is tried.
struct ActionRow {
  const char* name;
  int weight;
  bool (Generator::*run)();
  bool graph;  // only with GenOptions::graphs
};
constexpr ActionRow kActions[] = {
    {"reserve", 3, &Generator::Reserve, false},
    {"create", 6, &Generator::Create, false},
    {"map", 8, &Generator::MapAlloc, false},
    {"set_access", 8, &Generator::SetAccess, false},
    {"unmap", 4, &Generator::Unmap, false},
    {"release", 4, &Generator::Release, false},
    {"free", 2, &Generator::FreeReservation, false},
    {"remap", 3, &Generator::Remap, false},
    {"retain", 1, &Generator::Retain, false},
    {"export/import", 1, &Generator::ExportImport, false},
    {"query", 3, &Generator::Query, false},
    {"mark/check_memory", 2, &Generator::MarkOrCheckMemory, false},
    {"fill", 8, &Generator::Fill, false},
    {"memset", 4, &Generator::Memset, false},
    {"write_value", 2, &Generator::WriteValue, false},
    {"busy", 1, &Generator::Busy, false},
    {"copy", 5, &Generator::Copy, false},
    {"matmul", 3, &Generator::Matmul, false},
    {"add/scale/axpy", 3, &Generator::Elementwise, false},
    {"snapshot", 5, &Generator::TakeSnapshot, false},
    {"check data", 8, &Generator::CheckData, false},
    {"check_address", 2, &Generator::CheckAddress, false},
    {"synchronize", 1, &Generator::Synchronize, false},
    {"capture", 4, &Generator::Capture, true},
    {"instantiate", 4, &Generator::Instantiate, true},
    {"replay", 6, &Generator::Replay, true},
    {"update", 3, &Generator::Update, true},
    {"set_node", 2, &Generator::SetNode, true},
    {"destroy", 1, &Generator::DestroyGraphOrExec, true},
    {"refusal", 3, &Generator::Refusal, false},
    {"threads", 1, &Generator::ThreadsGroup, false},
};

YamlValue ShapeList(const std::vector<uint64_t>& shape) {
  std::vector<YamlValue> dims;
  for (uint64_t d : shape) dims.push_back(Number(d));
  return List(std::move(dims));
}

// A 1-D shape, or a 2-D one of the same element count when it factors nicely.
std::vector<uint64_t> ShapeOf(uint64_t elements, Rng& rng) {
  if (elements % 64 == 0 && rng.Percent(30)) return {elements / 64, 64};
  return {elements};
}

}  // namespace

Generator::Generator(const GenOptions& opts)
    : rng(Rng::StreamFor(opts.seed)), options(opts), model(2ull << 20) {}

std::string Generator::Name(const std::string& text) {
  std::string name = text;
  for (int i = 2; names.count(name) > 0; ++i) name = text + " #" + std::to_string(i);
  names.insert(name);
  return name;
}

std::vector<const Tensor*> Generator::TensorsWhere(
    const std::function<bool(const Tensor&)>& pred) const {
  std::vector<const Tensor*> out;
  for (const auto& [name, t] : model.tensors)
    if (!t.graph_memory && pred(t)) out.push_back(&t);
  return out;
}

Content Generator::MatmulContent(const Tensor& a, const Tensor& b, const Tensor& c) const {
  const Content ca = model.Read(a), cb = model.Read(b);
  // fmaf(0, x, +0) is +0 for every finite x (fill values are finite): a zero operand gives zeros.
  if (IsConst(ca, 0) || IsConst(cb, 0)) return Uniform(c.Bytes(), PieceKind::kConst, 0);
  const uint64_t salt = (a.shape[0] << 40) ^ (a.shape[1] << 20) ^ b.shape[1];
  return Uniform(c.Bytes(), PieceKind::kOpaque, TokenOf({&ca, &cb}, salt));
}

GeneratedScenario Generator::Run() {
  const uint64_t g = G();
  const uint64_t max_tensor = std::max<uint64_t>(options.max_tensor_bytes, 4096);
  // Buffers: 2 to 4 reservations of 1 to 4 granules, each with a tensor at its start.
  const char* kBufferNames[] = {"A", "B", "C", "D"};
  const int buffers = static_cast<int>(rng.Between(2, 4));
  for (int i = 0; i < buffers; ++i) {
    Tensor t;
    t.name = t.buffer = kBufferNames[i];
    const uint64_t granules = static_cast<uint64_t>(rng.Between(1, 4));
    const uint64_t room = std::min(granules * g, max_tensor);
    const uint64_t bytes = std::max<uint64_t>(1024, rng.Below(room / 1024 + 1) * 1024);
    t.shape = ShapeOf(bytes / 4, rng);
    model.tensors[t.name] = t;
    model.reservations[t.name].size = granules * g;
  }
  // Views: up to two per buffer, at 256-byte offsets, some granule aligned.
  for (int i = 0; i < buffers; ++i) {
    const std::string buffer = kBufferNames[i];
    const uint64_t room = model.reservations[buffer].size;
    const int views = static_cast<int>(rng.Below(3));
    for (int v = 0; v < views; ++v) {
      Tensor t;
      t.name = buffer + std::to_string(v);
      t.buffer = buffer;
      t.is_view = true;
      uint64_t bytes =
          std::max<uint64_t>(1024, rng.Below(std::min(room / 2, max_tensor) / 1024 + 1) * 1024);
      // Often the size of a tensor made before it, so that copies (and kernel copies) find
      // pairs between tensors, not only between a tensor and a snapshot.
      std::vector<uint64_t> fits;
      for (const auto& [name, other] : model.tensors)
        if (other.Bytes() <= std::min(room / 2, max_tensor)) fits.push_back(other.Bytes());
      if (!fits.empty() && rng.Percent(40)) bytes = rng.Pick(fits);
      const uint64_t span = (room - bytes) / 256;
      t.offset = rng.Percent(40) ? rng.Below(room / g) * g : rng.Below(span + 1) * 256;
      if (t.offset + bytes > room) t.offset = room - bytes;
      t.shape = ShapeOf(bytes / 4, rng);
      model.tensors[t.name] = t;
    }
  }
  // A matmul trio (views with 2-D shapes): C does not overlap A or B.
  if (rng.Percent(60)) {
    const uint64_t dims[] = {16, 32, 64};
    const uint64_t m = dims[rng.Below(3)], k = dims[rng.Below(3)], n = dims[rng.Below(3)];
    const std::vector<std::vector<uint64_t>> shapes = {{m, k}, {k, n}, {m, n}};
    const char* names3[] = {"MA", "MB", "MC"};
    std::vector<Tensor> trio;
    for (int i = 0; i < 3; ++i) {
      Tensor t;
      t.name = names3[i];
      t.buffer = kBufferNames[rng.Below(buffers)];
      t.is_view = true;
      t.shape = shapes[i];
      const uint64_t room = model.reservations[t.buffer].size;
      t.offset = rng.Below((room - t.Bytes()) / 65536 + 1) * 65536;
      trio.push_back(t);
    }
    auto overlaps = [](const Tensor& x, const Tensor& y) {
      return x.buffer == y.buffer && x.offset < y.offset + y.Bytes() &&
             y.offset < x.offset + x.Bytes();
    };
    if (!overlaps(trio[2], trio[0]) && !overlaps(trio[2], trio[1]))
      for (const Tensor& t : trio) model.tensors[t.name] = t;
  }
  // A word view for conditions and stream writes, and a buffer for graph memory nodes.
  {
    Tensor w;
    w.name = "W";
    w.buffer = kBufferNames[rng.Below(buffers)];
    w.is_view = true;
    w.shape = {64};
    w.offset = rng.Below(model.reservations[w.buffer].size / 256) * 256;
    model.tensors[w.name] = w;
  }
  if (options.graphs) {
    Tensor gm;
    gm.name = gm.buffer = "GM";
    gm.graph_memory = true;
    gm.shape = {16384};
    model.tensors[gm.name] = gm;
  }

  std::vector<YamlValue> steps;
  out = &steps;
  // A start that gives the random part something to work on: every buffer reserved, the first
  // one backed and writable.
  for (int i = 0; i < buffers; ++i)
    if (i == 0 || rng.Percent(70)) {
      Reserve();
    }
  Create() && MapAlloc() && SetAccess();

  int total = 0;
  for (const ActionRow& a : kActions)
    if (options.graphs || !a.graph) total += a.weight;
  const bool isolate = options.isolate_percent > 0 && rng.Percent(options.isolate_percent);
  const size_t isolate_at = isolate ? rng.Below(static_cast<uint64_t>(options.steps)) : ~size_t{0};
  bool isolated = false;
  for (int tries = 0; static_cast<int>(steps.size()) < options.steps && tries < options.steps * 30;
       ++tries) {
    if (!isolated && steps.size() >= isolate_at) isolated = IsolateBlock() || true;
    int pick = static_cast<int>(rng.Below(total));
    for (const ActionRow& a : kActions) {
      if (!options.graphs && a.graph) continue;
      if (pick < a.weight) {
        if (!options.expect_errors && a.run == &Generator::Refusal) break;
        (this->*a.run)();
        break;
      }
      pick -= a.weight;
    }
  }
  if (rng.Percent(50)) Teardown();

  // The document.
  MapBuilder doc;
  doc.Num("version", 1);
  const std::string name = "gen_" + std::to_string(options.seed);
  doc.Add("name", name);
  doc.Add("description", "a scenario written by vmm-run generate from seed " +
                             std::to_string(options.seed) + " (docs/generator.md)");
  if (options.devices > 1 || !requires_caps.empty()) {
    MapBuilder req;
    if (options.devices > 1) req.Num("devices", static_cast<uint64_t>(options.devices));
    if (!requires_caps.empty()) {
      std::vector<YamlValue> caps;
      for (const std::string& c : requires_caps) caps.push_back(Scalar(c));
      req.Add("capabilities", List(std::move(caps)));
    }
    doc.Add("requires", req.Build());
  }
  MapBuilder buffers_map, views_map;
  bool any_view = false;
  for (const auto& [tname, t] : model.tensors) {
    MapBuilder entry;
    if (t.is_view) {
      entry.Add("of", t.buffer).Size("offset", t.offset).Add("shape", ShapeList(t.shape));
      views_map.Add(tname, entry.Build());
      any_view = true;
    } else {
      entry.Add("shape", ShapeList(t.shape));
      buffers_map.Add(tname, entry.Build());
    }
  }
  doc.Add("buffers", buffers_map.Build());
  if (any_view) doc.Add("views", views_map.Build());
  doc.Add("steps", List(std::move(steps)));
  const YamlValue document = doc.Build();

  GeneratedScenario result;
  result.name = name;
  result.steps = static_cast<int>(document.members.back().value.items.size());
  result.text = "# Written by `vmm-run generate --seed " + std::to_string(options.seed) +
                "`: a random scenario that the generator's model calls valid, with every\n"
                "# expectation taken from that model (docs/generator.md). Replay it with the same "
                "seed and options.\n" +
                WriteYaml(document);
  return result;
}

GeneratedScenario Generate(const GenOptions& options) { return Generator(options).Run(); }

}  // namespace vmm::gen
