#include "runner/engine/host/address_space.h"

#include <sys/mman.h>

#include <algorithm>
#include <vector>

#include "runner/base/format.h"

namespace vmm::host {
namespace {

constexpr const char* kInvalidValue = "CUDA_ERROR_INVALID_VALUE";
constexpr const char* kNotSupported = "CUDA_ERROR_NOT_SUPPORTED";
constexpr const char* kOutOfMemory = "CUDA_ERROR_OUT_OF_MEMORY";

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

Status AddressSpace::Reserve(uint64_t size, uint64_t alignment, DevicePtr* va) {
  const char* fn = "cuMemAddressReserve";
  if (std::string e = CheckGranular("size", size, true); !e.empty())
    return CudaError(fn, kInvalidValue, e);
  if ((alignment & (alignment - 1)) != 0)
    return CudaError(fn, kInvalidValue, "alignment " + Hex(alignment) + " is not a power of two");
  StatusOr<Reservation> range = CreateReservation(size, std::max(alignment, granularity_));
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

Status AddressSpace::Create(uint64_t size, uint32_t handle_types, AllocHandle* out) {
  const char* fn = "cuMemCreate";
  if (std::string e = CheckGranular("size", size, true); !e.empty())
    return CudaError(fn, kInvalidValue, e);
  // A device refuses what does not fit in its memory at once; the twin decides the same from its
  // declared total before it commits (and so never eats the machine's memory to find out).
  if (total_memory_ != 0 && size > total_memory_ - std::min(allocated_, total_memory_)) {
    return CudaError(fn, kOutOfMemory,
                     FormatBytes(size) + " requested, the twin's device memory is " +
                         FormatBytes(total_memory_) + " with " + FormatBytes(allocated_) +
                         " allocated");
  }
  const uint64_t id = ids_->Next();
  StatusOr<PhysicalMemory> memory = CreatePhysicalMemory(size, kMemoryFdPrefix + Hex(id));
  if (!memory.ok()) return CudaError(fn, kOutOfMemory, memory.status().message());
  allocations_.emplace(id, AllocationEntry{id, std::move(memory).value(), handle_types, false});
  allocated_ += size;
  out->value = id;
  return Status::Ok();
}

Status AddressSpace::Release(AllocHandle handle) {
  auto it = allocations_.find(handle.value);
  if (it == allocations_.end()) {
    return CudaError("cuMemRelease", kInvalidValue,
                     "unknown or released handle " + Hex(handle.value));
  }
  if (!it->second.imported) allocated_ -= it->second.memory->size;
  allocations_.erase(it);  // closes the fd; mappings of it keep the memory (as in CUDA)
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
  if (alloc == allocations_.end())
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
  mappings_.emplace(
      va, MappingEntry{ids_->Next(), handle.value, Access::kNone, std::move(mapping).value()});
  return Status::Ok();
}

Status AddressSpace::SetAccess(DevicePtr va, uint64_t size, Access access) {
  const char* fn = "cuMemSetAccess";
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
  // The range is a run of whole mappings; protect each one.
  for (auto m = mappings_.find(va); m != mappings_.end() && m->first < end; ++m) {
    MappingEntry& entry = m->second;
    if (Status s = Protect(entry.range->va, entry.range->size, Prot(access)); !s.ok()) {
      return CudaError(fn, kOutOfMemory, s.message());
    }
    entry.access = access;
  }
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
    m = mappings_.erase(m);
  }
  return Status::Ok();
}

Status AddressSpace::Export(AllocHandle handle, int* fd) {
  const char* fn = "cuMemExportToShareableHandle";
  auto it = allocations_.find(handle.value);
  if (it == allocations_.end())
    return CudaError(fn, kInvalidValue, "unknown or released handle " + Hex(handle.value));
  if ((it->second.handle_types & kHandleTypePosixFd) == 0) {
    return CudaError(fn, kInvalidValue,
                     "handle " + Hex(handle.value) +
                         " was created without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR");
  }
  StatusOr<int> copy = DuplicateFd(it->second.memory->fd);
  if (!copy.ok()) return CudaError(fn, kOutOfMemory, copy.status().message());
  *fd = *copy;
  return Status::Ok();
}

Status AddressSpace::Import(int fd, AllocHandle* out) {
  const char* fn = "cuMemImportFromShareableHandle";
  StatusOr<PhysicalMemory> memory = OpenSharedMemory(fd);
  if (!memory.ok()) return CudaError(fn, kInvalidValue, memory.status().message());
  const std::string what = "the size of fd " + std::to_string(fd);
  if (std::string e = CheckGranular(what.c_str(), memory->get().size, true); !e.empty())
    return CudaError(fn, kInvalidValue, e);
  const uint64_t id = ids_->Next();
  allocations_.emplace(id, AllocationEntry{id, std::move(memory).value(), 0, true});
  out->value = id;
  return Status::Ok();
}

void AddressSpace::Inventory(EngineInventory* out) const {
  *out = EngineInventory{};
  for (const auto& [va, r] : reservations_) out->reservations.push_back({va, r.range->size});
  for (const auto& [id, a] : allocations_) out->allocations.push_back({id, a.memory->size});
  for (const auto& [va, m] : mappings_)
    out->mappings.push_back({va, m.range->size, m.handle, m.access});
}

Status AddressSpace::CheckAccess(const std::string& function, const char* error,
                                 const char* operand, DevicePtr va, uint64_t bytes,
                                 Access need) const {
  if (bytes == 0) return Status::Ok();
  const std::string what = std::string(need == Access::kReadWrite ? "write" : "read") + " of '" +
                           operand + "' " + Range(va, bytes) + " touches ";
  if (va + bytes < va) return CudaError(function, error, what + "the end of the address space");
  const uint64_t end = va + bytes;
  for (uint64_t cursor = va; cursor < end;) {
    auto m = FindMapping(cursor);
    if (m == mappings_.end())
      return CudaError(function, error, what + "the unmapped address " + Hex(cursor));
    if (!Sufficient(m->second.access, need)) {
      return CudaError(function, error,
                       what + Hex(cursor) + " with access '" + AccessName(m->second.access) +
                           "' (needs '" + AccessName(need) + "')");
    }
    cursor = m->second.range->end();
  }
  return Status::Ok();
}

}  // namespace vmm::host
