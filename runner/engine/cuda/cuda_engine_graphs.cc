// CudaEngine: capture and its lanes (streams that join a capture through events), naming the node
// each captured call made, event / memory / child graph nodes, and the graph memory pool. Execs,
// updates, structure and destruction are in cuda_engine_execs.cc.
// A capture records on the selected device's lane (its stream and that device's capture streams);
// the graph remembers that lane (graph_lanes_), and an exec the lane it was instantiated on
// (exec_lanes_): it replays, updates and changes nodes there whatever is selected later.
#include <algorithm>
#include <string>
#include <utility>

#include "runner/base/format.h"
#include "runner/base/stopwatch.h"
#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/cuda_engine_impl.h"
#include "runner/engine/cuda/graph_ops.h"

namespace vmm::cuda {
namespace {

template <typename T>
T* FindObject(std::map<uint64_t, T>& objects, uint64_t id) {
  auto it = objects.find(id);
  return it == objects.end() ? nullptr : &it->second;
}

Status UnknownHandle(const std::string& what, const char* kind) {
  return RuntimeError(what + ": unknown " + kind +
                      " handle (never created by this engine, or already destroyed)");
}

Status NotCapturing(const char* what) {
  return RuntimeError(std::string(what) + ": the stream is not capturing");
}

}  // namespace

void CUDART_CB CudaEngine::HostCall(void* engine) {
  static_cast<CudaEngine*>(engine)->host_calls_.fetch_add(1);
}

Status CudaEngine::LaneStream(int lane, cudaStream_t* out) {
  if (lane < 0) return InternalError("negative capture lane");
  if (lane == 0) {
    *out = stream();
    return Status::Ok();
  }
  std::vector<Stream>& streams = lane_->capture_streams;  // created with the device current
  while (streams.size() < static_cast<size_t>(lane)) {
    StatusOr<Stream> s = CreateStream();
    if (!s.ok()) return s.status();
    streams.push_back(std::move(s).value());
  }
  *out = streams[lane - 1].get();
  return Status::Ok();
}

Status CudaEngine::ForkEvent(cudaEvent_t* out) {
  std::vector<Event>& events = lane_->fork_events;
  if (fork_events_used_ >= events.size()) {
    StatusOr<Event> e = CreateEvent(/*timing=*/false);
    if (!e.ok()) return e.status();
    events.push_back(std::move(e).value());
  }
  *out = events[fork_events_used_++].get();
  return Status::Ok();
}

Status CudaEngine::NamedEvent(int event, cudaEvent_t* out) {
  const std::pair<int, int> key{lane_->ordinal, event};
  auto it = events_.find(key);
  if (it == events_.end()) {
    StatusOr<Event> e = CreateEvent(/*timing=*/false);
    if (!e.ok()) return e.status();
    it = events_.emplace(key, std::move(e).value()).first;
    event_numbers_[it->second.get()] = event;
  }
  *out = it->second.get();
  return Status::Ok();
}

// --- Capture ---

Status CudaEngine::BeginCapture() {
  VMM_RETURN_IF_ERROR(Bind());
  if (!capturing_) {
    // Drain first, so nothing is in flight while capturing (see WaitForStream).
    VMM_RETURN_IF_ERROR(Annotate(Drain(*lane_, nullptr), "BeginCapture: draining the stream"));
  }
  // ThreadLocal: unsafe calls from this thread break the capture (as Global would), calls from
  // other threads are not affected. A second BeginCapture is refused by the runtime itself.
  Status s = CUDA_CALL(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
  if (!s.ok()) {
    RefreshCapturing();
    return Annotate(s, "BeginCapture");
  }
  capturing_ = true;
  capture_lane_ = 0;
  fork_events_used_ = 0;
  capture_names_.clear();
  capture_memory_nodes_ = false;
  return Status::Ok();
}

Status CudaEngine::EndCapture(GraphHandle* out) {
  VMM_RETURN_IF_ERROR(Bind());
  cudaGraph_t raw = nullptr;
  if (!bodies_.empty()) {  // a body left open (its step failed): end it, then the capture fails
    AbortBodies();
    cudaGraph_t dropped = nullptr;
    if (cudaStreamEndCapture(stream(), &dropped) != cudaSuccess) (void)cudaGetLastError();
    if (dropped != nullptr) CUDA_CALL_NOTHROW(cudaGraphDestroy(dropped));
    RefreshCapturing();
    capture_names_.clear();
    return RuntimeError("EndCapture: a conditional body was still being captured");
  }
  Status s = CUDA_CALL(cudaStreamEndCapture(stream(), &raw));
  Graph graph(raw);  // owns whatever the runtime returned, even on failure
  capture_lane_ = 0;
  if (!s.ok()) {
    AbortBodies();
    RefreshCapturing();
    if (capturing_) AbortCapture();  // e.g. a fork left unjoined: join it and end anyway
    capture_names_.clear();
    return Annotate(s, "EndCapture");
  }
  capturing_ = false;
  if (!graph) return InternalError("EndCapture: cudaStreamEndCapture returned no graph");
  for (CapturedName& n : capture_names_)
    names_.Add(n.graph != nullptr ? n.graph : graph.get(), n.node, std::move(n.name));
  capture_names_.clear();
  const uint64_t id = NextId();
  graphs_.emplace(id, std::move(graph));
  graph_lanes_[id] = lane_;  // captured on this device: its nodes are that device's
  if (capture_memory_nodes_) memory_node_graphs_.insert(id);
  out->value = id;
  return Status::Ok();
}

Status CudaEngine::CaptureLane(int lane) {
  VMM_RETURN_IF_ERROR(Bind());
  if (!capturing_) return NotCapturing("CaptureLane");
  if (!bodies_.empty()) return RuntimeError("CaptureLane: a conditional body is one chain");
  if (lane < 0 || static_cast<size_t>(lane) > lane_->capture_streams.size()) {
    return RuntimeError("CaptureLane(" + std::to_string(lane) +
                        "): the lane has not joined the capture (fork it first)");
  }
  capture_lane_ = lane;
  return Status::Ok();
}

Status CudaEngine::ForkLane(int from, int to) {
  auto what = [&] { return "ForkLane(" + std::to_string(from) + ", " + std::to_string(to) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  if (!capturing_) return NotCapturing("ForkLane");
  if (!bodies_.empty()) return RuntimeError("ForkLane: a conditional body is one chain");
  cudaStream_t source = nullptr, target = nullptr;
  cudaEvent_t event = nullptr;
  VMM_RETURN_IF_ERROR(Annotate(LaneStream(from, &source), what));
  VMM_RETURN_IF_ERROR(Annotate(LaneStream(to, &target), what));
  VMM_RETURN_IF_ERROR(Annotate(ForkEvent(&event), what));
  // An event recorded on a capturing stream and waited for on another makes that stream join the
  // capture with the first's dependencies; neither call adds a node.
  VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaEventRecord(event, source)), what));
  return Annotate(CUDA_CALL(cudaStreamWaitEvent(target, event, 0)), what);
}

