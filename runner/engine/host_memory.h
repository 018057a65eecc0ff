// HostPages: anonymous host memory mapped by mmap (MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE)
// and unmapped by munmap: pageable snapshot storage for the CUDA backend and the snapshot storage
// of the host backend. The pages are not touched here, so memory is committed only as a copy
// writes it (a 16 GiB snapshot costs nothing until it is filled).
#pragma once

#include <cstdint>

#include "runner/base/status.h"
#include "runner/base/unique_handle.h"

namespace vmm {

struct HostPagesRange {
  void* addr = nullptr;
  uint64_t bytes = 0;
  bool operator==(const HostPagesRange&) const = default;
};
struct HostPagesTraits {
  using Value = HostPagesRange;
  static constexpr Value kNull{};
  static void Release(const Value& v) noexcept;
};
using HostPages = UniqueHandle<HostPagesTraits>;

// Maps `bytes` (> 0; rounded up to the page size) of readable and writable anonymous memory.
// Fails with a run-time error naming mmap's errno when the address space is exhausted.
StatusOr<HostPages> MapHostPages(uint64_t bytes);

}  // namespace vmm
