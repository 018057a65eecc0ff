// ReservationState: what BuildPlan knows about one buffer's reserved address range while it
// simulates a scenario: is it reserved, which sub-ranges are mapped (by which step), and what
// access each byte has. Offsets are relative to the start of the reservation.
//
// The CUDA rules it helps BuildPlan enforce (cuMemMap/cuMemSetAccess/cuMemUnmap; the whole table,
// with what the H200 driver returns for each, is runner/vocab/vmm_rules.h):
//   - mappings never overlap; a new mapping has NO access until SetAccess covers it;
//   - access is set on fully mapped ranges of whole mappings only (several at once are fine; part
//     of one is CUDA_ERROR_INVALID_VALUE on the H200): BuildPlan refuses a range that FirstUnmapped
//     or FirstCut finds fault with before calling SetAccess, which itself tracks access per byte;
//   - unmap works on whole mappings only (a range that cuts one is refused), and clears access;
//   - access is per device: a set_access for device 1 leaves device 0's access as it was.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/vocab/access.h"

namespace vmm {

struct ByteRange {
  uint64_t begin = 0;
  uint64_t end = 0;  // exclusive
  bool Overlaps(const ByteRange& o) const { return begin < o.end && o.begin < end; }
};

struct MappingRecord {
  ByteRange range;
  int alloc_slot = -1;
  std::string step_label;  // the map step that made it, for messages
  int line = 0;
};

// Why a range cannot be used with some access (see FirstProblem).
enum class AccessProblem { kNone, kNotMapped, kPartlyMapped, kNeverSet, kAccessNone, kReadOnly };

class ReservationState {
 public:
  bool reserved() const { return reserved_; }
  uint64_t size() const { return size_; }

  void Reserve(uint64_t size);
  // Forgets the reservation and everything mapped in it.
  void Free();

  const std::vector<MappingRecord>& mappings() const { return mappings_; }
  // The first live mapping overlapping `r`, or nullptr.
  const MappingRecord* FirstOverlap(const ByteRange& r) const;
  // The first mapping that overlaps `r` but is not inside it (unmapping `r` would cut it).
  const MappingRecord* FirstCut(const ByteRange& r) const;
  // The first maximal sub-range of `r` that no mapping covers, if any.
  std::optional<ByteRange> FirstUnmapped(const ByteRange& r) const;

  // Adds a mapping (the caller checked it is inside and overlaps nothing). It has no access.
  void AddMapping(MappingRecord mapping);
  // Removes the mappings inside `r` and every device's access to them.
  void RemoveMappings(const ByteRange& r);
  // Sets the access of scenario device `device` (0 ..) over `r`.
  void SetAccess(const ByteRange& r, int device, Access access);

  // Whether every byte of `r` is mapped with at least `needed` access for `device`; otherwise the
  // problem of the first offending byte (kPartlyMapped: some of `r` is mapped, some not).
  AccessProblem FirstProblem(const ByteRange& r, Access needed, int device) const;

  // The devices access has ever been set for (0 .. devices() - 1).
  int devices() const { return static_cast<int>(access_.size()); }
  // Device `device`'s access over `r`, as runs clipped to `r`: bytes whose access was never set
  // are in no run.
  std::vector<std::pair<ByteRange, Access>> AccessRuns(const ByteRange& r, int device) const;

 private:
  struct AccessRun {
    ByteRange range;
    Access access;
  };
  bool reserved_ = false;
  uint64_t size_ = 0;
  std::vector<MappingRecord> mappings_;  // sorted by range.begin, disjoint
  // By device: runs sorted and disjoint; bytes without a run have never had access set.
  std::vector<std::vector<AccessRun>> access_;
};

// "[0, 2 MiB)".
std::string FormatRange(const ByteRange& r);

}  // namespace vmm
