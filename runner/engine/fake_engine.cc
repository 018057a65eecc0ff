#include "runner/engine/fake_engine.h"

#include <algorithm>
#include <cstring>

#include "kernels/datagen.h"
#include "runner/base/format.h"
#include "runner/engine/kernel_params.h"

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

Status FakeEngine::SetAccess(DevicePtr va, uint64_t size, std::span<const DeviceAccess> access) {
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

Status FakeEngine::Fill(DevicePtr dst, uint64_t count, uint64_t seed, OpTiming* timing) {
  const std::string line = "Fill(dst=" + Hex(dst) + ", count=" + std::to_string(count) +
                           ", seed=" + std::to_string(seed) + ")";
  VMM_RETURN_IF_ERROR(Enter("Fill", line));
  KernelNodeParams p = FillKernelParams(dst, count, seed);
  const bool captured = Capture(std::move(p));
  if (timing != nullptr) timing->gpu_us = captured ? -1 : 1;
  Record(line + (captured ? " [captured]" : ""));
  return Status::Ok();
}

Status FakeEngine::Matmul(const MatmulArgs& args, OpTiming* timing) {
  const std::string line = "Matmul(a=" + Hex(args.a) + ", b=" + Hex(args.b) + ", c=" + Hex(args.c) +
                           ", m=" + std::to_string(args.m) + ", n=" + std::to_string(args.n) +
                           ", k=" + std::to_string(args.k) + ")";
  VMM_RETURN_IF_ERROR(Enter("Matmul", line));
  KernelNodeParams p = MatmulKernelParams(args);
  const bool captured = Capture(std::move(p));
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
  capture_.clear();
  Record("EndCapture() -> " + Hex(out->value));
  return Status::Ok();
}

Status FakeEngine::Instantiate(GraphHandle graph, ExecHandle* out) {
  const std::string line = "Instantiate(graph=" + Hex(graph.value) + ")";
  VMM_RETURN_IF_ERROR(Enter("Instantiate", line));
  auto it = graphs_.find(graph.value);
  if (it == graphs_.end()) return Fail(line, Unknown("graph", graph.value));
  out->value = next_exec_++;
  execs_[out->value] = it->second.size();
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

Status FakeEngine::Compare(DevicePtr a, DevicePtr b, uint64_t count, uint32_t max_report,
                           CompareResult* out) {
  const std::string line = "Compare(a=" + Hex(a) + ", b=" + Hex(b) +
                           ", count=" + std::to_string(count) +
                           ", max_report=" + std::to_string(max_report) + ")";
  VMM_RETURN_IF_ERROR(Enter("Compare", line));
  *out = compare_result_;
  if (out->first_indices.size() > max_report) out->first_indices.resize(max_report);
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
