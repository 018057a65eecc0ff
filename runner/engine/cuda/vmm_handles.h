// Owners of the driver's VMM objects: UniqueHandle (runner/base/unique_handle.h) over a value that
// carries the DriverApi table it was made with (the table must outlive the handle), the object and
// its size. Each is made by a factory that returns StatusOr; moves leave the source empty; the
// noexcept destructor undoes the driver call and logs a failure (CU_CALL_NOTHROW) instead of
// throwing. The values are plain data, so a handle costs nothing over the raw driver call.
//
// VMM rules the owners of these objects must respect (the driver does not order them for you):
//   - A Mapping needs its Reservation alive: unmap before freeing the address range
//     (cuMemAddressFree fails while anything in the range is mapped).
//   - A PhysicalAlloc may be released while mapped; its memory then lives until the last mapping
//     goes away (the handle is dead at once, the memory is not).
//   - cuMemUnmap does not wait for kernels that still use the range: the caller must synchronize
//     first, or the running kernel faults with an illegal address.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "runner/base/status.h"
#include "runner/base/unique_handle.h"
#include "runner/engine/cuda/driver_api.h"
#include "runner/engine/engine.h"

namespace vmm::cuda {

// Properties of pinned device memory on `ordinal`, as cuMemCreate and
// cuMemGetAllocationGranularity take them (no shareable handle type, no compression).
CUmemAllocationProp DeviceAllocationProp(int ordinal);
// The driver's property struct for what a scenario's create asks for (engine.h AllocProps);
// `engine_ordinal` is the device used when the props name none.
CUmemAllocationProp AllocationProp(const AllocProps& props, int engine_ordinal);

// What a property struct read back with cuMemGetAllocationPropertiesFromHandle says, in the
// engine's words (size left 0: the caller knows it).
AllocProps GrantedProps(const CUmemAllocationProp& prop);

// --- Reservation: a virtual address range from cuMemAddressReserve, freed with cuMemAddressFree.

struct ReservedRange {
  const DriverApi* api = nullptr;
  CUdeviceptr va = 0;  // 0: empty
  uint64_t size = 0;
};
struct ReservationTraits {
  using Value = ReservedRange;
  static constexpr Value kNull{};
  static bool IsNull(const Value& v) noexcept { return v.va == 0; }
  static void Release(const Value& v) noexcept;  // cuMemAddressFree
};
using Reservation = UniqueHandle<ReservationTraits>;

// `alignment` is passed to the driver as is (0 = the driver's default); so is `hint`, the
// address the range should start at if it is free there (0: none; the driver may ignore it).
StatusOr<Reservation> CreateReservation(const DriverApi& api, uint64_t size, uint64_t alignment,
                                        CUdeviceptr hint = 0);
// Frees the range now. On success the handle is empty; on failure it still owns the range.
Status FreeReservation(Reservation* reservation);

// --- PhysicalAlloc: physical memory from cuMemCreate, released with cuMemRelease.

struct PhysicalMemory {
  const DriverApi* api = nullptr;  // nullptr: empty (the handle value 0 may be a valid handle)
  CUmemGenericAllocationHandle handle = 0;
  uint64_t size = 0;
};
struct PhysicalAllocTraits {
  using Value = PhysicalMemory;
  static constexpr Value kNull{};
  static bool IsNull(const Value& v) noexcept { return v.api == nullptr; }
  static void Release(const Value& v) noexcept;  // cuMemRelease
};
using PhysicalAlloc = UniqueHandle<PhysicalAllocTraits>;

StatusOr<PhysicalAlloc> CreatePhysicalAlloc(const DriverApi& api, const CUmemAllocationProp& prop,
                                            uint64_t size);
// One more handle to the allocation mapped at `va` (cuMemRetainAllocationHandle), owned like one
// from cuMemCreate; `size` is the allocation's size as the caller knows it (the driver's
// cuMemGetAddressRange cannot be trusted to say it for VMM memory).
StatusOr<PhysicalAlloc> RetainPhysicalAlloc(const DriverApi& api, CUdeviceptr va, uint64_t size);

// --- Mapping: [va, va+size) mapped to [handle+offset, +size) by cuMemMap, unmapped with
// cuMemUnmap. A new mapping has no access until cuMemSetAccess is called on it. Destroying a
// Mapping unmaps it: the caller must have synchronized (see above).

struct MappedRange {
  const DriverApi* api = nullptr;
  CUdeviceptr va = 0;
  uint64_t size = 0;   // 0: empty
  uint64_t owner = 0;  // the engine's AllocHandle value of the mapped allocation (for Inventory)
  // True when [va, va+size) and this mapping share at least one byte.
  bool Overlaps(CUdeviceptr other_va, uint64_t other_size) const {
    return size != 0 && other_va < va + size && va < other_va + other_size;
  }
};
struct MappingTraits {
  using Value = MappedRange;
  static constexpr Value kNull{};
  static bool IsNull(const Value& v) noexcept { return v.size == 0; }
  static void Release(const Value& v) noexcept;  // cuMemUnmap
};
using Mapping = UniqueHandle<MappingTraits>;

// `owner` is recorded in the MappedRange (the engine's id of the allocation).
StatusOr<Mapping> CreateMapping(const DriverApi& api, CUdeviceptr va, uint64_t size,
                                uint64_t offset, CUmemGenericAllocationHandle handle,
                                uint64_t owner = 0);

}  // namespace vmm::cuda
