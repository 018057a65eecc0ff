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
//   cuMemCreate          size 0 or not a granularity multiple -> INVALID_VALUE; device memory
//   beyond
//                        what the device has left (total_memory less what its live allocations
//                        hold, see below) -> OUT_OF_MEMORY, decided before committing anything.
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
//   cuMemRetainAllocationHandle  an address no mapping covers -> INVALID_VALUE; otherwise one
//                        more handle to the mapped allocation (the same value: a handle names
//                        the allocation), released like any other.
//   cuMemCreate props    host and host_numa memory are host memory here (host_numa bound to
//                        the node, which must exist: INVALID_VALUE); a device other than 0 ->
//                        INVALID_DEVICE; fabric handles -> NOT_PERMITTED (the H200 without an IMEX
//                        channel); POSIX fd handles are granted (the memory is a memfd);
//                        compression and the RDMA flag are hints the twin never grants (read back
//                        false), as a device without them does.
//   cuMemExportToShareableHandle  (POSIX fd) unknown handle, or one created without the POSIX fd
//                        handle type -> INVALID_VALUE (the driver's code for the latter was not
//                        measured; the validator never sends it). The fd is a dup of the memfd.
//   cuMemImportFromShareableHandle  (POSIX fd) an fd that is not open, or not a memfd this twin
//                        made (in any process), or whose size is not a granularity multiple ->
//                        INVALID_VALUE. The new handle holds its own dup of the fd (the caller's
//                        stays the caller's); it does not count against the device memory again.
//   cuMemAddressReserve  a hint is used when the range is free there, else ignored.
// Memory accounting (cuMemGetInfo): a device allocation's bytes count as used from Create until its
// last handle is released AND its last mapping unmapped (release while mapped frees nothing);
// host and host-NUMA allocations do not count (they are not device memory), nor does an imported
// handle (its memory is the exporter's).
// Where the driver is more lenient than its documentation, the host keeps the documented rule:
// the driver accepts a map past the end of a reservation or refuses it depending on the addresses
// after it (docs/backends.md; refused over a live mapping and in a fresh context); this class
// refuses it with INVALID_VALUE, and a map of a released handle too. A map of a released handle
// segfaulted driver 580 (2026-12-02); the plan sends one only from an isolate block's child, where
// HostEngine raises SIGSEGV before this class sees the call (engine_calls.def,
// AllowReleasedHandle).
//
// Devices: the twin emulates `device_count` devices (ordinals 0 ..). Physical memory is tagged with
// the device it "lives on" (all of it is host memory, so every device can reach every other's:
// peer access always works). Access is kept per device and per mapping; the OS protection of a
// mapping is the widest access any device has, and CheckAccess judges one device's access, so a
// kernel "on device 1" is refused where device 1 has no access although the CPU could touch it.
// An ordinal >= device_count is CUDA_ERROR_INVALID_DEVICE.
//
// Ownership: handles and addresses are plain values; unknown or stale ones are reported, never
// dereferenced. Destruction releases mappings, then handles, then reservations, each in reverse
// order of creation. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
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
// The CUDA error names the twin returns (CudaError's `error`), defined once for the backend.
inline constexpr const char* kInvalidValue = "CUDA_ERROR_INVALID_VALUE";
inline constexpr const char* kNotSupported = "CUDA_ERROR_NOT_SUPPORTED";
inline constexpr const char* kOutOfMemory = "CUDA_ERROR_OUT_OF_MEMORY";
inline constexpr const char* kInvalidDevice = "CUDA_ERROR_INVALID_DEVICE";
inline constexpr const char* kNotPermitted = "CUDA_ERROR_NOT_PERMITTED";
// A kernel or check touching memory it may not (a device fault on the GPU).
inline constexpr const char* kIllegalAddress = "CUDA_ERROR_ILLEGAL_ADDRESS";

