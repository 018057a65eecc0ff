// How the generator writes a captured node as a step (NodeStep) and names it (NameNodes): the
// graph actions' (gen_graphs.cc) output side.
#include <cstdio>

#include "runner/generate/generator_impl.h"

namespace vmm::gen {

using Type = Node::Type;

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
      MapBuilder b = Op(n.op.empty() ? "copy" : n.op);
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
    case Type::kElementwise: {
      MapBuilder b = Op(n.op);
      b.Add("name", n.name).Add("a", n.a);
      if (!n.b.empty()) b.Add("b", n.b);
      b.Add("c", n.c);
      if (!n.alpha.empty()) b.Add("alpha", n.alpha);
      with_device(b);
      return b.Build();
    }
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
      case Type::kElementwise:
        what = n.op == "add" ? "add " : n.op == "scale" ? "scale " : "axpy ";
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
    const std::string subject = n.type == Type::kCopy    ? n.to
                                : n.type == Type::kChild ? n.from
                                : n.type == Type::kMatmul || n.type == Type::kElementwise
                                    ? n.c
                                    : n.tensor;
    n.name = Name(graph + ": " + what + subject);
    if (n.type != Type::kChild) NameNodes(graph, &n.body);
    for (auto& b : n.branches) NameNodes(graph, &b);
  }
}

}  // namespace vmm::gen
