// The words every backend uses for a graph node's GraphNodeInfo::detail, so the structure a CUDA
// run reads back from the driver and the one the host twin records compare equal, and the DOT text
// both backends write for a GraphStructure (the CUDA backend takes cudaGraphDebugDotPrint's
// instead with `run --driver-dot`).
#pragma once

#include <cstdint>
#include <string>

#include "runner/engine/engine.h"

namespace vmm {

std::string MemsetDetail(uint32_t pattern);  // "value 0xa5a5a5a5"
// "host_to_device" | "device_to_device" | "device_to_host" | "host_to_host"
const char* MemcpyDetail(bool from_host, bool to_host);
std::string EventDetail(int event);       // "event 3"
std::string AllocDetail(uint64_t bytes);  // "bytes 65536"

// A Graphviz digraph of `graph`: one box per node (its name, type and detail; a child graph as a
// cluster of its nodes), an edge per dependency.
std::string StructureDot(const GraphStructure& graph);

}  // namespace vmm
