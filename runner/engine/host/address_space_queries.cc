// AddressSpace's queries (retain, granted properties, ranges, granularity, free memory), its
// sharing (export / import of a POSIX fd) and its inventory: what reads the twin's state rather
// than changing its mappings. The VMM calls themselves are in address_space.cc.
#include <cstdlib>
#include <string>
#include <utility>

#include "runner/base/format.h"
#include "runner/engine/host/address_space.h"

namespace vmm::host {

Status AddressSpace::Retain(DevicePtr va, AllocHandle* out) {
  auto m = FindMapping(va);
  if (m == mappings_.end()) {
    return CudaError("cuMemRetainAllocationHandle", kInvalidValue,
                     Hex(va) + " is not in a mapped range");
  }
  auto it = allocations_.find(m->second.handle);
  if (it == allocations_.end()) return InternalError("a mapping outlived its allocation");
  ++it->second.handles;
  out->value = it->first;
  return Status::Ok();
}

Status AddressSpace::AllocProperties(AllocHandle handle, AllocProps* granted) const {
  const AllocationEntry* a = FindHandle(handle);
  if (a == nullptr) {
    return CudaError("cuMemGetAllocationPropertiesFromHandle", kInvalidValue,
                     "unknown or released handle " + Hex(handle.value));
  }
  *granted = a->granted;
  return Status::Ok();
}

Status AddressSpace::SameAllocation(AllocHandle a, AllocHandle b, bool* same) const {
  for (AllocHandle h : {a, b}) {
    if (FindHandle(h) == nullptr)
      return CudaError("SameAllocation", kInvalidValue,
                       "unknown or released handle " + Hex(h.value));
  }
  // A handle value names one allocation for the engine's life. An import of this process's own
  // export is an allocation of its own: on the H200 the CUDA engine's proof (a word written
  // through one mapping, read through the other) found a retain of the exporter's mapping and the
  // import different (`vmm-run crosscheck`, reports/h200/session9), and the twin answers the same.
  *same = a.value == b.value;
  return Status::Ok();
}

Status AddressSpace::RangeOf(DevicePtr va, int device, DevicePtr* base, uint64_t* size) const {
  auto m = FindMapping(va);
  if (m == mappings_.end()) {
    return CudaError("cuMemGetAddressRange", "CUDA_ERROR_NOT_FOUND",
                     Hex(va) + " is not in a mapped range");
  }
  // The H200 (driver 580) answers CUDA_ERROR_NOT_FOUND for a mapping the asking device has no
  // access to yet, created or retained, and finds it once access is read or read_write
  // (tools/twin_fidelity_probe.cc, reports/h200/session9).
  if (m->second.access[device] == Access::kNone) {
    return CudaError(
        "cuMemGetAddressRange", "CUDA_ERROR_NOT_FOUND",
        Hex(va) + " is mapped, but device " + std::to_string(device) + " has no access to it");
  }
  *base = m->first;
  *size = m->second.range->size;
  // For a mapping of host memory (location host or host NUMA) the H200 answers the size with a
  // base of 0 (`vmm-run crosscheck`, reports/h200/session9); the twin answers the same.
  if (auto a = allocations_.find(m->second.handle);
      a != allocations_.end() && a->second.granted.location != MemLocation::kDevice)
    *base = 0;
  return Status::Ok();
}

Status AddressSpace::Granularity(const AllocProps& props, GranularityKind kind,
                                 uint64_t* bytes) const {
  const char* error = nullptr;
  if (std::string e = CheckProps(props, false, &error); !e.empty())
    return CudaError("cuMemGetAllocationGranularity", error, e);
  // This engine's Create takes multiples of its configured granularity only, so that is its
  // minimum as well as its recommendation (DeviceInfo's granularity_min, the page size, is the
  // finest granularity a host engine can be configured with).
  (void)kind;
  *bytes = granularity_;
  return Status::Ok();
}

void AddressSpace::MemoryInfo(int device, uint64_t* free_bytes, uint64_t* total_bytes) const {
  const uint64_t committed = device >= 0 && device < device_count_ ? committed_[device] : 0;
  *total_bytes = total_memory_;
  *free_bytes = committed < total_memory_ ? total_memory_ - committed : 0;
}

Status AddressSpace::HoldMemory(int device, uint64_t leave_free, uint64_t* held) {
  if (held_[device] != 0 || helper_held_[device] != 0) {
    return CudaError("cuMemCreate", kInvalidValue,
                     "device " + std::to_string(device) + " already holds " +
                         FormatBytes(held_[device] + helper_held_[device]) +
                         " for memory pressure");
  }
  uint64_t free = 0, total = 0;
  MemoryInfo(device, &free, &total);
  const uint64_t take = free > leave_free ? (free - leave_free) / granularity_ * granularity_ : 0;
  // While the process is checkpointed the hold is the checkpoint helper's (another process's),
  // which a later checkpoint of this one does not take away.
  (parked_any_ ? helper_held_ : held_)[device] = take;
  committed_[device] += take;
  *held = take;
  return Status::Ok();
}

void AddressSpace::ReturnMemory(int device, uint64_t* returned) {
  *returned = held_[device] + helper_held_[device];
  committed_[device] -= *returned;
  held_[device] = 0;
  helper_held_[device] = 0;
}

Status AddressSpace::Export(AllocHandle handle, int* fd) {
  const char* fn = "cuMemExportToShareableHandle";
  const AllocationEntry* a = FindHandle(handle);
  if (a == nullptr)
    return CudaError(fn, kInvalidValue, "unknown or released handle " + Hex(handle.value));
  if ((a->granted.handle_types & kHandleTypePosixFd) == 0) {
    return CudaError(fn, kInvalidValue,
                     "handle " + Hex(handle.value) +
                         " was created without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR");
  }
  StatusOr<int> copy = DuplicateFd(a->memory->fd);
  if (!copy.ok()) return CudaError(fn, kOutOfMemory, copy.status().message());
  *fd = *copy;
  return Status::Ok();
}

Status AddressSpace::Import(int fd, AllocHandle* out) {
  const char* fn = "cuMemImportFromShareableHandle";
  std::string name;
  StatusOr<PhysicalMemory> memory = OpenSharedMemory(fd, &name);
  if (!memory.ok()) return CudaError(fn, kInvalidValue, memory.status().message());
  const std::string what = "the size of fd " + std::to_string(fd);
  if (std::string e = CheckGranular(what.c_str(), memory->get().size, true); !e.empty())
    return CudaError(fn, kInvalidValue, e);
  const uint64_t id = ids_->Next();
  // The exporter's memory: it counts there (in whichever process), never again here. Its location
  // is in the memfd's name ("...-dev<N>" or "...-numa<K>", AddressSpace::Create), read back as the
  // GPU reads an import's; it can be exported again.
  AllocProps granted;
  granted.size = memory->get().size;
  granted.location_id = 0;
  granted.handle_types = kHandleTypePosixFd;
  if (const size_t numa = name.rfind("-numa"); numa != std::string::npos) {
    granted.location = MemLocation::kHostNuma;
    granted.location_id = std::atoi(name.c_str() + numa + 5);
  } else if (const size_t dev = name.rfind("-dev"); dev != std::string::npos) {
    granted.location_id = std::atoi(name.c_str() + dev + 4);
  }
  AllocationEntry entry{id, 0, std::move(memory).value(), granted};
  entry.imported = true;
  allocations_.emplace(id, std::move(entry));
  out->value = id;
  return Status::Ok();
}

void AddressSpace::Inventory(EngineInventory* out) const {
  *out = EngineInventory{};
  for (const auto& [va, r] : reservations_) out->reservations.push_back({va, r.range->size});
  for (const auto& [id, a] : allocations_) {
    if (a.handles > 0) out->allocations.push_back({id, a.memory->size});
  }
  for (const auto& [va, m] : mappings_) out->mappings.push_back({va, m.range->size, m.handle, {}});
}

}  // namespace vmm::host
