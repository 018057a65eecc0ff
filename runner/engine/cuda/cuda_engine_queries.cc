// CudaEngine's queries: memory, granularity, granted properties, retained handles, address ranges
// and capability probes (engine.h, "Queries"). One driver call each, except where said.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "runner/base/format.h"
#include "runner/engine/capability_probe.h"
#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/cuda_engine_impl.h"

namespace vmm::cuda {

Status CudaEngine::MemoryInfo(uint64_t* free_bytes, uint64_t* total_bytes) {
  if (checkpointed_) return checkpoint_helper_->Info(free_bytes, total_bytes);
  VMM_RETURN_IF_ERROR(Bind());
  size_t free = 0, total = 0;
  VMM_RETURN_IF_ERROR(CU_CALL(api_, cuMemGetInfo(&free, &total)));
  *free_bytes = free;
  *total_bytes = total;
  return Status::Ok();
}

Status CudaEngine::HoldMemory(uint64_t leave_free, uint64_t* held) {
  *held = 0;
  if (!held_.empty() || hold_in_helper_) {
    return Status(Code::kRuntime,
                  "HoldMemory: this run already holds memory for pressure (return_memory first)",
                  "CUDA_ERROR_INVALID_VALUE");
  }
  if (checkpointed_) {  // the helper holds it: this process's calls are locked
    VMM_RETURN_IF_ERROR(checkpoint_helper_->Hold(leave_free, held));
    hold_in_helper_ = true;
    return Status::Ok();
  }
  VMM_RETURN_IF_ERROR(Bind());
  const CUmemAllocationProp prop = DeviceAllocationProp(lane_->ordinal);
  size_t granule = 0, free = 0, total = 0;
  VMM_RETURN_IF_ERROR(CU_CALL(
      api_, cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM)));
  VMM_RETURN_IF_ERROR(CU_CALL(api_, cuMemGetInfo(&free, &total)));
  uint64_t want = free > leave_free ? (free - leave_free) / granule * granule : 0;
  // Large allocations first; an out-of-memory chunk is halved, down to one granule (the driver
  // keeps some of what cuMemGetInfo calls free for itself).
  uint64_t chunk = std::min<uint64_t>(want, 4ull << 30);
  while (want >= granule && chunk >= granule) {
    chunk = std::min(chunk, want) / granule * granule;
    StatusOr<PhysicalAlloc> a = CreatePhysicalAlloc(api_, prop, chunk);
    if (!a.ok()) {
      const char* error = a.status().cuda_error();
      if (error == nullptr || std::string_view(error) != "CUDA_ERROR_OUT_OF_MEMORY")
        return Annotate(a.status(), "HoldMemory");
      chunk /= 2;
      continue;
    }
    held_.push_back(std::move(a).value());
    *held += chunk;
    want -= chunk;
  }
  return Status::Ok();
}

Status CudaEngine::ReturnMemory(uint64_t* returned) {
  if (hold_in_helper_) {
    VMM_RETURN_IF_ERROR(checkpoint_helper_->Return(returned));
    hold_in_helper_ = false;
    return Status::Ok();
  }
  VMM_RETURN_IF_ERROR(Bind());
  *returned = 0;
  for (const PhysicalAlloc& a : held_) *returned += a.get().size;
  held_.clear();  // cuMemRelease of each
  return Status::Ok();
}

Status CudaEngine::Granularity(const AllocProps& props, GranularityKind kind, uint64_t* bytes) {
  VMM_RETURN_IF_ERROR(Bind());
  const CUmemAllocationProp prop = AllocationProp(props, ordinal_);
  size_t g = 0;
  VMM_RETURN_IF_ERROR(
      CU_CALL(api_, cuMemGetAllocationGranularity(&g, &prop,
                                                  kind == GranularityKind::kMinimum
                                                      ? CU_MEM_ALLOC_GRANULARITY_MINIMUM
                                                      : CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)));
  *bytes = g;
  return Status::Ok();
}

Status CudaEngine::AllocProperties(AllocHandle handle, AllocProps* granted) {
  VMM_RETURN_IF_ERROR(Bind());
  std::optional<PhysicalMemory> memory = FindMemory(handle);  // threads may change the table
  if (!memory) {
    return RuntimeError("AllocProperties(handle=" + std::to_string(handle.value) +
                        "): unknown allocation handle");
  }
  CUmemAllocationProp prop = {};
  VMM_RETURN_IF_ERROR(CU_CALL(api_, cuMemGetAllocationPropertiesFromHandle(&prop, memory->handle)));
  *granted = GrantedProps(prop);
  granted->size = memory->size;
  return Status::Ok();
}

