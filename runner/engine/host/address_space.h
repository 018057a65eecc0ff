// AddressSpace: the VMM half of the host backend. It owns every reservation, physical allocation
// and mapping, enforces the CUDA driver's rules before touching the OS, and keeps the access of
// every mapping so kernels and copies can be checked instead of faulting.
//
// Every failure is a Code::kRuntime Status whose message reads like the CUDA backend's:
//   "<driver function>: <CUDA error name>: <plain reason>"
// e.g. "cuMemMap: CUDA_ERROR_INVALID_VALUE: [0x7f0000000000, +0x200000) overlaps the mapping ...".
// A failed call changes nothing, except Unmap and SetAccess over several mappings, which stop at
// the first mapping the OS refuses to re-reserve or mprotect (only possible when the process runs
// out of memory mappings).
//
// The rules and error names are the documented ones as the driver enforces them; measured on an
// H200 with driver 580.159 (CUDA 13.0). runner/vocab/vmm_rules.h has the same rules as one table,
// which tests/vmm_rules_test.cc replays on this class through the host engine:
//   cuMemAddressReserve  size 0 or not a granularity multiple, alignment not a power of two ->
//                        INVALID_VALUE; an alignment below the granularity means the granularity.
//   cuMemCreate          size 0 or not a granularity multiple -> INVALID_VALUE; more than the
//                        twin's device memory left (its declared total_memory less the live
//                        allocations) -> OUT_OF_MEMORY, decided before any memory is committed.
//   cuMemMap             address not a granularity multiple, size 0, unknown or released handle,
//                        range not inside one reservation, range over an existing mapping ->
//                        INVALID_VALUE. The driver maps whole handles only: size or offset not a
//                        granularity multiple, offset + size beyond the handle, offset != 0 or
//                        size != the handle's size -> NOT_SUPPORTED.
//   cuMemSetAccess       the range must be fully mapped and consist of whole mappings (several are
//                        fine; half of one is INVALID_VALUE). kNone is a valid setting.
//   cuMemUnmap           must not cut a mapping (INVALID_VALUE); unmapped space inside the range is
//                        skipped, so unmapping where nothing is mapped succeeds, as on the driver.
//   cuMemAddressFree     exactly one whole reservation with no mapping left in it, else
//                        INVALID_VALUE.
//   cuMemRelease         unknown or already released handle -> INVALID_VALUE; a mapped handle
//                        may be released, its mappings keep the memory until they are unmapped.
//   cuMemExportToShareableHandle  (POSIX fd) unknown handle, or one created without the POSIX fd
//                        handle type -> INVALID_VALUE (the driver's code for the latter was not
//                        measured; the validator never sends it). The fd is a dup of the memfd.
//   cuMemImportFromShareableHandle  (POSIX fd) an fd that is not open, or not a memfd this twin
//                        made (in any process), or whose size is not a granularity multiple ->
//                        INVALID_VALUE. The new handle holds its own dup of the fd (the caller's
//                        stays the caller's); it does not count against the device memory again.
// Where the driver is more lenient than its documentation, the host keeps the documented rule (and
// the plan never issues such a call): the driver accepted a map past the end of a reservation and
// a map of a released handle that was still mapped elsewhere (a released handle that was never
// mapped crashed it, as does an unknown one); the host refuses all of these with INVALID_VALUE.
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

// "<function>: <error>: <reason>" as a Code::kRuntime Status whose cuda_error() is `error` (a
// string literal: the Status keeps the pointer).
Status CudaError(const std::string& function, const char* error, const std::string& reason);

class AddressSpace {
 public:
  // `granularity` is a power-of-two multiple of the page size; `ids` must outlive this object.
  // `total_memory` is the device memory the twin declares (DeviceInfo::total_memory; 0: no limit):
  // a Create beyond what is left of it fails with CUDA_ERROR_OUT_OF_MEMORY up front.
  AddressSpace(uint64_t granularity, IdSource* ids, uint64_t total_memory = 0)
      : granularity_(granularity), ids_(ids), total_memory_(total_memory) {}
  AddressSpace(const AddressSpace&) = delete;
  AddressSpace& operator=(const AddressSpace&) = delete;
  ~AddressSpace();

  uint64_t granularity() const { return granularity_; }

  // The Engine's VMM calls (see engine.h), with the same contracts.
  Status Reserve(uint64_t size, uint64_t alignment, DevicePtr* va);
  Status Free(DevicePtr va, uint64_t size);
  // `handle_types`: engine.h kHandleType* bits the allocation may be exported as (the caller
  // refuses what the twin cannot grant: only kHandleTypePosixFd).
  Status Create(uint64_t size, uint32_t handle_types, AllocHandle* out);
  Status Release(AllocHandle handle);
  Status Export(AllocHandle handle, int* fd);
  Status Import(int fd, AllocHandle* out);
  Status Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle);
  Status SetAccess(DevicePtr va, uint64_t size, Access access);
  Status Unmap(DevicePtr va, uint64_t size);

  // Ok when every byte of [va, va+bytes) is mapped with at least `need` (kRead: read or
  // read_write; kReadWrite: read_write). Otherwise
  //   "<function>: <error>: <read|write> of '<operand>' [va, +bytes) touches ..."
  // naming the first offending address. An empty range is always ok.
  Status CheckAccess(const std::string& function, const char* error, const char* operand,
                     DevicePtr va, uint64_t bytes, Access need) const;

  // Every live object (engine.h EngineInventory), access as this class set it with mprotect.
  void Inventory(EngineInventory* out) const;

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
    uint32_t handle_types = 0;  // kHandleType* bits
    bool imported = false;      // the memory of another allocation: not counted in allocated_
  };
  struct MappingEntry {
    uint64_t id;
    uint64_t handle;  // for diagnostics only: the handle may be released while mapped
    Access access;    // kNone until SetAccess
    Mapping range;
  };

  // "" when `value` is a non-zero (for sizes) multiple of the granularity, else the reason.
  std::string CheckGranular(const char* what, uint64_t value, bool nonzero) const;
  // The reservation containing `va`, or nullptr.
  const ReservationEntry* FindReservation(uint64_t va) const;
  // The mapping containing `va`, or end().
  std::map<uint64_t, MappingEntry>::const_iterator FindMapping(uint64_t va) const;
  // The first address of [va, end) that no mapping covers, or `end` when all of it is mapped.
  uint64_t FirstUnmapped(uint64_t va, uint64_t end) const;
  // "" when no mapping straddles `va` or `end`, else why (`call` names what needs whole mappings).
  std::string CheckWholeMappings(uint64_t va, uint64_t end, const char* call) const;

  uint64_t granularity_;
  IdSource* ids_;
  uint64_t total_memory_ = 0;
  uint64_t allocated_ = 0;                             // bytes of the live allocations
  std::map<uint64_t, ReservationEntry> reservations_;  // by base address
  std::map<uint64_t, AllocationEntry> allocations_;    // by handle value (== id)
  std::map<uint64_t, MappingEntry> mappings_;          // by start address
};

}  // namespace vmm::host
