#include "runner/engine/host/host_graph_memory.h"

#include <algorithm>

#include "runner/base/format.h"

namespace vmm::host {

Status GraphMemoryPool::Reserve(uint64_t bytes, int device, DevicePtr* ptr) {
  const uint64_t g = space_->granularity();
  const uint64_t size = std::max<uint64_t>(g, (bytes + g - 1) / g * g);
  VMM_RETURN_IF_ERROR(space_->Reserve(size, 0, 0, ptr).WithContext("cuMemAllocAsync"));
  ranges_[*ptr] = Range{size, 1, false, {}, device};
  return Status::Ok();
}

void GraphMemoryPool::Hold(DevicePtr ptr) {
  if (auto it = ranges_.find(ptr); it != ranges_.end()) ++it->second.holders;
}

void GraphMemoryPool::Drop(DevicePtr ptr) {
  auto it = ranges_.find(ptr);
  if (it == ranges_.end()) return;
  --it->second.holders;
  MaybeFreeRange(it);
}

void GraphMemoryPool::MaybeFreeRange(std::map<DevicePtr, Range>::iterator it) {
  if (it->second.holders > 0 || it->second.live) return;
  (void)space_->Free(it->first, it->second.size);  // nothing is mapped there: cannot fail
  ranges_.erase(it);
}

Status GraphMemoryPool::Allocate(DevicePtr ptr, bool auto_free) {
  auto it = ranges_.find(ptr);
  if (it == ranges_.end()) {
    return CudaError("cuGraphLaunch", "CUDA_ERROR_INVALID_VALUE",
                     "no graph allocation at " + Hex(ptr));
  }
  Range& r = it->second;
  if (r.live) {
    if (!auto_free) {
      return CudaError("cuGraphLaunch", "CUDA_ERROR_INVALID_VALUE",
                       "the graph allocation at " + Hex(ptr) +
                           " from an earlier launch is still live (free it, or instantiate with "
                           "auto-free-on-launch)");
    }
    VMM_RETURN_IF_ERROR(Free(ptr, "cuGraphLaunch"));
  }
  AllocHandle memory;
  auto cached = std::find_if(cache_.begin(), cache_.end(), [&](const Cached& c) {
    return c.size == r.size && c.device == r.device;
  });
  if (cached != cache_.end()) {
    memory = cached->memory;
    cache_.erase(cached);
  } else {
    AllocProps props;  // device memory of the device the capture ran on
    props.size = r.size;
    props.location_id = r.device;
    VMM_RETURN_IF_ERROR(space_->Create(props, &memory).WithContext("cuGraphLaunch"));
  }
  const DeviceAccess access{r.device, Access::kReadWrite};
  Status s = space_->Map(ptr, r.size, 0, memory);
  if (s.ok()) s = space_->SetAccess(ptr, r.size, std::span<const DeviceAccess>(&access, 1));
  if (!s.ok()) {
    (void)space_->Unmap(ptr, r.size);
    cache_.push_back(Cached{memory, r.size, r.device});
    Account();
    return s.WithContext("cuGraphLaunch");
  }
  r.live = true;
  r.memory = memory;
  Account();
  return Status::Ok();
}

Status GraphMemoryPool::Free(DevicePtr ptr, const char* function) {
  auto it = ranges_.find(ptr);
  if (it == ranges_.end() || !it->second.live) {
    return CudaError(function, "CUDA_ERROR_INVALID_VALUE",
                     "no live graph allocation at " + Hex(ptr));
  }
  Range& r = it->second;
  VMM_RETURN_IF_ERROR(space_->Unmap(ptr, r.size).WithContext(function));
  cache_.push_back(Cached{r.memory, r.size, r.device});
  r.live = false;
  r.memory = {};
  Account();
  MaybeFreeRange(it);
  return Status::Ok();
}

void GraphMemoryPool::Trim(int device) {
  std::erase_if(cache_, [&](const Cached& c) {
    if (c.device != device) return false;
    (void)space_->Release(c.memory);
    return true;
  });
  Account();
}

GraphMemoryUsage GraphMemoryPool::Usage(int device) const {
  auto it = usage_.find(device);
  return it == usage_.end() ? GraphMemoryUsage{} : it->second;
}

void GraphMemoryPool::Account() {
  std::map<int, std::pair<uint64_t, uint64_t>> totals;  // by device: used, cached
  for (const auto& [ptr, r] : ranges_)
    if (r.live) totals[r.device].first += r.size;
  for (const Cached& c : cache_) totals[c.device].second += c.size;
  for (auto& [device, u] : usage_) totals.try_emplace(device);  // devices now at zero
  for (const auto& [device, t] : totals) {
    const auto [used, cached] = t;
    GraphMemoryUsage& u = usage_[device];
    u.used_current = used;
    u.reserved_current = used + cached;
    u.used_high = std::max(u.used_high, used);
    u.reserved_high = std::max(u.reserved_high, used + cached);
  }
}

}  // namespace vmm::host