Status CudaEngine::JoinLane(int from, int into) {
  auto what = [&] {
    return "JoinLane(" + std::to_string(from) + ", " + std::to_string(into) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  if (!capturing_) return NotCapturing("JoinLane");
  if (!bodies_.empty()) return RuntimeError("JoinLane: a conditional body is one chain");
  cudaStream_t source = nullptr, target = nullptr;
  cudaEvent_t event = nullptr;
  VMM_RETURN_IF_ERROR(Annotate(LaneStream(from, &source), what));
  VMM_RETURN_IF_ERROR(Annotate(LaneStream(into, &target), what));
  VMM_RETURN_IF_ERROR(Annotate(ForkEvent(&event), what));
  VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaEventRecord(event, source)), what));
  return Annotate(CUDA_CALL(cudaStreamWaitEvent(target, event, 0)), what);
}

Status CudaEngine::NameCapturedNode(const std::string& name) {
  auto what = [&] { return "NameCapturedNode(" + name + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  if (!capturing_) return NotCapturing("NameCapturedNode");
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  size_t count = 0;
  VMM_RETURN_IF_ERROR(Annotate(CaptureInfo(work_stream(), &graph, &deps, &count), what));
  // After a call that made one node, the lane depends on exactly that node.
  bool named = count != 1;
  for (const CapturedName& n : capture_names_) named = named || n.node == deps[0];
  if (named) {
    return RuntimeError(what() + ": the last call on capture lane " +
                        std::to_string(capture_lane_) + " made no single new node (" +
                        std::to_string(count) + " dependencies)");
  }
  capture_names_.push_back({bodies_.empty() ? nullptr : bodies_.back().body, deps[0], name});
  return Status::Ok();
}

Status CudaEngine::RecordEvent(int event) {
  auto what = [&] { return "RecordEvent(" + std::to_string(event) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  if (!capturing_) return NotCapturing("RecordEvent");
  cudaEvent_t e = nullptr;
  VMM_RETURN_IF_ERROR(Annotate(NamedEvent(event, &e), what));
  // External: an event record node (a plain record would only order the capture's streams).
  return Annotate(CUDA_CALL(cudaEventRecordWithFlags(e, work_stream(), cudaEventRecordExternal)),
                  what);
}

Status CudaEngine::WaitEvent(int event) {
  auto what = [&] { return "WaitEvent(" + std::to_string(event) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  if (!capturing_) return NotCapturing("WaitEvent");
  cudaEvent_t e = nullptr;
  VMM_RETURN_IF_ERROR(Annotate(NamedEvent(event, &e), what));
  return Annotate(CUDA_CALL(cudaStreamWaitEvent(work_stream(), e, cudaEventWaitExternal)), what);
}

Status CudaEngine::GraphAlloc(uint64_t bytes, DevicePtr* ptr) {
  auto what = [&] { return "GraphAlloc(bytes=" + FormatBytes(bytes) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  if (!capturing_) return NotCapturing("GraphAlloc");
  capture_memory_nodes_ = true;
  void* p = nullptr;
  VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaMallocAsync(&p, bytes, work_stream())), what));
  *ptr = static_cast<DevicePtr>(reinterpret_cast<uintptr_t>(p));
  return Status::Ok();
}

Status CudaEngine::GraphFree(DevicePtr ptr) {
  auto what = [&] { return "GraphFree(ptr=" + Hex(ptr) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  void* p = reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
  std::optional<Enqueuing> enqueuing;
  if (!capturing_) enqueuing.emplace(*lane_);
  if (capturing_) capture_memory_nodes_ = true;
  VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaFreeAsync(p, work_stream())), what));
  if (!capturing_) live_graph_allocs_.erase(ptr);
  return Status::Ok();
}

