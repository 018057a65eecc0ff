#include "runner/engine/host_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "runner/base/format.h"

namespace vmm {

void HostPagesTraits::Release(const Value& v) noexcept {
  if (v.addr != nullptr) munmap(v.addr, v.bytes);
}

StatusOr<HostPages> MapHostPages(uint64_t bytes) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (bytes == 0) return InvalidInput("MapHostPages: 0 bytes");
  const uint64_t rounded = (bytes + page - 1) / page * page;
  void* addr = mmap(nullptr, rounded, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (addr == MAP_FAILED) {
    const int err = errno;
    return RuntimeError("mmap of " + FormatBytes(rounded) +
                        " of host memory failed: " + std::strerror(err));
  }
  return HostPages(HostPagesTraits::Value{addr, rounded});
}

}  // namespace vmm
