// CudaEngine's VMM methods: reserve / free, create / release, map / unmap, access, export /
// import, and the inventory that expect_error compares before and after a refused call. Each is
// one driver call (cuMem*) plus the engine's bookkeeping of what it owns.
#include <algorithm>
#include <string>
#include <utility>

#include "runner/base/format.h"
#include "runner/base/hot_path.h"
#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/cuda_engine.h"
#include "runner/engine/cuda/cuda_engine_impl.h"

namespace vmm {
namespace cuda {
namespace {

// The error for a handle this engine never made or already released; `what` names the call.
Status UnknownHandle(const std::string& what) {
  return RuntimeError(what +
                      ": unknown allocation handle (never created by this engine, or already "
                      "released)");
}

// This thread's memo of the allocation it mapped last (CudaEngine::MemoFor).
struct AllocMemo {
  uint64_t engine = 0;  // CudaEngine::instance_; 0: none
  uint64_t handle = 0;
  uint64_t releases = 0;
  CUmemGenericAllocationHandle driver = 0;
};
thread_local AllocMemo t_alloc_memo;

// The mapping shard of this thread (CudaEngine::ThreadShard), given out in turn.
std::atomic<size_t> g_next_shard{0};
thread_local size_t t_shard = SIZE_MAX;

std::atomic<uint64_t> g_next_instance{1};

}  // namespace

uint64_t CudaEngine::NextInstance() { return g_next_instance.fetch_add(1); }

VMM_HOT CUmemGenericAllocationHandle CudaEngine::MemoFor(AllocHandle handle) const {
  const AllocMemo& memo = t_alloc_memo;
  if (memo.engine != instance_ || memo.handle != handle.value || handle.value == 0) return 0;
  if (memo.releases != releases_.load(std::memory_order_acquire)) return 0;
  if (allow_released_.load(std::memory_order_relaxed)) return 0;  // the slow path clears it
  return memo.driver;
}

VMM_HOT void CudaEngine::Memoize(AllocHandle handle, CUmemGenericAllocationHandle driver,
                                 uint64_t releases) const {
  t_alloc_memo = AllocMemo{instance_, handle.value, releases, driver};
}

VMM_HOT CudaEngine::MappingShard& CudaEngine::ThreadShard() {
  if (t_shard == SIZE_MAX) t_shard = g_next_shard.fetch_add(1) % kMappingShards;
  return mapping_shards_[t_shard];
}

VMM_HOT uint64_t CudaEngine::ForgetMappings(MappingShard& shard, DevicePtr va, uint64_t size) {
  uint64_t covered = 0;
  std::lock_guard<SpinLock> lock(shard.mu);
  std::erase_if(shard.list, [&](Mapping& m) {
    if (!m->Overlaps(va, size)) return false;
    const DevicePtr from = std::max<DevicePtr>(m->va, va);
    const DevicePtr to = std::min<DevicePtr>(m->va + m->size, va + size);
    covered += to - from;
    m.release();  // unmapped by the driver's call
    return true;
  });
  return covered;
}

VMM_HOT Status CudaEngine::Reserve(uint64_t size, uint64_t alignment, DevicePtr hint,
                                   DevicePtr* va) {
  auto what = [&] {
    return "Reserve(size=" + FormatBytes(size) + ", alignment=" + FormatBytes(alignment) +
           ", hint=" + Hex(hint) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  if (alignment == 0) alignment = info_.granularity_min;
  StatusOr<Reservation> r = CreateReservation(api_, size, alignment, hint);
  if (!r.ok()) return Annotate(r.status(), what);
  *va = r->get().va;
  std::lock_guard<SpinLock> lock(vmm_mu_);
  reservations_.emplace(NextId(), std::move(r).value());
  return Status::Ok();
}

VMM_HOT Status CudaEngine::Free(DevicePtr va, uint64_t size) {
  auto what = [&] { return "Free(va=" + Hex(va) + ", size=" + FormatBytes(size) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  // Taken out of the table while the driver frees it (another thread may use the table); put back
  // when the driver refuses.
  uint64_t id = 0;
  Reservation owned;
  {
    std::lock_guard<SpinLock> lock(vmm_mu_);
    auto it = reservations_.begin();
    while (it != reservations_.end() && it->second->va != va) ++it;
    if (it != reservations_.end()) {
      id = it->first;
      owned = std::move(it->second);
      reservations_.erase(it);
    }
  }
  // A range this engine did not reserve as given goes to the driver all the same: it decides,
  // and names the error.
  const bool as_reserved = owned && owned->size == size;
  Status freed = as_reserved ? FreeReservation(&owned) : CU_CALL(api_, cuMemAddressFree(va, size));
  if (freed.ok()) {
    if (!as_reserved) owned.release();  // another range it owned, freed by the driver's call
    return Status::Ok();
  }
  if (owned) {
    std::lock_guard<SpinLock> lock(vmm_mu_);
    reservations_.emplace(id, std::move(owned));
  }
  return Annotate(freed, what);
}

VMM_HOT Status CudaEngine::Create(const AllocProps& props, AllocHandle* out) {
  auto what = [&] { return "Create(size=" + FormatBytes(props.size) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  StatusOr<PhysicalAlloc> a =
      CreatePhysicalAlloc(api_, AllocationProp(props, ordinal_), props.size);
  // props.location_id >= 0 places the memory on another device: cuMemCreate takes any device's
  // ordinal from any context.
  if (!a.ok()) return Annotate(a.status(), what);
  const CUmemGenericAllocationHandle driver = a->get().handle;
  std::lock_guard<SpinLock> lock(vmm_mu_);
  out->value = allocs_.Insert(std::move(a).value());
  // A page is usually mapped next, by this thread: its Map finds the handle in the memo.
  Memoize(*out, driver, releases_.load(std::memory_order_relaxed));
  return Status::Ok();
}

std::optional<PhysicalMemory> CudaEngine::FindMemory(AllocHandle handle) {
  std::lock_guard<SpinLock> lock(vmm_mu_);
  const PhysicalAlloc* alloc = allocs_.Find(handle.value);
  if (alloc == nullptr) return std::nullopt;
  return alloc->get();
}

std::optional<CUmemGenericAllocationHandle> CudaEngine::TakeReleased(uint64_t id) {
  if (!allow_released_.exchange(false, std::memory_order_relaxed)) return std::nullopt;
  for (const ReleasedHandle& r : released_)
    if (r.id == id && id != 0) return r.driver;
  return std::nullopt;
}

Status CudaEngine::AllowReleasedHandle() {
  std::lock_guard<SpinLock> lock(vmm_mu_);
  allow_released_.store(true, std::memory_order_relaxed);
  return Status::Ok();
}

VMM_HOT Status CudaEngine::Release(AllocHandle handle, SyncNote* note) {
  auto what = [&] { return "Release(handle=" + std::to_string(handle.value) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  std::optional<CUmemGenericAllocationHandle> freed;
  // The driver's handle, copied under the guard; the call goes out without it. Only this thread
  // releases this handle (the validator orders every other use of it before or after).
  std::optional<PhysicalMemory> memory;
  {
    std::lock_guard<SpinLock> lock(vmm_mu_);
    // The allowance covers this call only, whichever handle it names.
    if (const PhysicalAlloc* alloc = allocs_.Find(handle.value)) {
      memory = alloc->get();
      allow_released_.store(false, std::memory_order_relaxed);
    } else {
      freed = TakeReleased(handle.value);
    }
  }
  // An isolate block's second release: the driver's freed handle, as it is (outside the guard).
  if (freed) return Annotate(CU_CALL(api_, cuMemRelease(*freed)), what);
  if (!memory) return UnknownHandle(what());
  VMM_RETURN_IF_ERROR(
      Annotate(WaitIfBusy(note), [&] { return what() + ": waiting for in-flight work"; }));
  VMM_RETURN_IF_ERROR(Annotate(CU_CALL(api_, cuMemRelease(memory->handle)), what));
  std::lock_guard<SpinLock> lock(vmm_mu_);
  if (PhysicalAlloc* alloc = allocs_.Find(handle.value)) alloc->release();  // released above
  allocs_.Erase(handle.value);
  releases_.fetch_add(1, std::memory_order_release);  // every thread's memo is stale now
  released_[released_next_] = ReleasedHandle{handle.value, memory->handle};
  released_next_ = (released_next_ + 1) % released_.size();
  return Status::Ok();
}

VMM_HOT Status CudaEngine::Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle) {
  auto what = [&] {
    return "Map(va=" + Hex(va) + ", size=" + FormatBytes(size) + ", offset=" + FormatBytes(offset) +
           ", handle=" + std::to_string(handle.value) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  CUmemGenericAllocationHandle memory = MemoFor(handle);
  bool known = true;
  if (memory == 0) {
    std::lock_guard<SpinLock> lock(vmm_mu_);
    const PhysicalAlloc* alloc = allocs_.Find(handle.value);
    if (alloc != nullptr) {
      memory = alloc->get().handle;
      allow_released_.store(false, std::memory_order_relaxed);  // it covers this call only
      Memoize(handle, memory, releases_.load(std::memory_order_relaxed));
    } else if (const std::optional<CUmemGenericAllocationHandle> freed =
                   TakeReleased(handle.value)) {
      memory = *freed;  // an isolate block's map of a released handle: driver 580 segfaults
    } else {
      known = false;
    }
  }
  if (!known) return UnknownHandle(what());
  StatusOr<Mapping> m = CreateMapping(api_, va, size, offset, memory, handle.value);
  if (!m.ok()) return Annotate(m.status(), what);
  MappingShard& shard = ThreadShard();
  std::lock_guard<SpinLock> lock(shard.mu);
  shard.list.push_back(std::move(m).value());
  return Status::Ok();
}

VMM_HOT Status CudaEngine::SetAccess(DevicePtr va, uint64_t size,
                                     std::span<const DeviceAccess> access, SyncNote* note) {
  auto what = [&] {
    std::string list;
    for (const DeviceAccess& a : access) {
      list += (list.empty() ? "" : ", ") + std::to_string(a.device < 0 ? ordinal_ : a.device) +
              ": " + AccessName(a.access);
    }
    return "SetAccess(va=" + Hex(va) + ", size=" + FormatBytes(size) + ", access={" + list + "})";
  };
  VMM_RETURN_IF_ERROR(Bind());
  if (access.size() > kMaxScenarioDevices) return RuntimeError(what() + ": too many devices");
  // One descriptor per device, all in one call (cuMemSetAccess takes an array).
  CUmemAccessDesc descs[kMaxScenarioDevices] = {};
  for (size_t i = 0; i < access.size(); ++i) {
    descs[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    descs[i].location.id = access[i].device < 0 ? ordinal_ : access[i].device;
    descs[i].flags = access[i].access == Access::kNone   ? CU_MEM_ACCESS_FLAGS_PROT_NONE
                     : access[i].access == Access::kRead ? CU_MEM_ACCESS_FLAGS_PROT_READ
                                                         : CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
  // cuMemSetAccess does not wait for kernels still using the range: one that writes where the
  // access drops to read faults (seen on the H200, 2026-12-01), so wait here as Unmap does.
  VMM_RETURN_IF_ERROR(
      Annotate(WaitIfBusy(note), [&] { return what() + ": waiting for in-flight work"; }));
  return Annotate(CU_CALL(api_, cuMemSetAccess(va, size, descs, access.size())), what);
}

Status CudaEngine::GetAccess(DevicePtr va, int device, Access* out) {
  const int ordinal = device < 0 ? ordinal_ : device;
  auto what = [&] {
    return "GetAccess(va=" + Hex(va) + ", device=" + std::to_string(ordinal) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  CUmemLocation location = {};
  location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  location.id = ordinal;
  unsigned long long flags = 0;  // NOLINT(runtime/int): the driver's type
  VMM_RETURN_IF_ERROR(Annotate(CU_CALL(api_, cuMemGetAccess(&flags, &location, va)), what));
  switch (flags) {
    case CU_MEM_ACCESS_FLAGS_PROT_NONE:
      *out = Access::kNone;
      return Status::Ok();
    case CU_MEM_ACCESS_FLAGS_PROT_READ:
      *out = Access::kRead;
      return Status::Ok();
    case CU_MEM_ACCESS_FLAGS_PROT_READWRITE:
      *out = Access::kReadWrite;
      return Status::Ok();
    default:
      return RuntimeError(what() + ": the driver returned unknown access flags " + Hex(flags));
  }
}

Status CudaEngine::Export(AllocHandle handle, int* fd) {
  auto what = [&] { return "Export(handle=" + std::to_string(handle.value) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  const std::optional<PhysicalMemory> memory = FindMemory(handle);
  if (!memory) return UnknownHandle(what());
  int exported = -1;  // the driver writes an int for CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
  VMM_RETURN_IF_ERROR(Annotate(
      CU_CALL(api_, cuMemExportToShareableHandle(&exported, memory->handle,
                                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)),
      what));
  *fd = exported;
  return Status::Ok();
}

Status CudaEngine::Import(int fd, AllocHandle* out) {
  auto what = [&] { return "Import(fd=" + std::to_string(fd) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  // For a POSIX fd the driver takes the descriptor's value in place of a pointer, and does not
  // take ownership of it.
  void* os_handle = reinterpret_cast<void*>(static_cast<uintptr_t>(static_cast<unsigned>(fd)));
  CUmemGenericAllocationHandle handle = 0;
  VMM_RETURN_IF_ERROR(
      Annotate(CU_CALL(api_, cuMemImportFromShareableHandle(
                                 &handle, os_handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)),
               what));
  // The driver does not say the size of an imported handle: the inventory shows 0.
  std::lock_guard<SpinLock> lock(vmm_mu_);
  out->value = allocs_.Insert(PhysicalAlloc(PhysicalMemory{&api_, handle, 0}));
  return Status::Ok();
}

Status CudaEngine::Inventory(EngineInventory* out) {
  VMM_RETURN_IF_ERROR(Bind());
  *out = EngineInventory{};
  std::unique_lock<SpinLock> lock(vmm_mu_);  // the tables, copied; the driver is asked after
  for (const auto& [id, r] : reservations_) out->reservations.push_back({r->va, r->size});
  allocs_.ForEach([&](uint64_t key, const PhysicalAlloc& a) {
    out->allocations.push_back({key, a->size});
  });
  lock.unlock();
  // The mappings are read shard by shard after the tables: with threads running VMM calls the
  // inventory is not one instant's (expect_error compares it around a refused call, which a
  // threads group never makes). Each mapping's access is the driver's own answer (cuMemGetAccess
  // through GetAccess, for every device), not the engine's memory of what it asked for; where it
  // gives none the access is recorded as unknown: the comparison before and after a refused call
  // still holds, and no data is read there.
  ForEachMapping([&](const Mapping& m) {
    out->mappings.push_back({m->va, m->size, m->owner, {}, true});
  });
  auto by_va = [](const auto& x, const auto& y) { return x.va < y.va; };
  std::sort(out->reservations.begin(), out->reservations.end(), by_va);
  std::sort(out->mappings.begin(), out->mappings.end(), by_va);
  std::sort(out->allocations.begin(), out->allocations.end(),
            [](const auto& x, const auto& y) { return x.handle < y.handle; });
  ReadAccessBack(out);
  return Status::Ok();
}

VMM_HOT Status CudaEngine::Unmap(DevicePtr va, uint64_t size, SyncNote* note) {
  auto what = [&] { return "Unmap(va=" + Hex(va) + ", size=" + FormatBytes(size) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  // cuMemUnmap does not wait for kernels still using the range: wait here, or they fault (unless
  // the scenario asked for exactly that: wait: false inside an isolate block).
  VMM_RETURN_IF_ERROR(
      Annotate(WaitIfBusy(note), [&] { return what() + ": waiting for in-flight work"; }));
  VMM_RETURN_IF_ERROR(Annotate(CU_CALL(api_, cuMemUnmap(va, size)), what));
  // The driver unmapped the whole range: forget every mapping it touched, in this thread's shard
  // first; the others only when those did not cover the range.
  MappingShard& own = ThreadShard();
  uint64_t covered = ForgetMappings(own, va, size);
  if (covered < size) {
    for (MappingShard& shard : mapping_shards_)
      if (covered < size && &shard != &own) covered += ForgetMappings(shard, va, size);
  }
  return Status::Ok();
}

}  // namespace cuda
}  // namespace vmm
