#include "runner/engine/host/host_graph_memory.h"

#include <algorithm>

#include "runner/base/format.h"

namespace vmm::host {

Status GraphMemoryPool::Reserve(uint64_t bytes, DevicePtr* ptr) {
  const uint64_t g = space_->granularity();
  const uint64_t size = std::max<uint64_t>(g, (bytes + g - 1) / g * g);
  VMM_RETURN_IF_ERROR(space_->Reserve(size, 0, ptr).WithContext("cuMemAllocAsync"));
  ranges_[*ptr] = Range{size, 1, false, {}};
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
  auto cached =
      std::find_if(cache_.begin(), cache_.end(), [&](const auto& c) { return c.second == r.size; });
  if (cached != cache_.end()) {
    memory = cached->first;
    cache_.erase(cached);
  } else {
    VMM_RETURN_IF_ERROR(space_->Create(r.size, &memory).WithContext("cuGraphLaunch"));
  }
  Status s = space_->Map(ptr, r.size, 0, memory);
  if (s.ok()) s = space_->SetAccess(ptr, r.size, Access::kReadWrite);
  if (!s.ok()) {
    (void)space_->Unmap(ptr, r.size);
    cache_.emplace_back(memory, r.size);
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
  cache_.emplace_back(r.memory, r.size);
  r.live = false;
  r.memory = {};
  Account();
  MaybeFreeRange(it);
  return Status::Ok();
}

void GraphMemoryPool::Trim() {
  for (const auto& [memory, size] : cache_) (void)space_->Release(memory);
  cache_.clear();
  Account();
}

void GraphMemoryPool::Account() {
  uint64_t used = 0, cached = 0;
  for (const auto& [ptr, r] : ranges_)
    if (r.live) used += r.size;
  for (const auto& [memory, size] : cache_) cached += size;
  usage_.used_current = used;
  usage_.reserved_current = used + cached;
  usage_.used_high = std::max(usage_.used_high, used);
  usage_.reserved_high = std::max(usage_.reserved_high, used + cached);
}

}  // namespace vmm::host
