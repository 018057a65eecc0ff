#include "runner/engine/host/host_vmm.h"

#include <fcntl.h>
#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runner/base/format.h"

namespace vmm::host {
namespace {

constexpr int kReserveFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

std::string Errno(int err) { return std::strerror(err); }

void* Addr(uint64_t va) { return reinterpret_cast<void*>(va); }

// Puts [va, va+size) back into the reserved state.
Status ReReserve(uint64_t va, uint64_t size) {
  void* p = mmap(Addr(va), size, PROT_NONE, kReserveFlags | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED) {
    return RuntimeError("re-reserving " + Hex(size) + " bytes at " + Hex(va) +
                        " failed: " + Errno(errno));
  }
  return Status::Ok();
}

}  // namespace

uint64_t PageSize() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }

// --- Reservation ---

void ReservationTraits::Release(const Value& v) noexcept { munmap(Addr(v.va), v.size); }

StatusOr<Reservation> CreateReservation(uint64_t size, uint64_t alignment, uint64_t hint) {
  const uint64_t page = PageSize();
  if (size == 0 || size % page != 0)
    return InternalError("reservation size " + Hex(size) + " is not a multiple of the page size");
  if (alignment < page) alignment = page;
  if ((alignment & (alignment - 1)) != 0)
    return InternalError("reservation alignment " + Hex(alignment) + " is not a power of two");
  if (hint != 0 && hint % alignment == 0) {
    // Without MAP_FIXED the kernel takes the hint only when the whole range is free there, and
    // otherwise places the range elsewhere: the driver's semantics for its `addr` argument.
    void* p = mmap(Addr(hint), size, PROT_NONE, kReserveFlags, -1, 0);
    if (p != MAP_FAILED) {
      if (reinterpret_cast<uint64_t>(p) == hint) return Reservation(AddressRange{hint, size});
      munmap(p, size);  // placed elsewhere: fall through to an aligned placement
    }
  }
  // Over-reserve by alignment - page so that an aligned start exists, then trim both ends.
  const uint64_t slack = alignment - page;
  if (size > UINT64_MAX - slack)
    return RuntimeError("size " + Hex(size) + " is too large to reserve");
  const uint64_t total = size + slack;
  void* p = mmap(nullptr, total, PROT_NONE, kReserveFlags, -1, 0);
  if (p == MAP_FAILED) {
    return RuntimeError("mmap of " + Hex(total) + " bytes failed: " + Errno(errno));
  }
  const uint64_t raw = reinterpret_cast<uint64_t>(p);
  const uint64_t base = (raw + alignment - 1) & ~(alignment - 1);
  if (base > raw) munmap(p, base - raw);
  const uint64_t tail = raw + total - (base + size);
  if (tail > 0) munmap(Addr(base + size), tail);
  return Reservation(AddressRange{base, size});
}

// --- PhysicalMemory ---

namespace {
// Bytes the kernel could still give us without swapping (MemAvailable), or 0 when unknown.
uint64_t AvailableMemory() {
  FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return 0;
  char line[256];
  uint64_t kib = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long v = 0;
    if (std::sscanf(line, "MemAvailable: %llu kB", &v) == 1) {
      kib = v;
      break;
    }
  }
  std::fclose(f);
  return kib * 1024;
}
}  // namespace

void PhysicalMemoryTraits::Release(const Value& v) noexcept { close(v.fd); }

