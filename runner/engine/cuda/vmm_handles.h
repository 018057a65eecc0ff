// Move-only owners of the driver's VMM objects. Each is made by a factory that returns StatusOr,
// is moved with std::exchange (a moved-from object owns nothing), and undoes its driver call in a
// noexcept destructor that logs a failure instead of throwing. Each keeps a pointer to the
// DriverApi table it was made with: the table must outlive the object.
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
#include "runner/engine/cuda/driver_api.h"

namespace vmm::cuda {

// Properties of pinned device memory on `ordinal`, as cuMemCreate and
// cuMemGetAllocationGranularity take them (no shareable handle type, no compression).
CUmemAllocationProp DeviceAllocationProp(int ordinal);

// A virtual address range from cuMemAddressReserve; freed with cuMemAddressFree.
class Reservation {
 public:
  // `alignment` is passed to the driver as is (0 = the driver's default).
  static StatusOr<Reservation> Create(const DriverApi& api, uint64_t size, uint64_t alignment);

  Reservation() = default;
  Reservation(Reservation&& other) noexcept;
  Reservation& operator=(Reservation&& other) noexcept;
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  ~Reservation();

  CUdeviceptr va() const { return va_; }
  uint64_t size() const { return size_; }

  // Frees the range now. On success the object is empty; on failure it still owns the range.
  Status Free();
  // Forgets the range without a driver call (it was freed by other means).
  void Disown() noexcept;

 private:
  const DriverApi* api_ = nullptr;
  CUdeviceptr va_ = 0;
  uint64_t size_ = 0;
};

// Physical memory from cuMemCreate; released with cuMemRelease.
class PhysicalAlloc {
 public:
  static StatusOr<PhysicalAlloc> Create(const DriverApi& api, const CUmemAllocationProp& prop,
                                        uint64_t size);

  PhysicalAlloc() = default;
  PhysicalAlloc(PhysicalAlloc&& other) noexcept;
  PhysicalAlloc& operator=(PhysicalAlloc&& other) noexcept;
  PhysicalAlloc(const PhysicalAlloc&) = delete;
  PhysicalAlloc& operator=(const PhysicalAlloc&) = delete;
  ~PhysicalAlloc();

  CUmemGenericAllocationHandle handle() const { return handle_; }
  uint64_t size() const { return size_; }

  // Releases the handle now. On success the object is empty; on failure it still owns the handle.
  Status Release();

 private:
  const DriverApi* api_ = nullptr;
  CUmemGenericAllocationHandle handle_ = 0;  // opaque: 0 may be a valid value, see live_
  uint64_t size_ = 0;
  bool live_ = false;
};

// [va, va+size) mapped to [handle+offset, +size) by cuMemMap; unmapped with cuMemUnmap. A new
// mapping has no access until cuMemSetAccess is called on it.
class Mapping {
 public:
  static StatusOr<Mapping> Create(const DriverApi& api, CUdeviceptr va, uint64_t size,
                                  uint64_t offset, CUmemGenericAllocationHandle handle);

  Mapping() = default;
  Mapping(Mapping&& other) noexcept;
  Mapping& operator=(Mapping&& other) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping();  // unmaps; the caller must have synchronized (see above)

  CUdeviceptr va() const { return va_; }
  uint64_t size() const { return size_; }
  // True when [va, va+size) and this mapping share at least one byte.
  bool Overlaps(CUdeviceptr va, uint64_t size) const {
    return size_ != 0 && va < va_ + size_ && va_ < va + size;
  }

  // Forgets the mapping without a driver call (it was unmapped by other means).
  void Disown() noexcept;

 private:
  const DriverApi* api_ = nullptr;
  CUdeviceptr va_ = 0;
  uint64_t size_ = 0;
};

}  // namespace vmm::cuda
