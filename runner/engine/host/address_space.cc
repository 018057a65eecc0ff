#include "runner/engine/host/address_space.h"

#include <sys/mman.h>

#include <algorithm>
#include <vector>

#include "runner/base/format.h"

namespace vmm::host {
namespace {

// "[0x7f0000000000, +0x200000)"
std::string Range(uint64_t va, uint64_t size) {
  std::string s = "[";
  s += Hex(va);
  s += ", +";
  s += Hex(size);
  s += ")";
  return s;
}

int Prot(Access access) {
  switch (access) {
    case Access::kNone:
      return PROT_NONE;
    case Access::kRead:
      return PROT_READ;
    case Access::kReadWrite:
      return PROT_READ | PROT_WRITE;
  }
  return PROT_NONE;
}

// The OS protection of a mapping: the widest access any device has (Access orders none < read <
// read_write).
Access Widest(const std::array<Access, kMaxScenarioDevices>& access) {
  Access widest = Access::kNone;
  for (Access a : access) widest = std::max(widest, a);
  return widest;
}

bool Sufficient(Access have, Access need) {
  if (need == Access::kReadWrite) return have == Access::kReadWrite;
  if (need == Access::kRead) return have != Access::kNone;
  return true;
}

// Erases every entry of `objects` (a map whose values have an `id`), highest id first.
template <typename Map>
void EraseNewestFirst(Map* objects) {
  std::vector<typename Map::iterator> order;
  for (auto it = objects->begin(); it != objects->end(); ++it) order.push_back(it);
  std::sort(order.begin(), order.end(),
            [](const auto& x, const auto& y) { return x->second.id > y->second.id; });
  for (auto it : order) objects->erase(it);
}

// The bytes of an allocation that count against the device's memory (cuMemGetInfo): host and
// host-NUMA memory live in host RAM, not on the device.
uint64_t DeviceBytes(const AllocProps& granted, uint64_t size) {
  return granted.location == MemLocation::kDevice ? size : 0;
}

}  // namespace

Status CudaError(const std::string& function, const char* error, const std::string& reason) {
  return Status(Code::kRuntime, function + ": " + error + ": " + reason, error);
}

AddressSpace::~AddressSpace() {
  EraseNewestFirst(&mappings_);      // re-reserves each range
  EraseNewestFirst(&allocations_);   // closes each fd
  EraseNewestFirst(&reservations_);  // munmaps each range
}

std::string AddressSpace::CheckGranular(const char* what, uint64_t value, bool nonzero) const {
  if (nonzero && value == 0) return std::string(what) + " is 0";
  if (value % granularity_ != 0) {
    return std::string(what) + " " + Hex(value) + " is not a multiple of the granularity " +
           Hex(granularity_);
  }
  return "";
}

const AddressSpace::ReservationEntry* AddressSpace::FindReservation(uint64_t va) const {
  auto it = reservations_.upper_bound(va);
  if (it == reservations_.begin()) return nullptr;
  --it;
  return va < it->second.range->end() ? &it->second : nullptr;
}

std::map<uint64_t, AddressSpace::MappingEntry>::const_iterator AddressSpace::FindMapping(
    uint64_t va) const {
  auto it = mappings_.upper_bound(va);
  if (it == mappings_.begin()) return mappings_.end();
  --it;
  return va < it->second.range->end() ? it : mappings_.end();
}

uint64_t AddressSpace::FirstUnmapped(uint64_t va, uint64_t end) const {
  while (va < end) {
    auto it = FindMapping(va);
    if (it == mappings_.end()) return va;
    va = it->second.range->end();
  }
  return end;
}

std::string AddressSpace::CheckWholeMappings(uint64_t va, uint64_t end, const char* call) const {
  const uint64_t size = end - va;
  auto first = FindMapping(va), last = FindMapping(end - 1);
  std::string where;
  if (first != mappings_.end() && first->first < va) {
    where = " starts inside the mapping " + Range(first->first, first->second.range->size);
  } else if (last != mappings_.end() && last->second.range->end() > end) {
    where = " ends inside the mapping " + Range(last->first, last->second.range->size);
  } else {
    return "";
  }
  return Range(va, size) + where + "; " + call + " takes whole mappings only";
}

Status AddressSpace::Reserve(uint64_t size, uint64_t alignment, DevicePtr hint, DevicePtr* va) {
  const char* fn = "cuMemAddressReserve";
  if (std::string e = CheckGranular("size", size, true); !e.empty())
    return CudaError(fn, kInvalidValue, e);
  if ((alignment & (alignment - 1)) != 0)
    return CudaError(fn, kInvalidValue, "alignment " + Hex(alignment) + " is not a power of two");
  StatusOr<Reservation> range = CreateReservation(size, std::max(alignment, granularity_), hint);
  if (!range.ok()) return CudaError(fn, kOutOfMemory, range.status().message());
  const uint64_t base = range->get().va;
  reservations_.emplace(base, ReservationEntry{ids_->Next(), std::move(range).value()});
  *va = base;
  return Status::Ok();
}

Status AddressSpace::Free(DevicePtr va, uint64_t size) {
  const char* fn = "cuMemAddressFree";
  auto it = reservations_.find(va);
  if (it == reservations_.end()) {
    if (const ReservationEntry* inside = FindReservation(va)) {
      return CudaError(fn, kInvalidValue,
                       Hex(va) + " is inside the reservation " +
                           Range(inside->range->va, inside->range->size) + ", not at its start");
    }
    return CudaError(fn, kInvalidValue, Hex(va) + " is not the start of a reservation");
  }
  const AddressRange& range = it->second.range.get();
  if (size != range.size) {
    return CudaError(fn, kInvalidValue,
                     "size of the reservation at " + Hex(va) + ": expected " + Hex(range.size) +
                         ", got " + Hex(size));
  }
  size_t live = 0;
  std::string first;
  for (auto m = mappings_.lower_bound(range.va); m != mappings_.end() && m->first < range.end();
       ++m) {
    if (live++ == 0) first = Range(m->first, m->second.range->size);
  }
  if (live > 0) {
    return CudaError(fn, kInvalidValue,
                     "the reservation " + Range(range.va, range.size) + " still has " +
                         std::to_string(live) + (live == 1 ? " mapping " : " mappings (first ") +
                         first + (live == 1 ? "" : ")") + "; unmap first");
  }
  reservations_.erase(it);
  return Status::Ok();
}

std::string AddressSpace::CheckDevice(int device) const {
  if (device >= 0 && device < device_count_) return "";
  return "device " + std::to_string(device) + " is not one of the " +
         std::to_string(device_count_) + " emulated device" + (device_count_ == 1 ? "" : "s") +
         " (--host-devices)";
}

std::string AddressSpace::CheckProps(const AllocProps& props, bool handle_types,
                                     const char** error) const {
  *error = kInvalidValue;
  switch (props.location) {
    case MemLocation::kDevice:
      if (std::string e = CheckDevice(props.location_id < 0 ? 0 : props.location_id); !e.empty()) {
        *error = kInvalidDevice;
        return e;
      }
      break;
    case MemLocation::kHost:
      break;
    case MemLocation::kHostNuma: {
      const int node = props.location_id < 0 ? 0 : props.location_id;
      if (!NumaNodeExists(node))
        return "host NUMA node " + std::to_string(node) + " does not exist";
      break;
    }
  }
  if (!handle_types) return "";
  if ((props.handle_types & kHandleTypeFabric) != 0) {
    *error = kNotPermitted;  // as the H200 (driver 580) answers without an IMEX channel
    return "fabric handles need an IMEX channel; the host twin has none";
  }
  if ((props.handle_types & ~(kHandleTypePosixFd | kHandleTypeFabric)) != 0) {
    *error = kNotSupported;
    return "handle types " + Hex(props.handle_types) + " are not supported";
  }
  return "";
}

Status AddressSpace::Create(const AllocProps& props, AllocHandle* out) {
  const char* fn = "cuMemCreate";
  if (std::string e = CheckGranular("size", props.size, true); !e.empty())
    return CudaError(fn, kInvalidValue, e);
  const char* error = nullptr;
  if (std::string e = CheckProps(props, true, &error); !e.empty()) return CudaError(fn, error, e);
  // The H200 (driver 580) refused host memory (location HOST, not HOST_NUMA) that asks for a POSIX
  // fd handle type (CUDA_ERROR_INVALID_VALUE; tools/twin_fidelity_probe.cc, reports/h200/session9).
  if (props.location == MemLocation::kHost && (props.handle_types & kHandleTypePosixFd) != 0)
    return CudaError(fn, kInvalidValue, "host memory cannot be exported as a POSIX fd");
  const int node = props.location != MemLocation::kHostNuma ? -1
                   : props.location_id < 0                  ? 0
                                                            : props.location_id;
  // The device whose memory counts it (cuMemGetInfo): its own for device memory, else device 0's
  // (host memory counts nothing, see DeviceBytes).
  const int device =
      props.location == MemLocation::kDevice && props.location_id > 0 ? props.location_id : 0;
  // A device refuses what does not fit in its memory at once; the twin decides the same from its
  // declared total before it commits (and so never eats the machine's memory to find out).
  if (const uint64_t bytes = DeviceBytes(props, props.size);
      bytes > total_memory_ - std::min(committed_[device], total_memory_)) {
    return CudaError(fn, kOutOfMemory,
                     FormatBytes(bytes) + " requested, device " + std::to_string(device) +
                         " of the twin has " + FormatBytes(total_memory_) + " with " +
                         FormatBytes(committed_[device]) + " allocated");
  }
  const uint64_t id = ids_->Next();
  // The name says where the memory is, so that an import (in any process) reads back the
  // exporter's location as the GPU does: "-dev<N>" for device N's memory, "-numa<K>" for host
  // memory (granted as host NUMA node K, see below).
  const std::string where = props.location == MemLocation::kDevice
                                ? "-dev" + std::to_string(device)
                                : "-numa" + std::to_string(node < 0 ? 0 : node);
  StatusOr<PhysicalMemory> memory =
      CreatePhysicalMemory(props.size, kMemoryFdPrefix + Hex(id) + where, node);
  if (!memory.ok()) {
    const Code code = memory.status().code();
    return CudaError(fn,
                     code == Code::kUnavailable    ? kNotSupported
                     : code == Code::kInvalidInput ? kInvalidValue
                                                   : kOutOfMemory,
                     memory.status().message());
  }
  // What the twin grants: the location and handle types asked for (host memory either way; a memfd
  // is a POSIX fd); never compression or the RDMA flag (hints it cannot honour).
  AllocProps granted = props;
  granted.location_id = props.location == MemLocation::kDevice ? device : node;
  // The H200's driver (580) reads a HOST allocation back as HOST_NUMA node 0
  // (reports/h200/lang-merge/queries_gpu.log); the twin answers the same.
  if (props.location == MemLocation::kHost) {
    granted.location = MemLocation::kHostNuma;
    granted.location_id = 0;
  }
  granted.compression = false;
  granted.gpudirect_rdma = false;
  AllocationEntry entry{id, device, std::move(memory).value(), granted};
  entry.asked = props.location;
  allocations_.emplace(id, std::move(entry));
  committed_[device] += DeviceBytes(granted, props.size);
  out->value = id;
  return Status::Ok();
}

uint64_t AddressSpace::CountedBytes(const AllocationEntry& a) {
  return a.imported ? 0 : DeviceBytes(a.granted, a.memory->size);
}

const AddressSpace::AllocationEntry* AddressSpace::FindHandle(AllocHandle handle) const {
  auto it = allocations_.find(handle.value);
  return it == allocations_.end() || it->second.handles <= 0 ? nullptr : &it->second;
}

void AddressSpace::DropMapping(uint64_t id) {
  auto it = allocations_.find(id);
  if (it == allocations_.end()) return;
  if (--it->second.mappings > 0 || it->second.handles > 0) return;
  committed_[it->second.device] -= CountedBytes(it->second);
  allocations_.erase(it);  // closes the fd: the last reference is gone
}

Status AddressSpace::Release(AllocHandle handle) {
  auto it = allocations_.find(handle.value);
  if (it == allocations_.end() || it->second.handles <= 0) {
    return CudaError("cuMemRelease", kInvalidValue,
                     "unknown or released handle " + Hex(handle.value));
  }
  if (--it->second.handles > 0 || it->second.mappings > 0) return Status::Ok();
  // Not mapped and no handle left: the memory goes now. While mapped it stays (as in CUDA).
  committed_[it->second.device] -= CountedBytes(it->second);
  allocations_.erase(it);
  return Status::Ok();
}

Status AddressSpace::Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle) {
  const char* fn = "cuMemMap";
  if (std::string e = CheckGranular("address", va, false); !e.empty())
    return CudaError(fn, kInvalidValue, e);
  if (size == 0) return CudaError(fn, kInvalidValue, "size is 0");
  for (std::string e :
       {CheckGranular("size", size, true), CheckGranular("offset", offset, false)}) {
    if (!e.empty()) return CudaError(fn, kNotSupported, e);
  }
  auto alloc = allocations_.find(handle.value);
  if (alloc == allocations_.end() || alloc->second.handles <= 0)
    return CudaError(fn, kInvalidValue, "unknown or released handle " + Hex(handle.value));
  const uint64_t alloc_size = alloc->second.memory->size;
  if (offset > alloc_size || size > alloc_size - offset) {
    return CudaError(fn, kNotSupported,
                     "offset " + Hex(offset) + " + size " + Hex(size) + " exceeds the size " +
                         Hex(alloc_size) + " of handle " + Hex(handle.value));
  }
  if (offset != 0 || size != alloc_size) {
    return CudaError(fn, kNotSupported,
                     "offset " + Hex(offset) + ", size " + Hex(size) + " is only part of handle " +
                         Hex(handle.value) + " (" + Hex(alloc_size) +
                         " bytes); the driver maps whole handles only");
  }
  const ReservationEntry* reservation = FindReservation(va);
  if (reservation == nullptr)
    return CudaError(fn, kInvalidValue, Range(va, size) + " is not inside a reservation");
  const AddressRange& r = reservation->range.get();
  if (size > r.end() - va) {
    return CudaError(
        fn, kInvalidValue,
        Range(va, size) + " extends past the end of the reservation " + Range(r.va, r.size));
  }
  // The first mapping that ends after va: it overlaps when it starts before va + size.
  auto m = FindMapping(va);
  if (m == mappings_.end()) m = mappings_.lower_bound(va);
  if (m != mappings_.end() && m->first < va + size) {
    return CudaError(fn, kInvalidValue,
                     Range(va, size) + " overlaps the mapping " +
                         Range(m->first, m->second.range->size) + " of handle " +
                         Hex(m->second.handle));
  }
  StatusOr<Mapping> mapping = CreateMapping(va, size, alloc->second.memory, offset);
  if (!mapping.ok()) return CudaError(fn, kOutOfMemory, mapping.status().message());
  // A new mapping has no access until cuMemSetAccess.
  mappings_.emplace(va, MappingEntry{ids_->Next(), handle.value, DeviceAccessArray{},
                                     std::move(mapping).value()});
  ++alloc->second.mappings;
  return Status::Ok();
}