class AddressSpace {
 public:
  // `granularity` is a power-of-two multiple of the page size; `ids` must outlive this object;
  // 1 <= device_count <= kMaxScenarioDevices. `total_memory` is each emulated device's memory for
  // MemoryInfo (bytes).
  AddressSpace(uint64_t granularity, uint64_t total_memory, IdSource* ids, int device_count = 1)
      : granularity_(granularity),
        total_memory_(total_memory),
        ids_(ids),
        device_count_(device_count) {}
  AddressSpace(const AddressSpace&) = delete;
  AddressSpace& operator=(const AddressSpace&) = delete;
  ~AddressSpace();

  uint64_t granularity() const { return granularity_; }

  // The Engine's VMM calls (see engine.h), with the same contracts.
  Status Reserve(uint64_t size, uint64_t alignment, DevicePtr hint, DevicePtr* va);
  Status Free(DevicePtr va, uint64_t size);
  // Physical memory where `props` says; a device location's location_id is an ordinal of this
  // twin (-1: device 0).
  Status Create(const AllocProps& props, AllocHandle* out);
  Status Release(AllocHandle handle);
  // cuMemExportToShareableHandle (POSIX fd): a new fd the caller owns.
  Status Export(AllocHandle handle, int* fd);
  // cuMemImportFromShareableHandle (POSIX fd): a new handle; the caller keeps `fd`.
  Status Import(int fd, AllocHandle* out);
  Status Retain(DevicePtr va, AllocHandle* out);
  Status AllocProperties(AllocHandle handle, AllocProps* granted) const;
  Status SameAllocation(AllocHandle a, AllocHandle b, bool* same) const;
  Status RangeOf(DevicePtr va, int device, DevicePtr* base,
                 uint64_t* size) const;  // cuMemGetAddressRange
  Status Granularity(const AllocProps& props, GranularityKind kind, uint64_t* bytes) const;
  // free = total_memory - bytes of device `device`'s allocations still alive (by a handle or a
  // mapping).
  void MemoryInfo(int device, uint64_t* free_bytes, uint64_t* total_bytes) const;
  // hold_memory / return_memory on device `device`: counts as used whatever leaves `leave_free`
  // bytes free, in whole granules (no memory is touched); one hold per device at a time.
  Status HoldMemory(int device, uint64_t leave_free, uint64_t* held);
  void ReturnMemory(int device, uint64_t* returned);
  // Checkpoint and restore (HostEngine::CheckpointProcess / RestoreProcess). Park moves the bytes
  // of every device allocation into a host image (a memfd of its own) and gives its memory back to
  // the OS (the hole punched), so the devices count it, and the process's own hold, no more
  // (*freed: those bytes; a hold made while parked is the helper's and stays). Unpark brings them
  // back at the same handles and addresses, unless a device lacks the room for what it parked
  // (OUT_OF_MEMORY; nothing changes). A failure of the host itself part way through (committing
  // or copying an image back) leaves some allocations refilled; the engine then counts the
  // process as failed, as the driver does. While parked no other call may read or write the
  // memory: the engine makes none.
  Status Park(uint64_t* freed);
  Status Unpark(uint64_t* restored);
  bool parked() const { return parked_any_; }
  // Whether an allocation created on a host NUMA node is alive (driver 580 restores none; one
  // created in host memory without a node it restores).
  bool HoldsHostNuma() const;
  Status Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle);
  // Every entry's device is an ordinal (the engine resolved -1).
  Status SetAccess(DevicePtr va, uint64_t size, std::span<const DeviceAccess> access);
  // cuMemGetAccess: the access of `device` at `va` (which must be mapped).
  Status GetAccess(DevicePtr va, int device, Access* out) const;
  Status Unmap(DevicePtr va, uint64_t size);

  // Ok when every byte of [va, va+bytes) is mapped with at least `need` for device `device`
  // (kRead: read or read_write; kReadWrite: read_write). Otherwise
  //   "<function>: <error>: <read|write> of '<operand>' [va, +bytes) touches ..."
  // naming the first offending address (and the device, when there are several). An empty range
  // is always ok.
  Status CheckAccess(const std::string& function, const char* error, const char* operand,
                     DevicePtr va, uint64_t bytes, Access need, int device) const;

  int device_count() const { return device_count_; }
  // "" when `device` is an ordinal of this twin, else why not.
  std::string CheckDevice(int device) const;

  // Every live object (engine.h EngineInventory): allocations with a handle left, mappings without
  // their access (the engine reads it back through GetAccess).
  void Inventory(EngineInventory* out) const;

  // Live object counts (for tests and diagnostics).
  size_t reservation_count() const { return reservations_.size(); }
  size_t allocation_count() const { return allocations_.size(); }  // alive, released or not
  size_t mapping_count() const { return mappings_.size(); }

 private:
  struct ReservationEntry {
    uint64_t id;
    Reservation range;
  };
  // An allocation lives while it has a handle or a mapping; its handle value is its id.
  struct AllocationEntry {
    uint64_t id;
    int device;  // the device whose memory it counts as (0 for host locations)
    PhysicalMemory memory;
    AllocProps granted;
    int handles = 1;        // Create and each Retain add one, Release takes one
    int mappings = 0;       // live mappings of it
    bool imported = false;  // the memory of another allocation: counted there, not here
    // The location Create was asked for (a host one reads back as host_numa: `granted`).
    MemLocation asked = MemLocation::kDevice;
  };
  using DeviceAccessArray = std::array<Access, kMaxScenarioDevices>;
  struct MappingEntry {
    uint64_t id;
    uint64_t handle;           // the allocation's id (its handle may be released while mapped)
    DeviceAccessArray access;  // by device ordinal; all kNone until SetAccess
    Mapping range;
  };

  // "" when `value` is a non-zero (for sizes) multiple of the granularity, else the reason.
  std::string CheckGranular(const char* what, uint64_t value, bool nonzero) const;
  // The allocation of a live handle (one not released as often as it was made), or nullptr.
  const AllocationEntry* FindHandle(AllocHandle handle) const;
  // The bytes `a` counts against its device's memory (0 for host memory and imported handles).
  static uint64_t CountedBytes(const AllocationEntry& a);
  // Drops one mapping of allocation `id`; the allocation goes when nothing refers to it any more.
  void DropMapping(uint64_t id);
  // Checks that the twin can provide the location (and, with `handle_types`, the handle types) of
  // `props`: "" when it can, else why, with the CUDA error name in *error.
  std::string CheckProps(const AllocProps& props, bool handle_types, const char** error) const;
  // The reservation containing `va`, or nullptr.
  const ReservationEntry* FindReservation(uint64_t va) const;
  // The mapping containing `va`, or end().
  std::map<uint64_t, MappingEntry>::const_iterator FindMapping(uint64_t va) const;
  // The first address of [va, end) that no mapping covers, or `end` when all of it is mapped.
  uint64_t FirstUnmapped(uint64_t va, uint64_t end) const;
  // "" when no mapping straddles `va` or `end`, else why (`call` names what needs whole mappings).
  std::string CheckWholeMappings(uint64_t va, uint64_t end, const char* call) const;

  uint64_t granularity_;
  uint64_t total_memory_;
  // By device ordinal: bytes of that device's allocations in allocations_.
  std::array<uint64_t, kMaxScenarioDevices> committed_{};
  std::array<uint64_t, kMaxScenarioDevices> held_{};  // by HoldMemory, counted in committed_
  // By HoldMemory while parked: the checkpoint helper's hold (counted in committed_, never parked).
  std::array<uint64_t, kMaxScenarioDevices> helper_held_{};
  // Park's images by allocation id, and by device the bytes it took out of committed_ (the hold's
  // among them, parked_held_).
  std::map<uint64_t, PhysicalMemory> images_;
  std::array<uint64_t, kMaxScenarioDevices> parked_{}, parked_held_{};
  bool parked_any_ = false;
  IdSource* ids_;
  int device_count_;
  std::map<uint64_t, ReservationEntry> reservations_;  // by base address
  std::map<uint64_t, AllocationEntry> allocations_;    // by id (== handle value), while alive
  std::map<uint64_t, MappingEntry> mappings_;          // by start address
};

}  // namespace vmm::host
