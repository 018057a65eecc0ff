#include "runner/engine/cuda/vmm_handles.h"

#include "runner/base/hot_path.h"
#include "runner/engine/cuda/cuda_call.h"

namespace vmm::cuda {

VMM_HOT CUmemAllocationProp DeviceAllocationProp(int ordinal) {
  CUmemAllocationProp prop = {};  // zero: no handle types, no compression, no win32 metadata
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = ordinal;
  return prop;
}

VMM_HOT CUmemAllocationProp AllocationProp(const AllocProps& props, int engine_ordinal) {
  CUmemAllocationProp prop = DeviceAllocationProp(engine_ordinal);
  switch (props.location) {
    case MemLocation::kDevice:
      prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      prop.location.id = props.location_id < 0 ? engine_ordinal : props.location_id;
      break;
    case MemLocation::kHost:
      prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
      prop.location.id = 0;  // ignored by the driver for HOST
      break;
    case MemLocation::kHostNuma:
      prop.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
      prop.location.id = props.location_id < 0 ? 0 : props.location_id;
      break;
  }
  prop.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(props.handle_types);
  if (props.compression) prop.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
  prop.allocFlags.gpuDirectRDMACapable = props.gpudirect_rdma ? 1 : 0;
  return prop;
}

AllocProps GrantedProps(const CUmemAllocationProp& prop) {
  AllocProps granted;
  switch (prop.location.type) {
    case CU_MEM_LOCATION_TYPE_HOST:
      granted.location = MemLocation::kHost;
      granted.location_id = -1;
      break;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
      granted.location = MemLocation::kHostNuma;
      granted.location_id = prop.location.id;
      break;
    default:
      granted.location = MemLocation::kDevice;
      granted.location_id = prop.location.id;
      break;
  }
  granted.handle_types = static_cast<uint32_t>(prop.requestedHandleTypes);
  granted.compression = prop.allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC;
  granted.gpudirect_rdma = prop.allocFlags.gpuDirectRDMACapable != 0;
  return granted;
}

// --- Reservation ---

void ReservationTraits::Release(const Value& v) noexcept {
  const auto& [api, va, size] = v;
  CU_CALL_NOTHROW(*api, cuMemAddressFree(va, size));
}

StatusOr<Reservation> CreateReservation(const DriverApi& api, uint64_t size, uint64_t alignment,
                                        CUdeviceptr hint) {
  CUdeviceptr va = 0;
  VMM_RETURN_IF_ERROR(CU_CALL(api, cuMemAddressReserve(&va, size, alignment, hint, 0)));
  return Reservation(ReservedRange{&api, va, size});
}

Status FreeReservation(Reservation* reservation) {
  if (!*reservation) return Status::Ok();
  const auto& [api, va, size] = reservation->get();
  VMM_RETURN_IF_ERROR(CU_CALL(*api, cuMemAddressFree(va, size)));
  reservation->release();  // freed above
  return Status::Ok();
}

// --- PhysicalAlloc ---

void PhysicalAllocTraits::Release(const Value& v) noexcept {
  const auto& [api, handle, size] = v;
  CU_CALL_NOTHROW(*api, cuMemRelease(handle));
}

VMM_HOT StatusOr<PhysicalAlloc> CreatePhysicalAlloc(const DriverApi& api,
                                                    const CUmemAllocationProp& prop,
                                                    uint64_t size) {
  CUmemGenericAllocationHandle handle = 0;
  VMM_RETURN_IF_ERROR(CU_CALL(api, cuMemCreate(&handle, size, &prop, 0)));
  return PhysicalAlloc(PhysicalMemory{&api, handle, size});
}

StatusOr<PhysicalAlloc> RetainPhysicalAlloc(const DriverApi& api, CUdeviceptr va, uint64_t size) {
  CUmemGenericAllocationHandle handle = 0;
  void* addr = reinterpret_cast<void*>(static_cast<uintptr_t>(va));
  VMM_RETURN_IF_ERROR(CU_CALL(api, cuMemRetainAllocationHandle(&handle, addr)));
  return PhysicalAlloc(PhysicalMemory{&api, handle, size});
}

// --- Mapping ---

void MappingTraits::Release(const Value& v) noexcept {
  CU_CALL_NOTHROW(*v.api, cuMemUnmap(v.va, v.size));
}

VMM_HOT StatusOr<Mapping> CreateMapping(const DriverApi& api, CUdeviceptr va, uint64_t size,
                                        uint64_t offset, CUmemGenericAllocationHandle handle,
                                        uint64_t owner) {
  VMM_RETURN_IF_ERROR(CU_CALL(api, cuMemMap(va, size, offset, handle, 0)));
  return Mapping(MappedRange{&api, va, size, owner});
}

}  // namespace vmm::cuda
