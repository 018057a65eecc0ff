// The generator's model of a run: what is reserved, created, mapped with which access, what each
// byte holds, which snapshots, graphs and execs exist. The generator picks only steps this model
// calls legal and states every expectation from it; BuildPlan (the validator) and both engines are
// judged against it. It is a second, deliberately simple implementation of the VMM rules of
// docs/scenario-language.md: whole allocations map at granule offsets, a new mapping has no
// access, set_access and unmap take runs of whole mappings, a released allocation lives while
// mapped, reads need read access and writes read_write, for the device that runs the step.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/generate/content.h"

namespace vmm::gen {

inline constexpr int kMaxDevices = 2;

enum class Perm { kNone, kRead, kReadWrite };
const char* PermName(Perm perm);  // "none", "read", "read_write"

// A named tensor: a buffer (at offset 0 of its reservation) or a view of one.
struct Tensor {
  std::string name;
  std::string buffer;  // the reservation it lives in (itself for a buffer)
  uint64_t offset = 0;
  std::vector<uint64_t> shape;
  bool is_view = false;
  bool graph_memory = false;  // declared for mem_alloc only: never reserved
  uint64_t Elements() const;
  uint64_t Bytes() const { return Elements() * 4; }
};

// Whether two tensors share addresses (views of one buffer whose ranges meet).
inline bool VaOverlap(const Tensor& a, const Tensor& b) {
  return a.buffer == b.buffer && a.offset < b.offset + b.Bytes() && b.offset < a.offset + a.Bytes();
}

struct Mapping {
  uint64_t size = 0;
  int phys = -1;
  int handle = -1;    // Alloc::handle of the allocation mapped
  std::string alloc;  // the alloc name the map step gave (live while allocs[alloc] has `handle`)
  std::array<Perm, kMaxDevices> access{Perm::kNone, Perm::kNone};
  std::string step;  // the map step's name ("" when unnamed)
};

struct Reservation {
  uint64_t size = 0;  // bytes, a multiple of the granularity
  bool reserved = false;
  bool ever_freed = false;
  int instance = -1;  // which reservation (a new one per reserve): same instance, same address
  std::map<uint64_t, Mapping> maps;  // by offset
};

enum class Location { kDevice, kHost, kHostNuma };

struct Phys {
  uint64_t size = 0;
  int device = 0;
  Location location = Location::kDevice;
  bool shareable = false;  // created with handle_types [posix_fd]
  int handles = 0;         // live handles (create, import, retain)
  int mappings = 0;
  PhysContent content{0};
  bool alive() const { return handles > 0 || mappings > 0; }
};

struct Alloc {
  int phys = -1;
  bool live = false;
  bool imported = false;  // by import or retain: cannot be exported
  // Which allocation the handle names: one per create and per import (an import of this
  // process's export is an allocation of its own on the H200); a retain names the mapped one.
  int handle = -1;
};

struct Snapshot {
  Content content;
  uint64_t bytes = 0;
  bool host = false;
  bool pinned = true;
};

// One physical byte range a tensor covers: [offset, offset + bytes) of phys.
struct PhysRange {
  int phys;
  uint64_t offset, bytes;
};

class Model {
 public:
  explicit Model(uint64_t granularity) : granularity_(granularity) {}
  uint64_t granularity() const { return granularity_; }

  std::map<std::string, Tensor> tensors;            // buffers and views, by name
  std::map<std::string, Reservation> reservations;  // by buffer name
  std::vector<Phys> phys;                           // every physical allocation ever made
  std::map<std::string, Alloc> allocs;              // by alloc name (names may be reused)
  std::map<std::string, Snapshot> snapshots;
  std::map<std::string, int> exports;  // handle name -> phys
  int reservation_instances = 0;
  int handles = 0;  // Alloc::handle values given so far

  // Every byte of `t` is reserved and mapped, with at least `need` for `device`.
  bool Accessible(const Tensor& t, int device, Perm need) const;
  // The physical bytes under `t` (every byte mapped), in order.
  std::vector<PhysRange> PhysOf(const Tensor& t) const;
  // Whether two tensors share physical memory (through any mapping).
  bool PhysOverlap(const Tensor& a, const Tensor& b) const;
  // What `t` holds now (every byte mapped).
  Content Read(const Tensor& t) const;
  // Writes `content` (of t.Bytes() bytes) into `t` (every byte mapped).
  void Write(const Tensor& t, const Content& content);
  // A run of whole, adjacent mappings of `buffer`: [offset, offset + size), or nullopt.
  bool IsMappingRun(const std::string& buffer, uint64_t offset, uint64_t size) const;
  // Free granule-aligned gaps of at least `size` in `buffer`'s reservation: their offsets.
  std::vector<uint64_t> FreeOffsets(const std::string& buffer, uint64_t size) const;
  // The mapping that holds byte `at` of `buffer`'s reservation, or nullptr.
  const Mapping* MappingAt(const std::string& buffer, uint64_t at, uint64_t* start) const;
  // The bytes of device memory the scenario's own creates hold on `device` (alive ones).
  uint64_t HeldBytes(int device) const;

 private:
  uint64_t granularity_;
};

}  // namespace vmm::gen
