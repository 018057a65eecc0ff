// Owners of the Linux primitives behind the host VMM twin, each a UniqueHandle
// (runner/base/unique_handle.h) over a plain value, made by a factory that returns StatusOr:
//
//   Reservation    <- cuMemAddressReserve: an anonymous PROT_NONE | MAP_NORESERVE range, aligned by
//                     over-reserving and trimming. No memory is committed; touching it faults.
//                     Destroying it munmaps the whole range, mappings inside it included.
//   PhysicalMemory <- cuMemCreate: a memfd sized with ftruncate and committed with fallocate, so an
//                     allocation that does not fit fails here (as cuMemCreate does) instead of
//                     raising SIGBUS on first touch. Destroying it closes the fd; live mappings of
//                     it keep the memory alive, as with cuMemRelease.
//   Mapping        <- cuMemMap: mmap(MAP_SHARED | MAP_FIXED) of a memfd range over reserved space,
//                     created PROT_NONE (a new CUDA mapping has no access until cuMemSetAccess).
//                     Destroying it re-reserves the range (UnmapMapping), ignoring a failure (the
//                     range then stays mapped until its reservation goes).
//
// These types check nothing about VMM rules (AddressSpace does); their errors are plain system
// errors ("mmap of 0x200000 bytes failed: Cannot allocate memory") that AddressSpace turns into
// CUDA-style messages. Lifetime rule the owner must keep: a Mapping must be destroyed (or
// UnmapMapping()ed) before the Reservation it lies in, because unmapping re-reserves the range with
// MAP_FIXED.
#pragma once

#include <cstdint>
#include <string>

#include "runner/base/status.h"
#include "runner/base/unique_handle.h"

namespace vmm::host {

// The system page size in bytes.
uint64_t PageSize();

// [va, va + size) of the process's address space.
struct AddressRange {
  uint64_t va = 0;
  uint64_t size = 0;  // 0: empty
  uint64_t end() const { return va + size; }
};

// --- Reservation ---

struct ReservationTraits {
  using Value = AddressRange;
  static constexpr Value kNull{};
  static bool IsNull(const Value& v) noexcept { return v.size == 0; }
  static void Release(const Value& v) noexcept;  // munmap
};
using Reservation = UniqueHandle<ReservationTraits>;

// Reserves `size` bytes at an address that is a multiple of `alignment` (a power of two; values
// below the page size mean the page size). `size` must be a non-zero multiple of the page size.
// A non-zero `hint` is tried first, as mmap's (not MAP_FIXED) address hint, the way
// cuMemAddressReserve treats its `addr`: when [hint, hint+size) is free and hint is aligned the
// range starts there; otherwise the range goes wherever it fits, never an error and never over
// an existing mapping.
StatusOr<Reservation> CreateReservation(uint64_t size, uint64_t alignment, uint64_t hint = 0);

// --- PhysicalMemory ---

struct MemoryFd {
  int fd = -1;  // -1: empty
  uint64_t size = 0;
};
struct PhysicalMemoryTraits {
  using Value = MemoryFd;
  static constexpr Value kNull{};
  static bool IsNull(const Value& v) noexcept { return v.fd < 0; }
  static void Release(const Value& v) noexcept;  // close
};
using PhysicalMemory = UniqueHandle<PhysicalMemoryTraits>;

// The prefix of every memfd name CreatePhysicalMemory is given by the twin (`name` below), so that
// an fd can be recognised as the twin's memory in any process that receives it.
inline constexpr const char* kMemoryFdPrefix = "vmm-run:alloc-";

// A memfd of `size` bytes named `name` (visible in /proc/self/fd), committed up front.
// Fails when the memory cannot be committed. With `numa_node` >= 0 the pages are committed on that
// node (the calling thread's memory policy is MPOL_BIND to it while they are allocated, then put
// back); fails with Code::kInvalidInput when the node does not exist and Code::kUnavailable when
// the kernel refuses the policy (no NUMA support, or seccomp without CAP_SYS_NICE).
StatusOr<PhysicalMemory> CreatePhysicalMemory(uint64_t size, const std::string& name,
                                              int numa_node = -1);
// Whether NUMA node `node` exists (/sys/devices/system/node/node<N>).
bool NumaNodeExists(int node);
// A new close-on-exec descriptor for the same open file as `fd` (the caller owns it).
StatusOr<int> DuplicateFd(int fd);
// The memory behind `fd`, an open memfd whose name starts with kMemoryFdPrefix (made by this twin,
// in this process or another), as a PhysicalMemory of its current size that owns a duplicate of
// `fd` (the caller keeps `fd`). Fails when `fd` is not open or not such a memfd.
// `name`, when given, receives the memfd's name (after kMemoryFdPrefix).
StatusOr<PhysicalMemory> OpenSharedMemory(int fd, std::string* name = nullptr);

// --- Mapping ---

struct MappingTraits {
  using Value = AddressRange;
  static constexpr Value kNull{};
  static bool IsNull(const Value& v) noexcept { return v.size == 0; }
  static void Release(const Value& v) noexcept;  // re-reserve, ignoring a failure
};
using Mapping = UniqueHandle<MappingTraits>;

// Maps [offset, offset+size) of `memory` at `va` with no access (PROT_NONE). The caller
// guarantees that [va, va+size) is reserved and unmapped and that the range fits `memory`.
StatusOr<Mapping> CreateMapping(uint64_t va, uint64_t size, const PhysicalMemory& memory,
                                uint64_t offset);
// Returns the mapping's range to the reserved state (anonymous PROT_NONE | MAP_NORESERVE,
// MAP_FIXED). The shared memory stays alive while another mapping or an open fd refers to it. On
// success the Mapping is empty; on failure it still owns the range.
Status UnmapMapping(Mapping* mapping);
// Changes the protection of [va, va+size) (inside one mapping) with mprotect.
Status Protect(uint64_t va, uint64_t size, int prot);

}  // namespace vmm::host