Status CudaEngine::Retain(DevicePtr va, AllocHandle* out) {
  auto what = [&] { return "Retain(va=" + Hex(va) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  // A mapping covers a whole allocation, so the mapping that contains va has its size.
  uint64_t size = 0;
  ForEachMapping([&](const Mapping& m) {
    if (m->Overlaps(va, 1)) size = m->size;
  });
  if (size == 0) return RuntimeError(what() + ": no mapping made by this engine contains it");
  StatusOr<PhysicalAlloc> a = RetainPhysicalAlloc(api_, va, size);
  if (!a.ok()) return Annotate(a.status(), what);
  std::lock_guard<SpinLock> lock(vmm_mu_);
  out->value = allocs_.Insert(std::move(a).value());
  return Status::Ok();
}

Status CudaEngine::SameAllocation(AllocHandle a, AllocHandle b, bool* same) {
  auto what = [&] {
    return "SameAllocation(" + std::to_string(a.value) + ", " + std::to_string(b.value) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  const std::optional<PhysicalMemory> x = FindMemory(a), y = FindMemory(b);
  if (!x || !y) return RuntimeError(what() + ": unknown allocation handle");
  if (x->handle == y->handle || x->size != y->size) {
    *same = x->handle == y->handle;
    return Status::Ok();
  }
  VMM_RETURN_IF_ERROR(Annotate(Drain(*lane_, nullptr), what));
  const uint64_t size = x->size;
  StatusOr<Reservation> scratch = CreateReservation(api_, 2 * size, info_.granularity_min);
  if (!scratch.ok()) return Annotate(scratch.status(), what);
  const CUdeviceptr va = scratch->get().va;
  // Declared after the reservation: destroyed (unmapped) before it is freed.
  StatusOr<Mapping> mx = CreateMapping(api_, va, size, 0, x->handle);
  if (!mx.ok()) return Annotate(mx.status(), what);
  StatusOr<Mapping> my = CreateMapping(api_, va + size, size, 0, y->handle);
  if (!my.ok()) return Annotate(my.status(), what);
  CUmemAccessDesc desc = {};
  desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  desc.location.id = lane_->ordinal;  // the selected device: its context does the copies
  desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  VMM_RETURN_IF_ERROR(Annotate(CU_CALL(api_, cuMemSetAccess(va, 2 * size, &desc, 1)), what));
  void* px = reinterpret_cast<void*>(static_cast<uintptr_t>(va));
  void* py = reinterpret_cast<void*>(static_cast<uintptr_t>(va + size));
  uint32_t before = 0, seen_before = 0, seen_after = 0;
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(cudaMemcpy(&before, px, 4, cudaMemcpyDeviceToHost)), what));
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(cudaMemcpy(&seen_before, py, 4, cudaMemcpyDeviceToHost)), what));
  const uint32_t flipped = ~before;
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(cudaMemcpy(px, &flipped, 4, cudaMemcpyHostToDevice)), what));
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(cudaMemcpy(&seen_after, py, 4, cudaMemcpyDeviceToHost)), what));
  VMM_RETURN_IF_ERROR(
      Annotate(CUDA_CALL(cudaMemcpy(px, &before, 4, cudaMemcpyHostToDevice)), what));
  // From pageable memory cudaMemcpy may return before the DMA lands: wait for it, or the scratch
  // mappings are gone under it (seen on the H200: an MMU fault, cudaErrorLaunchFailure at the
  // next synchronizing call of the process).
  VMM_RETURN_IF_ERROR(Annotate(CUDA_CALL(cudaStreamSynchronize(cudaStreamLegacy)), what));
  *same = seen_before == before && seen_after == flipped;
  return Status::Ok();
}

Status CudaEngine::AddressRange(DevicePtr va, DevicePtr* base, uint64_t* size) {
  VMM_RETURN_IF_ERROR(Bind());
  CUdeviceptr b = 0;
  size_t s = 0;
  VMM_RETURN_IF_ERROR(Annotate(CU_CALL(api_, cuMemGetAddressRange(&b, &s, va)),
                               [&] { return "AddressRange(va=" + Hex(va) + ")"; }));
  *base = b;
  *size = s;
  return Status::Ok();
}

namespace {
// The device attribute that says whether `capability` is supported, or nullopt where none does.
std::optional<std::pair<CUdevice_attribute, const char*>> CapabilityAttribute(Capability c) {
  switch (c) {
    case Capability::kPosixFd:
      return {{CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
               "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED"}};
    case Capability::kFabric:
      return {{CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED,
               "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED"}};
    case Capability::kHostLocation:
      return {{CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
               "CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED"}};
    case Capability::kHostNuma:
      return {{CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
               "CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED"}};
    case Capability::kCompression:
      return {{CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED,
               "CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED"}};
    case Capability::kGpuDirectRdma:
      return {{CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
               "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED"}};
    case Capability::kCheckpoint:  // ProbeCheckpoint asks the driver itself
      return std::nullopt;
  }
  return std::nullopt;
}
}  // namespace

Status CudaEngine::ProbeCapability(Capability capability, std::string* why_not) {
  VMM_RETURN_IF_ERROR(Bind());
  why_not->clear();
  if (capability == Capability::kCheckpoint) return ProbeCheckpoint(why_not);
  if (auto attribute = CapabilityAttribute(capability)) {
    CUdevice device = 0;
    int value = 0;
    // An attribute this driver does not know is no answer: the trial decides then.
    if (api_.cuDeviceGet(&device, ordinal_) == CUDA_SUCCESS &&
        api_.cuDeviceGetAttribute(&value, attribute->first, device) == CUDA_SUCCESS && value == 0) {
      *why_not = std::string(attribute->second) + " is 0";
      return Status::Ok();
    }
  }
  return ProbeByTrial(*this, capability, why_not);
}

}  // namespace vmm::cuda
