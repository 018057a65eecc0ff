#include "runner/vocab/graph_node.h"

#include <array>
#include <utility>

namespace vmm {
namespace {
constexpr std::array<std::pair<NodeType, const char*>, 11> kNodeTypeNames = {{
    {NodeType::kKernel, "kernel"},
    {NodeType::kMemset, "memset"},
    {NodeType::kMemcpy, "memcpy"},
    {NodeType::kHost, "host"},
    {NodeType::kEventRecord, "event_record"},
    {NodeType::kEventWait, "event_wait"},
    {NodeType::kMemAlloc, "mem_alloc"},
    {NodeType::kMemFree, "mem_free"},
    {NodeType::kGraph, "graph"},
    {NodeType::kConditional, "conditional"},
    {NodeType::kEmpty, "empty"},
}};
}  // namespace

const char* NodeTypeName(NodeType type) {
  for (const auto& [t, name] : kNodeTypeNames)
    if (t == type) return name;
  return "unknown";
}

bool ParseNodeType(const std::string& name, NodeType* out) {
  for (const auto& [t, n] : kNodeTypeNames) {
    if (name == n) {
      *out = t;
      return true;
    }
  }
  return false;
}

}  // namespace vmm