Status AddressSpace::SetAccess(DevicePtr va, uint64_t size, std::span<const DeviceAccess> access) {
  const char* fn = "cuMemSetAccess";
  if (access.empty()) return CudaError(fn, kInvalidValue, "no access descriptor (count 0)");
  for (const DeviceAccess& d : access) {
    if (std::string e = CheckDevice(d.device); !e.empty()) return CudaError(fn, kInvalidDevice, e);
  }
  for (std::string e : {CheckGranular("size", size, true), CheckGranular("address", va, false)}) {
    if (!e.empty()) return CudaError(fn, kInvalidValue, e);
  }
  if (va + size < va) return CudaError(fn, kInvalidValue, Range(va, size) + " wraps around");
  const uint64_t end = va + size;
  if (uint64_t hole = FirstUnmapped(va, end); hole != end) {
    return CudaError(fn, kInvalidValue,
                     Range(va, size) + " includes the unmapped address " + Hex(hole));
  }
  if (std::string e = CheckWholeMappings(va, end, fn); !e.empty())
    return CudaError(fn, kInvalidValue, e);
  // The range is a run of whole mappings; give each its devices' access and protect it for the
  // widest of them.
  for (auto m = mappings_.find(va); m != mappings_.end() && m->first < end; ++m) {
    MappingEntry& entry = m->second;
    DeviceAccessArray next = entry.access;
    for (const DeviceAccess& d : access) next[d.device] = d.access;
    if (Status s = Protect(entry.range->va, entry.range->size, Prot(Widest(next))); !s.ok())
      return CudaError(fn, kOutOfMemory, s.message());
    entry.access = next;
  }
  return Status::Ok();
}