bool NumaNodeExists(int node) {
  if (node < 0) return false;
  const std::string dir = "/sys/devices/system/node/node" + std::to_string(node);
  struct stat st;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

namespace {
constexpr unsigned long kMaxNode = 1024;
constexpr unsigned long kWord = 8 * sizeof(unsigned long);

// The calling thread's memory policy, saved so it can be put back.
struct MemPolicy {
  int mode = MPOL_DEFAULT;
  unsigned long mask[kMaxNode / kWord] = {};
};

// Commits [0, size) of `fd`; with `numa_node` >= 0, under MPOL_BIND to that node (shmem pages are
// allocated under the task's policy), putting the thread's policy back afterwards. A kernel that
// refuses the policy (seccomp, no NUMA support) is Code::kUnavailable; a failed commit kRuntime.
Status Commit(int fd, uint64_t size, int numa_node) {
  if (numa_node < 0) {
    const int err = posix_fallocate(fd, 0, static_cast<off_t>(size));
    if (err == 0) return Status::Ok();
    return RuntimeError("committing " + Hex(size) + " bytes failed: " + Errno(err));
  }
  const std::string node = "NUMA node " + std::to_string(numa_node);
  if (static_cast<unsigned long>(numa_node) >= kMaxNode)
    return InvalidInput(node + " is too large");
  MemPolicy old;
  if (syscall(SYS_get_mempolicy, &old.mode, old.mask, kMaxNode, nullptr, 0) != 0)
    return Unavailable("reading the memory policy failed: " + Errno(errno));
  unsigned long mask[kMaxNode / kWord] = {};
  mask[numa_node / kWord] |= 1ul << (numa_node % kWord);
  if (syscall(SYS_set_mempolicy, MPOL_BIND, mask, kMaxNode) != 0)
    return Unavailable("binding to " + node + " failed: " + Errno(errno));
  const int err = posix_fallocate(fd, 0, static_cast<off_t>(size));
  const bool had_mask = old.mode != MPOL_DEFAULT;
  syscall(SYS_set_mempolicy, old.mode, had_mask ? old.mask : nullptr, had_mask ? kMaxNode : 0);
  if (err == 0) return Status::Ok();
  return RuntimeError("committing " + Hex(size) + " bytes on " + node + " failed: " + Errno(err));
}
}  // namespace

StatusOr<PhysicalMemory> CreatePhysicalMemory(uint64_t size, const std::string& name,
                                              int numa_node) {
  if (numa_node >= 0 && !NumaNodeExists(numa_node))
    return InvalidInput("NUMA node " + std::to_string(numa_node) + " does not exist");
  if (size > static_cast<uint64_t>(INT64_MAX))
    return RuntimeError("size " + Hex(size) + " is too large for a memfd");
  // A device refuses an allocation larger than its free memory at once; committing it here with
  // fallocate would instead eat the machine's memory until the OOM killer stepped in.
  uint64_t available = AvailableMemory();
  if (available != 0 && size > available) {
    return RuntimeError(FormatBytes(size) + " requested, the host has " + FormatBytes(available) +
                        " available");
  }
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) return RuntimeError("memfd_create failed: " + Errno(errno));
  PhysicalMemory memory(MemoryFd{fd, size});  // closes the fd on the error paths below
  if (ftruncate(fd, static_cast<off_t>(size)) != 0)
    return RuntimeError("ftruncate to " + Hex(size) + " failed: " + Errno(errno));
  // Commit now: shmem pages that cannot be allocated later would raise SIGBUS on first touch.
  VMM_RETURN_IF_ERROR(Commit(fd, size, numa_node));
  return memory;
}

StatusOr<int> DuplicateFd(int fd) {
  const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0)
    return RuntimeError("duplicating fd " + std::to_string(fd) + " failed: " + Errno(errno));
  return copy;
}

StatusOr<PhysicalMemory> OpenSharedMemory(int fd, std::string* name) {
  const std::string what = "fd " + std::to_string(fd);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return RuntimeError(what + " is not open");
  // A memfd reads back as "/memfd:<name> (deleted)".
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  char target[256] = {};
  const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
  const std::string prefix = std::string("/memfd:") + kMemoryFdPrefix;
  if (!S_ISREG(st.st_mode) || n <= 0 || std::string(target, n).rfind(prefix, 0) != 0) {
    return RuntimeError(what + " is not a memory handle exported by vmm-run's host twin");
  }
  StatusOr<int> copy = DuplicateFd(fd);
  if (!copy.ok()) return copy.status();
  if (name != nullptr) {
    *name = std::string(target, n).substr(prefix.size());
    if (const size_t deleted = name->find(" (deleted)"); deleted != std::string::npos)
      name->erase(deleted);
  }
  return PhysicalMemory(MemoryFd{*copy, static_cast<uint64_t>(st.st_size)});
}

// --- Mapping ---

void MappingTraits::Release(const Value& v) noexcept { (void)ReReserve(v.va, v.size); }

StatusOr<Mapping> CreateMapping(uint64_t va, uint64_t size, const PhysicalMemory& memory,
                                uint64_t offset) {
  void* p = mmap(Addr(va), size, PROT_NONE, MAP_SHARED | MAP_FIXED, memory->fd,
                 static_cast<off_t>(offset));
  if (p == MAP_FAILED) {
    return RuntimeError("mmap of " + Hex(size) + " bytes at " + Hex(va) +
                        " failed: " + Errno(errno));
  }
  return Mapping(AddressRange{va, size});
}

Status UnmapMapping(Mapping* mapping) {
  if (!*mapping) return Status::Ok();
  VMM_RETURN_IF_ERROR(ReReserve((*mapping)->va, (*mapping)->size));
  mapping->release();  // the range is reserved again
  return Status::Ok();
}

Status Protect(uint64_t va, uint64_t size, int prot) {
  if (mprotect(Addr(va), size, prot) != 0) {
    return RuntimeError("mprotect of " + Hex(size) + " bytes at " + Hex(va) +
                        " failed: " + Errno(errno));
  }
  return Status::Ok();
}

}  // namespace vmm::host
