#include "runner/engine/fake_engine.h"

#include <algorithm>
#include <cstring>

#include "kernels/datagen.h"
#include "runner/base/format.h"
#include "runner/engine/kernel_params.h"
#include "runner/engine/matmul_verify.h"

namespace vmm {
namespace {

uint64_t RoundUp(uint64_t value, uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

Status Unknown(const char* what, uint64_t value) {
  return RuntimeError(std::string("fake engine: unknown ") + what + " " + Hex(value));
}

}  // namespace

FakeEngine::FakeEngine(uint64_t granularity) {
  info_.backend = "fake";
  info_.name = "fake engine";
  info_.vmm_supported = true;
  info_.granularity_min = granularity;
  info_.granularity_recommended = granularity;
}

void FakeEngine::FailAt(const std::string& method, int nth, Status status) {
  failures_[{method, nth}] = std::move(status);
}

Status FakeEngine::Enter(const std::string& method, const std::string& line) {
  const int nth = ++call_counts_[method];
  auto it = failures_.find({method, nth});
  if (it == failures_.end()) return Status::Ok();
  return Fail(line, it->second);
}

Status FakeEngine::Fail(const std::string& line, Status status) {
  Record(line + " -> error: " + status.message());
  return status;
}

bool FakeEngine::Capture(KernelNodeParams params) {
  if (!capturing_) return false;
  capture_.push_back(std::move(params));
  return true;
}

Status FakeEngine::Reserve(uint64_t size, uint64_t alignment, DevicePtr hint, DevicePtr* va) {
  const std::string line = "Reserve(size=" + Hex(size) + ", align=" + Hex(alignment) +
                           (hint != 0 ? ", hint=" + Hex(hint) : std::string()) + ")";
  VMM_RETURN_IF_ERROR(Enter("Reserve", line));
  const uint64_t align = std::max(alignment, info_.granularity_recommended);
  *va = hint >= next_va_ && hint % align == 0 ? hint : RoundUp(next_va_, align);
  next_va_ = *va + RoundUp(size, info_.granularity_recommended);
  Record(line + " -> " + Hex(*va));
  return Status::Ok();
}

Status FakeEngine::Free(DevicePtr va, uint64_t size) {
  const std::string line = "Free(va=" + Hex(va) + ", size=" + Hex(size) + ")";
  VMM_RETURN_IF_ERROR(Enter("Free", line));
  Record(line);
  return Status::Ok();
}

Status FakeEngine::Create(const AllocProps& props, AllocHandle* out) {
  const std::string line =
      "Create(size=" + Hex(props.size) +
      (props.location_id >= 0 ? ", device=" + std::to_string(props.location_id) : "") + ")";
  VMM_RETURN_IF_ERROR(Enter("Create", line));
  out->value = next_alloc_++;
  Record(line + " -> " + Hex(out->value));
  return Status::Ok();
}

Status FakeEngine::Release(AllocHandle handle, SyncNote* note) {
  const std::string line = "Release(handle=" + Hex(handle.value) + ")";
  VMM_RETURN_IF_ERROR(Enter("Release", line));
  if (note != nullptr) *note = SyncNote{};
  Record(line);
  return Status::Ok();
}

Status FakeEngine::Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle) {
  const std::string line = "Map(va=" + Hex(va) + ", size=" + Hex(size) + ", offset=" + Hex(offset) +
                           ", handle=" + Hex(handle.value) + ")";
  VMM_RETURN_IF_ERROR(Enter("Map", line));
  Record(line);
  return Status::Ok();
}

Status FakeEngine::SetAccess(DevicePtr va, uint64_t size, std::span<const DeviceAccess> access,
                             SyncNote*) {
  std::string list;
  if (access.size() == 1 && access[0].device < 0) {
    list = AccessName(access[0].access);
  } else {
    for (const DeviceAccess& a : access) {
      list += (list.empty() ? "{" : ", ") + std::to_string(a.device) + ": " + AccessName(a.access);
    }
    list += "}";
  }
  const std::string line =
      "SetAccess(va=" + Hex(va) + ", size=" + Hex(size) + ", access=" + list + ")";
  VMM_RETURN_IF_ERROR(Enter("SetAccess", line));
  Record(line);
  return Status::Ok();
}

Status FakeEngine::GetAccess(DevicePtr va, int device, Access* out) {
  const std::string line = "GetAccess(va=" + Hex(va) + ", device=" + std::to_string(device) + ")";
  VMM_RETURN_IF_ERROR(Enter("GetAccess", line));
  *out = get_access_;
  Record(line + " -> " + AccessName(*out));
  return Status::Ok();
}

Status FakeEngine::SelectDevice(int device) {
  const std::string line = "SelectDevice(" + std::to_string(device) + ")";
  VMM_RETURN_IF_ERROR(Enter("SelectDevice", line));
  Record(line);
  return Status::Ok();
}

Status FakeEngine::Unmap(DevicePtr va, uint64_t size, SyncNote* note) {
  const std::string line = "Unmap(va=" + Hex(va) + ", size=" + Hex(size) + ")";
  VMM_RETURN_IF_ERROR(Enter("Unmap", line));
  if (note != nullptr) *note = SyncNote{};
  Record(line);
  return Status::Ok();
}

Status FakeEngine::LaunchKernel(const KernelNodeParams& params, OpTiming* timing) {
  const std::string line = KernelCallText(params);
  VMM_RETURN_IF_ERROR(Enter("LaunchKernel", line));
  const bool captured = Capture(KernelNodeParams(params));
  if (timing != nullptr) timing->gpu_us = captured ? -1 : 1;
  Record(line + (captured ? " [captured]" : ""));
  return Status::Ok();
}

Status FakeEngine::BeginCapture() {
  VMM_RETURN_IF_ERROR(Enter("BeginCapture", "BeginCapture()"));
  if (capturing_) {
    return Fail("BeginCapture()", RuntimeError("fake engine: already capturing"));
  }
  capturing_ = true;
  capture_.clear();
  capture_names_.clear();
  Record("BeginCapture()");
  return Status::Ok();
}

Status FakeEngine::EndCapture(GraphHandle* out) {
  VMM_RETURN_IF_ERROR(Enter("EndCapture", "EndCapture()"));
  if (!capturing_) {
    return Fail("EndCapture()", RuntimeError("fake engine: not capturing"));
  }
  capturing_ = false;
  out->value = next_graph_++;
  graphs_[out->value] = std::move(capture_);
  capture_names_.resize(graphs_[out->value].size());
  graph_names_[out->value] = std::move(capture_names_);
  capture_.clear();
  capture_names_.clear();
  Record("EndCapture() -> " + Hex(out->value));
  return Status::Ok();
}

Status FakeEngine::CaptureLane(int lane) {
  const std::string line = "CaptureLane(" + std::to_string(lane) + ")";
  VMM_RETURN_IF_ERROR(Enter("CaptureLane", line));
  if (!capturing_) return Fail(line, RuntimeError("fake engine: not capturing"));
  if (lane != 0) return Fail(line, RuntimeError("fake engine: one capture lane only"));
  Record(line);
  return Status::Ok();
}

Status FakeEngine::NameCapturedNode(const std::string& name) {
  const std::string line = "NameCapturedNode(" + name + ")";
  VMM_RETURN_IF_ERROR(Enter("NameCapturedNode", line));
  if (!capturing_ || capture_.empty() || capture_names_.size() >= capture_.size()) {
    return Fail(line, RuntimeError("fake engine: no node to name"));
  }
  capture_names_.resize(capture_.size() - 1);
  capture_names_.push_back(name);
  Record(line);
  return Status::Ok();
}

Status FakeEngine::DescribeGraph(GraphHandle graph, GraphStructure* out) {
  const std::string line = "DescribeGraph(graph=" + Hex(graph.value) + ")";
  VMM_RETURN_IF_ERROR(Enter("DescribeGraph", line));
  auto it = graphs_.find(graph.value);
  if (it == graphs_.end()) return Fail(line, Unknown("graph", graph.value));
  *out = GraphStructure{};
  for (size_t i = 0; i < it->second.size(); ++i) {
    GraphNodeInfo node;
    node.name = graph_names_[graph.value][i];
    node.type = NodeType::kKernel;
    node.detail = it->second[i].function;
    if (i > 0) node.dependencies = {static_cast<uint32_t>(i - 1)};
    out->nodes.push_back(std::move(node));
  }
  Record(line);
  return Status::Ok();
}

Status FakeEngine::InstantiateWith(GraphHandle graph, const InstantiateOptions&, ExecHandle* out,
                                   InstantiateInfo* info) {
  const std::string line = "Instantiate(graph=" + Hex(graph.value) + ")";
  VMM_RETURN_IF_ERROR(Enter("Instantiate", line));
  auto it = graphs_.find(graph.value);
  if (it == graphs_.end()) return Fail(line, Unknown("graph", graph.value));
  out->value = next_exec_++;
  execs_[out->value] = it->second.size();
  if (info != nullptr) *info = InstantiateInfo{1, -1, 0};
  Record(line + " -> " + Hex(out->value));
  return Status::Ok();
}

Status FakeEngine::Replay(ExecHandle exec, OpTiming* timing) {
  const std::string line = "Replay(exec=" + Hex(exec.value) + ")";
  VMM_RETURN_IF_ERROR(Enter("Replay", line));
  auto it = execs_.find(exec.value);
  if (it == execs_.end()) return Fail(line, Unknown("exec", exec.value));
  if (timing != nullptr) timing->gpu_us = static_cast<double>(it->second);
  Record(line);
  return Status::Ok();
}

Status FakeEngine::Update(ExecHandle exec, GraphHandle graph, UpdateResult* result) {
  const std::string line = "Update(exec=" + Hex(exec.value) + ", graph=" + Hex(graph.value) + ")";
  VMM_RETURN_IF_ERROR(Enter("Update", line));
  if (execs_.count(exec.value) == 0) return Fail(line, Unknown("exec", exec.value));
  auto g = graphs_.find(graph.value);
  if (g == graphs_.end()) return Fail(line, Unknown("graph", graph.value));
  *result = update_result_;
  if (result->code == UpdateCode::kSuccess) execs_[exec.value] = g->second.size();
  Record(line + " -> " + UpdateCodeName(result->code));
  return Status::Ok();
}

Status FakeEngine::KernelNodes(GraphHandle graph, std::vector<KernelNodeParams>* out) {
  const std::string line = "KernelNodes(graph=" + Hex(graph.value) + ")";
  VMM_RETURN_IF_ERROR(Enter("KernelNodes", line));
  auto it = graphs_.find(graph.value);
  if (it == graphs_.end()) return Fail(line, Unknown("graph", graph.value));
  *out = it->second;
  Record(line + " -> " + std::to_string(out->size()) + " nodes");
  return Status::Ok();
}

Status FakeEngine::DestroyGraph(GraphHandle graph) {
  const std::string line = "DestroyGraph(graph=" + Hex(graph.value) + ")";
  VMM_RETURN_IF_ERROR(Enter("DestroyGraph", line));
  if (graphs_.erase(graph.value) == 0) return Fail(line, Unknown("graph", graph.value));
  Record(line);
  return Status::Ok();
}

Status FakeEngine::DestroyExec(ExecHandle exec) {
  const std::string line = "DestroyExec(exec=" + Hex(exec.value) + ")";
  VMM_RETURN_IF_ERROR(Enter("DestroyExec", line));
  if (execs_.erase(exec.value) == 0) return Fail(line, Unknown("exec", exec.value));
  Record(line);
  return Status::Ok();
}

Status FakeEngine::CopyToHost(DevicePtr src, uint64_t bytes, void* dst) {
  const std::string line = "CopyToHost(src=" + Hex(src) + ", bytes=" + Hex(bytes) + ")";
  VMM_RETURN_IF_ERROR(Enter("CopyToHost", line));
  if (bytes != 0) std::memset(dst, 0, bytes);
  Record(line);
  return Status::Ok();
}

Status FakeEngine::Checksum(DevicePtr src, uint64_t count, uint64_t* hash) {
  const std::string line = "Checksum(src=" + Hex(src) + ", count=" + std::to_string(count) + ")";
  VMM_RETURN_IF_ERROR(Enter("Checksum", line));
  if (checksum_.has_value()) {
    *hash = *checksum_;
  } else {
    *hash = 0;
    for (uint64_t i = 0; i < count; ++i) *hash += datagen::HashWord(0, i);
  }
  Record(line + " -> " + Hex(*hash));
  return Status::Ok();
}

Status FakeEngine::AllocSnapshot(uint64_t bytes, DataPlace place, SnapshotHandle* out) {
  const std::string line =
      "AllocSnapshot(bytes=" + Hex(bytes) + ", place=" + DataPlaceName(place) + ")";
  VMM_RETURN_IF_ERROR(Enter("AllocSnapshot", line));
  *out = SnapshotHandle{next_snapshot_, next_snapshot_, bytes, place};
  next_snapshot_ += RoundUp(bytes == 0 ? 1 : bytes, 4096);
  Record(line + " -> " + Hex(out->addr));
  return Status::Ok();
}

Status FakeEngine::FreeSnapshot(const SnapshotHandle& snapshot) {
  const std::string line = "FreeSnapshot(" + Hex(snapshot.addr) + ")";
  VMM_RETURN_IF_ERROR(Enter("FreeSnapshot", line));
  Record(line);
  return Status::Ok();
}

Status FakeEngine::Copy(DataRef dst, DataRef src, uint64_t bytes, OpTiming* timing) {
  const std::string line = "Copy(dst=" + Hex(dst.addr) + " " + DataPlaceName(dst.place) +
                           ", src=" + Hex(src.addr) + " " + DataPlaceName(src.place) +
                           ", bytes=" + Hex(bytes) + ")";
  VMM_RETURN_IF_ERROR(Enter("Copy", line));
  if (timing != nullptr) timing->gpu_us = 1;
  Record(line);
  return Status::Ok();
}

Status FakeEngine::CopyHashed(DataRef dst, DevicePtr src, uint64_t count, OpTiming* timing,
                              uint64_t* hash) {
  VMM_RETURN_IF_ERROR(Copy(dst, DataRef::Device(src), count * 4, timing));
  return Checksum(src, count, hash);
}

namespace {
uint64_t ZerosHash(uint64_t count) {
  uint64_t hash = 0;
  for (uint64_t i = 0; i < count; ++i) hash += datagen::HashWord(0, i);
  return hash;
}
}  // namespace

Status FakeEngine::CompareData(DevicePtr a, DataRef b, uint64_t count,
                               const CompareOptions& options, DataCompareResult* out) {
  const std::string line = "CompareData(a=" + Hex(a) + ", b=" + Hex(b.addr) + " " +
                           DataPlaceName(b.place) + ", count=" + std::to_string(count) +
                           ", max_report=" + std::to_string(options.max_report) + ")";
  VMM_RETURN_IF_ERROR(Enter("CompareData", line));
  if (compare_result_) {
    *out = *compare_result_;
  } else {
    *out = DataCompareResult{};
    out->hash = ZerosHash(count);
    out->other_hash = options.other_hash_known ? options.other_hash : out->hash;
  }
  if (out->first.size() > options.max_report) out->first.resize(options.max_report);
  Record(line + " -> " + std::to_string(out->mismatches) + " mismatches");
  return Status::Ok();
}

Status FakeEngine::CompareValue(DevicePtr a, uint32_t pattern, uint64_t count, uint32_t max_report,
                                DataCompareResult* out) {
  const std::string line = "CompareValue(a=" + Hex(a) + ", pattern=" + Hex(pattern) +
                           ", count=" + std::to_string(count) + ")";
  VMM_RETURN_IF_ERROR(Enter("CompareValue", line));
  if (compare_result_) {
    *out = *compare_result_;
  } else {
    *out = DataCompareResult{};
    out->hash = ZerosHash(count);
    if (pattern != 0) {
      out->mismatches = count;
      for (uint64_t i = 0; i < count && i < max_report; ++i) out->first.push_back({i, pattern, 0});
    }
  }
  if (out->first.size() > max_report) out->first.resize(max_report);
  Record(line + " -> " + std::to_string(out->mismatches) + " mismatches");
  return Status::Ok();
}

Status FakeEngine::CheckMatmul(const MatmulArgs& args, uint32_t max_report,
                               MatmulCheckResult* out) {
  const std::string line = "CheckMatmul(a=" + Hex(args.a) + ", b=" + Hex(args.b) +
                           ", c=" + Hex(args.c) + ", m=" + std::to_string(args.m) +
                           ", n=" + std::to_string(args.n) + ", k=" + std::to_string(args.k) + ")";
  VMM_RETURN_IF_ERROR(Enter("CheckMatmul", line));
  if (matmul_result_) {
    *out = *matmul_result_;
  } else {
    *out = MatmulCheckResult{};
    out->freivalds = uint64_t{args.m} * args.n * args.k > kFullReferenceLimit;
    out->elements = uint64_t{args.m} * args.n;
  }
  if (out->first.size() > max_report) out->first.resize(max_report);
  Record(line + " -> " + std::to_string(out->mismatches) + " mismatches");
  return Status::Ok();
}

Status FakeEngine::Synchronize() {
  VMM_RETURN_IF_ERROR(Enter("Synchronize", "Synchronize()"));
  Record("Synchronize()");
  return Status::Ok();
}

Status FakeEngine::Inventory(EngineInventory* out) {
  VMM_RETURN_IF_ERROR(Enter("Inventory", "Inventory()"));
  *out = EngineInventory{};
  if (!inventories_.empty()) {
    *out = std::move(inventories_.front());
    inventories_.erase(inventories_.begin());
  }
  Record("Inventory()");
  return Status::Ok();
}

}  // namespace vmm