Status CudaEngine::CaptureChildGraph(GraphHandle child) {
  auto what = [&] { return "CaptureChildGraph(graph=" + std::to_string(child.value) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  if (!capturing_) return NotCapturing("CaptureChildGraph");
  capture_memory_nodes_ = true;  // the child's nodes are not scanned here
  Graph* g = FindObject(graphs_, child.value);
  if (g == nullptr) return UnknownHandle(what(), "graph");
  cudaGraph_t capture = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  size_t count = 0;
  VMM_RETURN_IF_ERROR(Annotate(CaptureInfo(work_stream(), &capture, &deps, &count), what));
  // Stream capture has no call that embeds a graph: add the node to the graph being captured
  // after the lane's dependencies, then make the lane depend on it.
  cudaGraphNode_t node = nullptr;
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(cudaGraphAddChildGraphNode(&node, capture, deps, count, g->get())), what));
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(cudaStreamUpdateCaptureDependencies(work_stream(), &node, nullptr, 1,
                                                             cudaStreamSetCaptureDependencies)),
               what));
  cudaGraph_t copy = nullptr;  // the node holds a copy of the child: give it the child's names
  VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaGraphChildGraphNodeGetGraph(node, &copy)), what));
  return Annotate(names_.CopyToClone(g->get(), copy), what);
}

Status CudaEngine::GraphMemory(GraphMemoryUsage* out) {
  VMM_RETURN_IF_ERROR(Bind());
  VMM_RETURN_IF_ERROR(Annotate(SyncIfCapturing(), "GraphMemory"));
  VMM_RETURN_IF_ERROR(Annotate(SyncStream(), "GraphMemory"));
  const std::pair<cudaGraphMemAttributeType, uint64_t*> attrs[] = {
      {cudaGraphMemAttrUsedMemCurrent, &out->used_current},
      {cudaGraphMemAttrUsedMemHigh, &out->used_high},
      {cudaGraphMemAttrReservedMemCurrent, &out->reserved_current},
      {cudaGraphMemAttrReservedMemHigh, &out->reserved_high}};
  for (const auto& [attr, value] : attrs) {
    unsigned long long v = 0;  // the attributes' value type (cuuint64_t)
    VMM_RETURN_IF_ERROR(Annotate(
        CUDA_CALL(cudaDeviceGetGraphMemAttribute(lane_->ordinal, attr, &v)), "GraphMemory"));
    *value = v;
  }
  return Status::Ok();
}

Status CudaEngine::TrimGraphMemory() {
  VMM_RETURN_IF_ERROR(Bind());
  VMM_RETURN_IF_ERROR(Annotate(SyncIfCapturing(), "TrimGraphMemory"));
  VMM_RETURN_IF_ERROR(Annotate(SyncStream(), "TrimGraphMemory"));
  return Annotate(CUDA_CALL(cudaDeviceGraphMemTrim(lane_->ordinal)), "TrimGraphMemory");
}

}  // namespace vmm::cuda
