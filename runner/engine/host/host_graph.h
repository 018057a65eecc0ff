// Graphs of the host backend: what stream capture records, and the cudaGraphExecUpdate rules.
//
// Capture follows CUDA stream capture. Each capture lane (stream) has a dependency set: a call on
// it makes one node that depends on the set (in the set's order) and becomes the set. A lane joins
// the capture when ForkLane gives it another lane's set (an event recorded there, waited for
// here); JoinLane appends another lane's set to a lane's own. EndCapture needs every node that
// nothing depends on (a sink) in lane 0's set: otherwise a fork was never joined back
// (CUDA_ERROR_STREAM_CAPTURE_UNJOINED). Nodes are numbered in creation order, so dependencies
// always point to earlier nodes and creation order is a topological order.
//
// Every node carries what the CUDA backend reads back from the driver: kernel nodes their
// KernelNodeParams (kernel name and launch geometry from kernels/launch_config.h, arguments packed
// as the CUDA ABI lays them out); memset, memcpy, event, memory and child graph nodes their
// parameters. A node's name is the step that made it (CaptureBuilder::NameLast).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/engine/engine.h"

namespace vmm::host {

// A conditional node's handle and words; also the arguments of its kernels. `handle` is unique in
// the engine (a cudaGraphConditionalHandle is opaque).
struct ConditionArgs {
  ConditionKind kind = ConditionKind::kIf;
  uint64_t handle = 0;
  DevicePtr word = 0;    // the condition (if) or the counter (while)
  DevicePtr passes = 0;  // while: the pass count word (0: none)
};

struct HostGraph;

// One node; `type` says which of the parameter fields hold.
struct GraphNode {
  NodeType type = NodeType::kKernel;
  std::string name;                    // the step that made it
  std::vector<uint32_t> dependencies;  // indices of the nodes this one waits for, in edge order
  bool enabled = true;                 // an exec's node after SetNodeEnabled(false): false
  // kKernel: the kernel and its packed arguments, all a kernel node holds; it runs the kernel's
  // CPU twin on them (cpu_kernels.h, FindCpuKernel), or, for a conditional node's two kernels,
  // the engine's own code (with `condition`).
  KernelNodeParams params;
  // kMemset: `count` words at dst set to `pattern`. kMemcpy: `count` bytes from src to dst; a side
  // whose place is a host one is a host snapshot's memory, read or written when the node runs (as
  // a memcpy node over pinned host memory is; the node holds no copy of it).
  DevicePtr dst = 0, src = 0;
  DataPlace src_place = DataPlace::kDevice, dst_place = DataPlace::kDevice;
  uint64_t count = 0;
  uint32_t pattern = 0;
  bool HostCopy() const { return IsHostPlace(src_place) || IsHostPlace(dst_place); }
  int event = -1;  // kEventRecord, kEventWait
  // kMemAlloc: the allocation at ptr of `count` bytes; kMemFree: the allocation at ptr.
  DevicePtr ptr = 0;
  std::shared_ptr<const HostGraph> child;  // kGraph: a copy of the embedded graph;
                                           // kConditional: the body graph
  // kConditional, and kernels of kind kSetCondition / kNextPass.
  ConditionArgs condition;
};

// A kernel node of vmm-run's kernels: `params` from kernel_params.h's packers.
GraphNode MakeKernelNode(KernelNodeParams params);
GraphNode MakeMemsetNode(DevicePtr dst, uint64_t count, uint32_t pattern);
GraphNode MakeCopyNode(DevicePtr dst, DevicePtr src, uint64_t bytes);
// A memcpy node between any two places (a host side is a host snapshot's memory).
GraphNode MakeDataCopyNode(DataRef dst, DataRef src, uint64_t bytes);
GraphNode MakeNode(NodeType type);  // host, event, memory and child graph nodes: set the rest
// A conditional node's kernels and the node itself (its body is set when the body ends).
GraphNode MakeSetConditionNode(const ConditionArgs& condition);
GraphNode MakeNextPassNode(const ConditionArgs& condition);
GraphNode MakeConditionalNode(const ConditionArgs& condition);

// A captured graph, and (with the same shape) an executable graph: Instantiate copies the nodes,
// so an exec is independent of the graph it came from.
struct HostGraph {
  std::vector<GraphNode> nodes;

