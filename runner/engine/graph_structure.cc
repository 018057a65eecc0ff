#include "runner/engine/graph_structure.h"

#include <cstdio>
#include <initializer_list>
#include <string_view>

#include "runner/base/format.h"

namespace vmm {
namespace {

// `text` inside a DOT string literal: quotes and backslashes escaped, control characters dropped.
std::string Escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

// Appends each piece of `pieces` to *out (one append per piece: GCC 12 warns falsely about long
// chains of std::string operator+).
void Append(std::string* out, std::initializer_list<std::string_view> pieces) {
  for (std::string_view p : pieces) out->append(p);
}

void Nodes(const std::vector<GraphNodeInfo>& nodes, const std::string& prefix, int depth,
           std::string* out) {
  const std::string indent(static_cast<size_t>(depth) * 2 + 2, ' ');
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNodeInfo& n = nodes[i];
    const std::string id = prefix + std::to_string(i);
    // Two lines: the node's name, then its type and detail.
    std::string label;
    Append(&label,
           {"\"", Escaped(n.name.empty() ? "(unnamed)" : n.name), "\\n", NodeTypeName(n.type)});
    if (!n.detail.empty()) Append(&label, {" · ", Escaped(n.detail)});
    label += '"';
    if (n.type == NodeType::kGraph || n.type == NodeType::kConditional) {  // a cluster: its body
      Append(out, {indent, "subgraph cluster_", id, " {\n", indent, "  label=", label, ";\n"});
      Append(out, {indent, "  ", id, " [shape=point, label=\"\"];\n"});
      Nodes(n.children, id + "_", depth + 1, out);
      Append(out, {indent, "}\n"});
    } else {
      Append(out, {indent, id, " [shape=box, label=", label, "];\n"});
    }
    for (uint32_t d : n.dependencies)
      Append(out, {indent, prefix, std::to_string(d), " -> ", id, ";\n"});
  }
}

}  // namespace

std::string MemsetDetail(uint32_t pattern) { return "value " + Hex(pattern); }
const char* MemcpyDetail(bool from_host, bool to_host) {
  if (from_host) return to_host ? "host_to_host" : "host_to_device";
  return to_host ? "device_to_host" : "device_to_device";
}
std::string EventDetail(int event) { return "event " + std::to_string(event); }
std::string AllocDetail(uint64_t bytes) { return "bytes " + std::to_string(bytes); }

std::string StructureDot(const GraphStructure& graph) {
  std::string out = "digraph vmm_graph {\n  rankdir=TB;\n";
  Nodes(graph.nodes, "n", 0, &out);
  return out + "}\n";
}

}  // namespace vmm
