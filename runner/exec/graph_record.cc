// RecordGraph: a graph read back from the engine, in the report's words.
#include <algorithm>

#include "runner/base/format.h"
#include "runner/base/sha256.h"
#include "runner/exec/run_state.h"

namespace vmm {
namespace {

// The scenario's name for the memory at [va, va + bytes): a buffer or view that starts there with
// that size (bytes 0: any size), else the buffer whose memory holds va, else the address.
std::string BufferName(const RunState& state, DevicePtr va, uint64_t bytes) {
  const std::vector<PlanBuffer>& buffers = state.plan.buffers;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const int owner = buffers[i].base >= 0 ? buffers[i].base : static_cast<int>(i);
    if (state.buffer_va[owner] == 0) continue;
    if (DataVa(state, static_cast<int>(i)) == va && (bytes == 0 || buffers[i].bytes == bytes))
      return buffers[i].name;
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].base >= 0 || state.buffer_va[i] == 0) continue;
    const uint64_t size = std::max(buffers[i].reservation_size, buffers[i].bytes);
    if (va >= state.buffer_va[i] && va - state.buffer_va[i] < size) return buffers[i].name;
  }
  // A snapshot a copy node reads (its memory is the engine's, at a machine-dependent address: the
  // structure hash names it, so that two machines' graphs compare).
  for (size_t i = 0; i < state.snapshots.size(); ++i) {
    const std::optional<Snapshot>& s = state.snapshots[i];
    if (s && va >= s->storage.addr &&
        va - s->storage.addr < std::max<uint64_t>(s->storage.bytes, 1))
      return "snapshot " + state.plan.snapshots[i];
  }
  return Hex(va);
}

report::GraphNodeRecord NodeRecord(const GraphNodeInfo& n, int index, const RunState& state) {
  report::GraphNodeRecord r;
  r.index = index;
  r.name = n.name;
  r.type = NodeTypeName(n.type);
  r.detail = n.detail;
  for (const NodeOperand& op : n.operands) {
    const char* access = op.access == Access::kReadWrite ? "write" : "read";
    r.buffers.emplace_back(BufferName(state, op.va, op.bytes), access);
  }
  for (uint32_t d : n.dependencies) r.dependencies.push_back(static_cast<int>(d));
  std::sort(r.dependencies.begin(), r.dependencies.end());
  for (size_t i = 0; i < n.children.size(); ++i)
    r.children.push_back(NodeRecord(n.children[i], static_cast<int>(i), state));
  return r;
}

// One line per node (children indented): what the structure hash covers. An address no buffer or
// snapshot holds (a node kept the address of a reservation freed since) counts as "address": its
// value differs between machines, and the hash compares machines.
void StructureText(const std::vector<report::GraphNodeRecord>& nodes, const std::string& indent,
                   std::string* out) {
  for (const report::GraphNodeRecord& n : nodes) {
    *out += indent + std::to_string(n.index) + "|" + n.name + "|" + n.type + "|" + n.detail + "|";
    for (const auto& [name, access] : n.buffers)
      *out += (name.rfind("0x", 0) == 0 ? std::string("address") : name) + ":" + access + ",";
    *out += "|";
    for (int d : n.dependencies) *out += std::to_string(d) + ",";
    *out += "\n";
    StructureText(n.children, indent + "  ", out);
  }
}

}  // namespace

report::GraphRecord RecordGraph(const GraphStructure& structure, const RunState& state) {
  report::GraphRecord g;
  for (size_t i = 0; i < structure.nodes.size(); ++i)
    g.nodes.push_back(NodeRecord(structure.nodes[i], static_cast<int>(i), state));
  std::string text;
  StructureText(g.nodes, "", &text);
  g.structure_hash = "0x" + Sha256Hex(text).substr(0, 16);
  g.dot = structure.dot;
  return g;
}

}  // namespace vmm