Status AddressSpace::GetAccess(DevicePtr va, int device, Access* out) const {
  const char* fn = "cuMemGetAccess";
  if (std::string e = CheckDevice(device); !e.empty()) return CudaError(fn, kInvalidDevice, e);
  auto m = FindMapping(va);
  if (m == mappings_.end()) return CudaError(fn, kInvalidValue, Hex(va) + " is not mapped");
  *out = m->second.access[device];
  return Status::Ok();
}

Status AddressSpace::Unmap(DevicePtr va, uint64_t size) {
  const char* fn = "cuMemUnmap";
  for (std::string e : {CheckGranular("size", size, true), CheckGranular("address", va, false)}) {
    if (!e.empty()) return CudaError(fn, kInvalidValue, e);
  }
  if (va + size < va) return CudaError(fn, kInvalidValue, Range(va, size) + " wraps around");
  const uint64_t end = va + size;
  // CUDA cannot unmap part of a mapping; unmapped space in the range is skipped (as the driver
  // does), so only whole mappings are ever re-reserved.
  if (std::string e = CheckWholeMappings(va, end, fn); !e.empty())
    return CudaError(fn, kInvalidValue, e);
  // Nothing runs asynchronously on the host, so there is no in-flight work to wait for.
  for (auto m = mappings_.lower_bound(va); m != mappings_.end() && m->first < end;) {
    if (Status s = UnmapMapping(&m->second.range); !s.ok())
      return CudaError(fn, kOutOfMemory, s.message());
    const uint64_t id = m->second.handle;
    m = mappings_.erase(m);
    DropMapping(id);
  }
  return Status::Ok();
}

