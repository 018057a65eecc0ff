// Move-only RAII types for the Linux primitives behind the host VMM twin.
//
//   Reservation    <- cuMemAddressReserve: an anonymous PROT_NONE | MAP_NORESERVE range, aligned by
//                     over-reserving and trimming. No memory is committed; touching it faults.
//   PhysicalMemory <- cuMemCreate: a memfd sized with ftruncate and committed with fallocate, so an
//                     allocation that does not fit fails here (as cuMemCreate does) instead of
//                     raising SIGBUS on first touch.
//   Mapping        <- cuMemMap: mmap(MAP_SHARED | MAP_FIXED) of a memfd range over reserved space,
//                     created PROT_NONE (a new CUDA mapping has no access until cuMemSetAccess).
//
// These types check nothing about VMM rules (HostEngine does); their errors are plain system errors
// ("mmap of 0x200000 bytes failed: Cannot allocate memory") that HostEngine turns into CUDA-style
// messages. Lifetime rule the owner must keep: a Mapping must be destroyed (or Unmap()ed) before
// the Reservation it lies in, because unmapping re-reserves the range with MAP_FIXED.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "runner/base/status.h"

namespace vmm::host {

// The system page size in bytes.
uint64_t PageSize();

class Reservation {
 public:
  // Reserves `size` bytes at an address that is a multiple of `alignment` (a power of two; values
  // below the page size mean the page size). `size` must be a non-zero multiple of the page size.
  static StatusOr<Reservation> Create(uint64_t size, uint64_t alignment);

  Reservation() = default;
  Reservation(Reservation&& other) noexcept
      : base_(std::exchange(other.base_, 0)), size_(std::exchange(other.size_, 0)) {}
  Reservation& operator=(Reservation&& other) noexcept;
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  ~Reservation();  // munmap of the whole range, mappings inside it included

  uint64_t base() const { return base_; }
  uint64_t size() const { return size_; }
  uint64_t end() const { return base_ + size_; }

 private:
  Reservation(uint64_t base, uint64_t size) : base_(base), size_(size) {}
  void Reset() noexcept;

  uint64_t base_ = 0;
  uint64_t size_ = 0;
};

class PhysicalMemory {
 public:
  // A memfd of `size` bytes named `name` (visible in /proc/self/fd), committed up front.
  // Fails when the memory cannot be committed.
  static StatusOr<PhysicalMemory> Create(uint64_t size, const std::string& name);

  PhysicalMemory() = default;
  PhysicalMemory(PhysicalMemory&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), size_(std::exchange(other.size_, 0)) {}
  PhysicalMemory& operator=(PhysicalMemory&& other) noexcept;
  PhysicalMemory(const PhysicalMemory&) = delete;
  PhysicalMemory& operator=(const PhysicalMemory&) = delete;
  // Closes the fd. Live mappings of it keep the memory alive, as with cuMemRelease.
  ~PhysicalMemory();

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }

 private:
  PhysicalMemory(int fd, uint64_t size) : fd_(fd), size_(size) {}
  void Reset() noexcept;

  int fd_ = -1;
  uint64_t size_ = 0;
};

class Mapping {
 public:
  // Maps [offset, offset+size) of `memory` at `va` with no access (PROT_NONE). The caller
  // guarantees that [va, va+size) is reserved and unmapped and that the range fits `memory`.
  static StatusOr<Mapping> Create(uint64_t va, uint64_t size, const PhysicalMemory& memory,
                                  uint64_t offset);

  Mapping() = default;
  Mapping(Mapping&& other) noexcept
      : va_(std::exchange(other.va_, 0)), size_(std::exchange(other.size_, 0)) {}
  Mapping& operator=(Mapping&& other) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping();  // Unmap(), ignoring a failure (the range stays mapped until the reservation goes)

  // Changes the protection of [va, va+size) (inside this mapping) with mprotect.
  Status Protect(uint64_t va, uint64_t size, int prot) const;
  // Returns the range to the reserved state (anonymous PROT_NONE | MAP_NORESERVE, MAP_FIXED). The
  // shared memory stays alive while another mapping or an open fd refers to it.
  Status Unmap();

  uint64_t va() const { return va_; }
  uint64_t size() const { return size_; }
  uint64_t end() const { return va_ + size_; }

 private:
  Mapping(uint64_t va, uint64_t size) : va_(va), size_(size) {}

  uint64_t va_ = 0;
  uint64_t size_ = 0;
};

}  // namespace vmm::host