  std::vector<KernelNodeParams> KernelNodes() const;
  // The index of the node named `name`, or -1.
  int Find(const std::string& name) const;
  // Whether a node (not counting child graphs) is a graph memory node.
  bool HasMemoryNodes() const;
  // Whether a node is a conditional node.
  bool HasConditionalNodes() const;
  // Whether an alloc node of this graph (not of its children) allocates the byte at `p`: graph
  // memory of its own, which exists when a replay reaches the node.
  bool Allocates(DevicePtr p) const;
  // The structure as every backend reports it (names, types, details, edges, operands).
  GraphStructure Describe() const;
};

// The capture in progress on the lanes of one stream capture.
class CaptureBuilder {
 public:
  CaptureBuilder();
  // Work captured from now on goes to `lane`; it must have joined the capture (lane 0 always has).
  Status SetLane(int lane);
  Status Fork(int from, int to);
  Status Join(int from, int into);
  // Adds `node` on the current lane (its dependencies are the lane's set).
  Status Add(GraphNode node);
  // Names the node the last Add on the current lane (or in the open body) made.
  Status NameLast(const std::string& name);
  // Conditional bodies: BeginBody adds `conditional` (a kConditional node) like Add, then sends
  // every later Add into its body, one chain, until EndBody, which gives the node its body. Bodies
  // nest; lanes cannot change while one is open. `name` is kept for the body's own nodes.
  Status BeginBody(GraphNode conditional, const std::string& name);
  Status EndBody();
  // The innermost open body's condition and name (BeginBody's), or nullptr when none is open.
  const ConditionArgs* OpenCondition(std::string* name) const;
  // The graph captured so far (open bodies not included).
  const HostGraph& graph() const { return graph_; }
  // Ends the capture: the graph, or CUDA_ERROR_STREAM_CAPTURE_UNJOINED (a fork never joined) or
  // CUDA_ERROR_ILLEGAL_STATE (a conditional body never ended).
  Status Finish(HostGraph* out);

 private:
  Status Lane(int lane, const char* function) const;
  Status NoBody(const char* function) const;

  struct Body {
    HostGraph graph;
    uint32_t node = 0;  // the conditional node, in the graph below (the capture's or a body's)
    int last = -1;      // the chain's last node
    int unnamed = -1;   // the node the last Add made, until named
    ConditionArgs condition;
    std::string name;
  };
  std::vector<Body> bodies_;  // open bodies, innermost last

  HostGraph graph_;
  std::vector<std::optional<std::vector<uint32_t>>> lanes_;  // unset: not in the capture
  std::vector<int> last_;  // by lane: the node its last Add made, -1 once named or none
  int lane_ = 0;
};

// cudaGraphExecUpdate(exec, graph) under the rules of the CUDA runtime's documentation
// (cudaGraphExecUpdate in cuda_runtime_api.h, CUDA 13.0):
//   Topology: nodes are paired from the sinks (nodes nothing depends on, in creation order)
//   backwards along dependencies in edge order.
//     - node counts differ                        -> kErrorTopologyChanged, no error node;
//     - `graph` has more sinks than `exec`          -> kErrorTopologyChanged at the first unpaired
//                                                    sink of `graph`;
//     - a pair's dependency counts differ           -> kErrorTopologyChanged at the node of
//     `graph`;
//     - a dependency pairs with another node than
//       the one its edge reaches                    -> kErrorTopologyChanged at the node of
//                                                    `graph`, error_from_node the dependency.
//   Then, node by node in `graph`'s creation order:
//     - the paired node's type differs              -> kErrorNodeTypeChanged;
//     - graph memory nodes (alloc, free) pair like any other node (the H200, driver 580, returned
//       success for two graphs of one shape with memory nodes; older documentation says not
//       supported);
//     - a conditional node (if / while)             -> its body by the same rules, as a child
//                                                    graph's (the H200 returned success for two
//                                                    captures of one shape and ran the new body);
//                                                    an if paired with a while
//                                                    -> kErrorNotSupported (the H200's answer);
//     - a memcpy whose source or destination memory
//       type changes (host <-> device)              -> kErrorParametersChanged;
//     - a child graph                               -> the same rules on the children (an error
//                                                    names the child's node);
//     - kernels (a new function is allowed: both of vmm-run's kernels live in one module, so the
//       owning context never changes), memsets (address, value; a 1-D width change is allowed
//       "opportunistically" by CUDA and always here), host and event nodes -> accepted.
// Every error names the node of `graph` (error_node) by its name. A refused update leaves `exec`
// unchanged and sets api_error to "cudaErrorGraphExecUpdateFailure". An accepted one gives every
// node of `exec` its pair's parameters; the exec's nodes keep their names (the nodes of the graph
// they were instantiated from) and their enabled state.
// `writable` (may be empty): whether the exec's device may write a memset node's destination; a
// paired memset node whose parameters change to one it may not write -> kError at that node.
using MemsetCheck = std::function<bool(const GraphNode&)>;
UpdateResult UpdateExec(HostGraph* exec, const HostGraph& graph, const MemsetCheck& writable = {});

}  // namespace vmm::host
