// AddressSpace's checkpoint and restore (Park / Unpark): what the driver does to a checkpointed
// process's device memory, done to the twin's memfds. The bytes go to an image and the memfd's
// pages back to the OS, so a checkpointed twin really holds no "device" memory, and a restore
// really needs the room again.
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "runner/base/format.h"
#include "runner/engine/host/address_space.h"

namespace vmm::host {
namespace {

// Copies `size` bytes from the start of `from` to the start of `to`, through shared mappings of
// both (no mapping of the scenario's is touched).
Status CopyFd(int from, int to, uint64_t size) {
  if (size == 0) return Status::Ok();
  void* src = mmap(nullptr, size, PROT_READ, MAP_SHARED, from, 0);
  if (src == MAP_FAILED) return RuntimeError(std::string("mmap: ") + strerror(errno));
  void* dst = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, to, 0);
  if (dst == MAP_FAILED) {
    const int error = errno;
    munmap(src, size);
    return RuntimeError(std::string("mmap: ") + strerror(error));
  }
  std::memcpy(dst, src, size);
  munmap(dst, size);
  munmap(src, size);
  return Status::Ok();
}

}  // namespace

bool AddressSpace::HoldsHostNuma() const {
  for (const auto& [id, a] : allocations_)
    if (a.asked == MemLocation::kHostNuma && !a.imported) return true;
  return false;
}

Status AddressSpace::Park(uint64_t* freed) {
  const char* fn = "cuCheckpointProcessCheckpoint";
  *freed = 0;
  if (parked_any_) return CudaError(fn, "CUDA_ERROR_ILLEGAL_STATE", "the process is checkpointed");
  std::map<uint64_t, PhysicalMemory> images;
  for (const auto& [id, a] : allocations_) {
    if (CountedBytes(a) == 0) continue;
    StatusOr<PhysicalMemory> image =
        CreatePhysicalMemory(a.memory->size, "vmm-run:image-" + std::to_string(id));
    if (!image.ok()) {
      return CudaError(
          fn, kOutOfMemory,
          "no host memory for the image of handle " + Hex(id) + ": " + image.status().message());
    }
    if (Status copied = CopyFd(a.memory->fd, (*image)->fd, a.memory->size); !copied.ok())
      return CudaError(fn, "CUDA_ERROR_OPERATING_SYSTEM", copied.message());
    images.emplace(id, std::move(image).value());
  }
  // Every image made: now the memory goes (nothing above changed the address space).
  for (auto& [id, image] : images) {
    const MemoryFd& memory = allocations_.at(id).memory.get();
    (void)fallocate(memory.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
                    static_cast<off_t>(memory.size));
  }
  images_ = std::move(images);
  for (int d = 0; d < device_count_; ++d) {
    parked_[d] = committed_[d] - helper_held_[d];  // the helper's hold is another process's
    parked_held_[d] = held_[d];
    *freed += parked_[d];
    committed_[d] = helper_held_[d];
    held_[d] = 0;
  }
  parked_any_ = true;
  return Status::Ok();
}

Status AddressSpace::Unpark(uint64_t* restored) {
  const char* fn = "cuCheckpointProcessRestore";
  *restored = 0;
  if (!parked_any_)
    return CudaError(fn, "CUDA_ERROR_ILLEGAL_STATE", "the process is not checkpointed");
  for (int d = 0; d < device_count_; ++d) {
    if (committed_[d] + parked_[d] > total_memory_) {
      return CudaError(fn, kOutOfMemory,
                       "device " + std::to_string(d) + " has " +
                           FormatBytes(total_memory_ - std::min(committed_[d], total_memory_)) +
                           " free; the process had " + FormatBytes(parked_[d]) + " there");
    }
    if (helper_held_[d] != 0 && parked_held_[d] != 0)
      return InternalError("a hold was made while the process's own hold was checkpointed");
  }
  for (auto& [id, image] : images_) {
    const MemoryFd& memory = allocations_.at(id).memory.get();
    if (fallocate(memory.fd, 0, 0, static_cast<off_t>(memory.size)) != 0) {
      return CudaError(fn, kOutOfMemory,
                       "committing " + FormatBytes(memory.size) + " again: " + strerror(errno));
    }
    if (Status copied = CopyFd(image->fd, memory.fd, memory.size); !copied.ok())
      return CudaError(fn, "CUDA_ERROR_OPERATING_SYSTEM", copied.message());
  }
  images_.clear();
  for (int d = 0; d < device_count_; ++d) {
    committed_[d] += parked_[d];
    held_[d] += parked_held_[d];
    *restored += parked_[d];
    parked_[d] = parked_held_[d] = 0;
  }
  parked_any_ = false;
  return Status::Ok();
}

}  // namespace vmm::host
