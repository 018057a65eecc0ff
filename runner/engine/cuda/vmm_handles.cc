#include "runner/engine/cuda/vmm_handles.h"

#include <utility>

#include "runner/engine/cuda/cuda_call.h"

namespace vmm::cuda {

CUmemAllocationProp DeviceAllocationProp(int ordinal) {
  CUmemAllocationProp prop = {};  // zero: no handle types, no compression, no win32 metadata
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = ordinal;
  return prop;
}

// --- Reservation ---

StatusOr<Reservation> Reservation::Create(const DriverApi& api, uint64_t size, uint64_t alignment) {
  CUdeviceptr va = 0;
  VMM_RETURN_IF_ERROR(CU_CALL(api, cuMemAddressReserve(&va, size, alignment, 0, 0)));
  Reservation r;
  r.api_ = &api;
  r.va_ = va;
  r.size_ = size;
  return r;
}

Reservation::Reservation(Reservation&& other) noexcept
    : api_(std::exchange(other.api_, nullptr)),
      va_(std::exchange(other.va_, 0)),
      size_(std::exchange(other.size_, 0)) {}

Reservation& Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    if (va_ != 0) CU_CALL_NOTHROW(*api_, cuMemAddressFree(va_, size_));
    api_ = std::exchange(other.api_, nullptr);
    va_ = std::exchange(other.va_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Reservation::~Reservation() {
  if (va_ != 0) CU_CALL_NOTHROW(*api_, cuMemAddressFree(va_, size_));
}

Status Reservation::Free() {
  if (va_ == 0) return Status::Ok();
  VMM_RETURN_IF_ERROR(CU_CALL(*api_, cuMemAddressFree(va_, size_)));
  Disown();
  return Status::Ok();
}

void Reservation::Disown() noexcept {
  va_ = 0;
  size_ = 0;
}

// --- PhysicalAlloc ---

StatusOr<PhysicalAlloc> PhysicalAlloc::Create(const DriverApi& api, const CUmemAllocationProp& prop,
                                              uint64_t size) {
  CUmemGenericAllocationHandle handle = 0;
  VMM_RETURN_IF_ERROR(CU_CALL(api, cuMemCreate(&handle, size, &prop, 0)));
  PhysicalAlloc a;
  a.api_ = &api;
  a.handle_ = handle;
  a.size_ = size;
  a.live_ = true;
  return a;
}

PhysicalAlloc::PhysicalAlloc(PhysicalAlloc&& other) noexcept
    : api_(std::exchange(other.api_, nullptr)),
      handle_(std::exchange(other.handle_, 0)),
      size_(std::exchange(other.size_, 0)),
      live_(std::exchange(other.live_, false)) {}

PhysicalAlloc& PhysicalAlloc::operator=(PhysicalAlloc&& other) noexcept {
  if (this != &other) {
    if (live_) CU_CALL_NOTHROW(*api_, cuMemRelease(handle_));
    api_ = std::exchange(other.api_, nullptr);
    handle_ = std::exchange(other.handle_, 0);
    size_ = std::exchange(other.size_, 0);
    live_ = std::exchange(other.live_, false);
  }
  return *this;
}

PhysicalAlloc::~PhysicalAlloc() {
  if (live_) CU_CALL_NOTHROW(*api_, cuMemRelease(handle_));
}

Status PhysicalAlloc::Release() {
  if (!live_) return Status::Ok();
  VMM_RETURN_IF_ERROR(CU_CALL(*api_, cuMemRelease(handle_)));
  handle_ = 0;
  size_ = 0;
  live_ = false;
  return Status::Ok();
}

// --- Mapping ---

StatusOr<Mapping> Mapping::Create(const DriverApi& api, CUdeviceptr va, uint64_t size,
                                  uint64_t offset, CUmemGenericAllocationHandle handle) {
  VMM_RETURN_IF_ERROR(CU_CALL(api, cuMemMap(va, size, offset, handle, 0)));
  Mapping m;
  m.api_ = &api;
  m.va_ = va;
  m.size_ = size;
  return m;
}

Mapping::Mapping(Mapping&& other) noexcept
    : api_(std::exchange(other.api_, nullptr)),
      va_(std::exchange(other.va_, 0)),
      size_(std::exchange(other.size_, 0)) {}

Mapping& Mapping::operator=(Mapping&& other) noexcept {
  if (this != &other) {
    if (size_ != 0) CU_CALL_NOTHROW(*api_, cuMemUnmap(va_, size_));
    api_ = std::exchange(other.api_, nullptr);
    va_ = std::exchange(other.va_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Mapping::~Mapping() {
  if (size_ != 0) CU_CALL_NOTHROW(*api_, cuMemUnmap(va_, size_));
}

void Mapping::Disown() noexcept {
  va_ = 0;
  size_ = 0;
}

}  // namespace vmm::cuda
