#include "runner/plan/reservation_state.h"

#include <algorithm>

#include "runner/base/format.h"

namespace vmm {

std::string FormatRange(const ByteRange& r) {
  std::string out = "[";
  out += r.begin == 0 ? std::string("0") : FormatBytes(r.begin);
  out += ", ";
  out += FormatBytes(r.end);
  out += ")";
  return out;
}

void ReservationState::Reserve(uint64_t size) {
  reserved_ = true;
  size_ = size;
  mappings_.clear();
  access_.clear();
}

void ReservationState::Free() {
  reserved_ = false;
  size_ = 0;
  mappings_.clear();
  access_.clear();
}

const MappingRecord* ReservationState::FirstOverlap(const ByteRange& r) const {
  for (const MappingRecord& m : mappings_)
    if (m.range.Overlaps(r)) return &m;
  return nullptr;
}

const MappingRecord* ReservationState::FirstCut(const ByteRange& r) const {
  for (const MappingRecord& m : mappings_)
    if (m.range.Overlaps(r) && (m.range.begin < r.begin || m.range.end > r.end)) return &m;
  return nullptr;
}

std::optional<ByteRange> ReservationState::FirstUnmapped(const ByteRange& r) const {
  uint64_t at = r.begin;
  for (const MappingRecord& m : mappings_) {
    if (m.range.end <= at) continue;
    if (m.range.begin >= r.end) break;
    if (m.range.begin > at) return ByteRange{at, m.range.begin};
    at = m.range.end;
    if (at >= r.end) return std::nullopt;
  }
  if (at < r.end) return ByteRange{at, r.end};
  return std::nullopt;
}

void ReservationState::AddMapping(MappingRecord mapping) {
  auto pos = std::lower_bound(
      mappings_.begin(), mappings_.end(), mapping.range.begin,
      [](const MappingRecord& m, uint64_t begin) { return m.range.begin < begin; });
  mappings_.insert(pos, std::move(mapping));
}

void ReservationState::RemoveMappings(const ByteRange& r) {
  std::erase_if(mappings_, [&](const MappingRecord& m) {
    return m.range.begin >= r.begin && m.range.end <= r.end;
  });
  for (size_t device = 0; device < access_.size(); ++device) {
    SetAccess(r, static_cast<int>(device), Access::kNone);
    std::erase_if(access_[device], [&](const AccessRun& a) {
      return a.range.begin >= r.begin && a.range.end <= r.end;
    });
  }
}

void ReservationState::SetAccess(const ByteRange& r, int device, Access access) {
  if (access_.size() <= static_cast<size_t>(device)) access_.resize(device + 1);
  std::vector<AccessRun>& runs = access_[device];
  std::vector<AccessRun> next;
  next.reserve(runs.size() + 2);
  bool inserted = false;
  for (const AccessRun& run : runs) {
    if (!run.range.Overlaps(r)) {
      if (!inserted && run.range.begin >= r.end) {
        next.push_back({r, access});
        inserted = true;
      }
      next.push_back(run);
      continue;
    }
    if (run.range.begin < r.begin) next.push_back({{run.range.begin, r.begin}, run.access});
    if (!inserted) {
      next.push_back({r, access});
      inserted = true;
    }
    if (run.range.end > r.end) next.push_back({{r.end, run.range.end}, run.access});
  }
  if (!inserted) next.push_back({r, access});
  runs = std::move(next);
}

std::vector<std::pair<ByteRange, Access>> ReservationState::AccessRuns(const ByteRange& r,
                                                                       int device) const {
  std::vector<std::pair<ByteRange, Access>> out;
  if (device < 0 || static_cast<size_t>(device) >= access_.size()) return out;
  for (const AccessRun& run : access_[device]) {
    if (!run.range.Overlaps(r)) continue;
    out.emplace_back(ByteRange{std::max(run.range.begin, r.begin), std::min(run.range.end, r.end)},
                     run.access);
  }
  return out;
}

AccessProblem ReservationState::FirstProblem(const ByteRange& r, Access needed, int device) const {
  if (std::optional<ByteRange> hole = FirstUnmapped(r)) {
    return (hole->begin == r.begin && hole->end == r.end) ? AccessProblem::kNotMapped
                                                          : AccessProblem::kPartlyMapped;
  }
  if (access_.size() <= static_cast<size_t>(device)) return AccessProblem::kNeverSet;
  uint64_t at = r.begin;
  for (const AccessRun& run : access_[device]) {
    if (run.range.end <= at) continue;
    if (run.range.begin > at) return AccessProblem::kNeverSet;
    if (run.access == Access::kNone) return AccessProblem::kAccessNone;
    if (needed == Access::kReadWrite && run.access == Access::kRead)
      return AccessProblem::kReadOnly;
    at = run.range.end;
    if (at >= r.end) return AccessProblem::kNone;
  }
  return at < r.end ? AccessProblem::kNeverSet : AccessProblem::kNone;
}

}  // namespace vmm
