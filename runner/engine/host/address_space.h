// AddressSpace: the VMM half of the host backend. It owns every reservation, physical allocation
// and mapping, enforces the CUDA driver's rules before touching the OS, and tracks the access of
// every mapped byte so kernels can be checked instead of faulting.
//
// Every failure is a Code::kRuntime Status whose message reads like the CUDA backend's:
//   "<driver function>: <CUDA error name>: <plain reason>"
// e.g. "cuMemMap: CUDA_ERROR_INVALID_VALUE: offset 0x0 + size 0x400000 exceeds the size 0x200000
// of handle 0x4". A failed call changes nothing, except Unmap, which stops at the first mapping the
// OS refuses to re-reserve (only possible when the process runs out of memory mappings).
//
// Ownership: handles and addresses are plain values; unknown or stale ones are reported, never
// dereferenced. Destruction releases mappings, then handles, then reservations, each in reverse
// order of creation. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "runner/base/status.h"
#include "runner/engine/engine.h"
#include "runner/engine/host/host_vmm.h"

namespace vmm::host {

// Object ids of one engine: every handle it hands out comes from one counter, so an id names one
// object for the engine's whole life (a stale or mistyped handle is never mistaken for another).
// Ids also order objects by creation.
class IdSource {
 public:
  uint64_t Next() { return next_++; }

 private:
  uint64_t next_ = 1;
};

// "<function>: <error>: <reason>" as a Code::kRuntime Status.
Status CudaError(const std::string& function, const char* error, const std::string& reason);

// "none", "read", "read_write" (the scenario spelling).
const char* AccessName(Access access);

class AddressSpace {
 public:
  // `granularity` is a power-of-two multiple of the page size; `ids` must outlive this object.
  AddressSpace(uint64_t granularity, IdSource* ids) : granularity_(granularity), ids_(ids) {}
  AddressSpace(const AddressSpace&) = delete;
  AddressSpace& operator=(const AddressSpace&) = delete;
  ~AddressSpace();

  uint64_t granularity() const { return granularity_; }

  // The Engine's VMM calls (see engine.h), with the same contracts.
  Status Reserve(uint64_t size, uint64_t alignment, DevicePtr* va);
  Status Free(DevicePtr va, uint64_t size);
  Status Create(uint64_t size, AllocHandle* out);
  Status Release(AllocHandle handle);
  Status Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle);
  Status SetAccess(DevicePtr va, uint64_t size, Access access);
  Status Unmap(DevicePtr va, uint64_t size);

  // Ok when every byte of [va, va+bytes) is mapped with at least `need` (kRead: read or
  // read_write; kReadWrite: read_write). Otherwise
  //   "<function>: CUDA_ERROR_ILLEGAL_ADDRESS: <read|write> of '<operand>' [va, +bytes) touches
  //   ..."
  // naming the first offending address. An empty range is always ok.
  Status CheckAccess(const std::string& function, const char* operand, DevicePtr va, uint64_t bytes,
                     Access need) const;

  // Live object counts (for tests and diagnostics).
  size_t reservation_count() const { return reservations_.size(); }
  size_t allocation_count() const { return allocations_.size(); }
  size_t mapping_count() const { return mappings_.size(); }

 private:
  struct ReservationEntry {
    uint64_t id;
    Reservation range;
  };
  struct AllocationEntry {
    uint64_t id;
    PhysicalMemory memory;
  };
  struct MappingEntry {
    uint64_t id;
    uint64_t handle;  // for diagnostics only: the handle may be released while mapped
    uint64_t offset;
    Mapping range;
  };
  // A run of mapped bytes with one access; runs tile the mapped space and never cross a mapping.
  struct AccessRun {
    uint64_t end;
    Access access;
  };

  // "" when `value` is a non-zero (for sizes) multiple of the granularity, else the reason.
  std::string CheckGranular(const char* what, uint64_t value, bool nonzero) const;
  // The reservation containing `va`, or nullptr.
  const ReservationEntry* FindReservation(uint64_t va) const;
  // The mapping containing `va`, or end().
  std::map<uint64_t, MappingEntry>::const_iterator FindMapping(uint64_t va) const;
  // The first address of [va, end) that no mapping covers, or `end` when all of it is mapped.
  uint64_t FirstUnmapped(uint64_t va, uint64_t end) const;
  // Splits the access run containing `va` (if any) so that a run starts at `va`.
  void SplitRunAt(uint64_t va);

  uint64_t granularity_;
  IdSource* ids_;
  std::map<uint64_t, ReservationEntry> reservations_;  // by base address
  std::map<uint64_t, AllocationEntry> allocations_;    // by handle value (== id)
  std::map<uint64_t, MappingEntry> mappings_;          // by start address
  std::map<uint64_t, AccessRun> access_;               // by start address
};

}  // namespace vmm::host