Status AddressSpace::CheckAccess(const std::string& function, const char* error,
                                 const char* operand, DevicePtr va, uint64_t bytes, Access need,
                                 int device) const {
  if (bytes == 0) return Status::Ok();
  if (std::string e = CheckDevice(device); !e.empty())
    return CudaError(function, kInvalidDevice, e);
  // Device 0's messages read as they did before the twin had devices.
  const std::string on = device != 0 ? " for device " + std::to_string(device) : "";
  const std::string what = std::string(need == Access::kReadWrite ? "write" : "read") + " of '" +
                           operand + "' " + Range(va, bytes) + " touches ";
  if (va + bytes < va) return CudaError(function, error, what + "the end of the address space");
  const uint64_t end = va + bytes;
  for (uint64_t cursor = va; cursor < end;) {
    auto m = FindMapping(cursor);
    if (m == mappings_.end())
      return CudaError(function, error, what + "the unmapped address " + Hex(cursor));
    const Access have = m->second.access[device];
    if (!Sufficient(have, need)) {
      return CudaError(function, error,
                       what + Hex(cursor) + " with access '" + AccessName(have) + "'" + on +
                           " (needs '" + AccessName(need) + "')");
    }
    cursor = m->second.range->end();
  }
  return Status::Ok();
}

}  // namespace vmm::host
