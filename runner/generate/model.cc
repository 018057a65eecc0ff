#include "runner/generate/model.h"

#include <algorithm>

namespace vmm::gen {

const char* PermName(Perm perm) {
  switch (perm) {
    case Perm::kNone:
      return "none";
    case Perm::kRead:
      return "read";
    case Perm::kReadWrite:
      return "read_write";
  }
  return "?";
}

uint64_t Tensor::Elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

const Mapping* Model::MappingAt(const std::string& buffer, uint64_t at, uint64_t* start) const {
  auto r = reservations.find(buffer);
  if (r == reservations.end() || !r->second.reserved) return nullptr;
  auto it = r->second.maps.upper_bound(at);
  if (it == r->second.maps.begin()) return nullptr;
  --it;
  if (at >= it->first + it->second.size) return nullptr;
  if (start != nullptr) *start = it->first;
  return &it->second;
}

bool Model::Accessible(const Tensor& t, int device, Perm need) const {
  auto r = reservations.find(t.buffer);
  if (r == reservations.end() || !r->second.reserved) return false;
  if (t.offset + t.Bytes() > r->second.size) return false;
  uint64_t at = t.offset;
  const uint64_t end = t.offset + t.Bytes();
  while (at < end) {
    uint64_t start = 0;
    const Mapping* m = MappingAt(t.buffer, at, &start);
    if (m == nullptr) return false;
    const Perm have = m->access[device];
    if (have == Perm::kNone || (need == Perm::kReadWrite && have != Perm::kReadWrite)) return false;
    at = start + m->size;
  }
  return true;
}

std::vector<PhysRange> Model::PhysOf(const Tensor& t) const {
  std::vector<PhysRange> out;
  uint64_t at = t.offset;
  const uint64_t end = t.offset + t.Bytes();
  while (at < end) {
    uint64_t start = 0;
    const Mapping* m = MappingAt(t.buffer, at, &start);
    if (m == nullptr) return {};
    const uint64_t stop = std::min(end, start + m->size);
    out.push_back(PhysRange{m->phys, at - start, stop - at});
    at = stop;
  }
  return out;
}

bool Model::PhysOverlap(const Tensor& a, const Tensor& b) const {
  for (const PhysRange& x : PhysOf(a))
    for (const PhysRange& y : PhysOf(b))
      if (x.phys == y.phys && x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes)
        return true;
  return false;
}

Content Model::Read(const Tensor& t) const {
  Content out;
  for (const PhysRange& r : PhysOf(t)) {
    Content part = phys[r.phys].content.Read(r.offset, r.bytes);
    out.insert(out.end(), part.begin(), part.end());
  }
  return Normalize(std::move(out));
}

void Model::Write(const Tensor& t, const Content& content) {
  // Split `content` along the tensor's physical ranges.
  size_t piece = 0;
  uint64_t used = 0;  // bytes of content[piece] already written
  for (const PhysRange& r : PhysOf(t)) {
    Content part;
    uint64_t need = r.bytes;
    while (need > 0 && piece < content.size()) {
      Piece p = content[piece];
      const uint64_t left = p.bytes - used;
      const uint64_t take = std::min(left, need);
      if (p.kind == PieceKind::kSeed || p.kind == PieceKind::kOpaque) p.base += used / 4;
      p.bytes = take;
      part.push_back(p);
      need -= take;
      used += take;
      if (used == content[piece].bytes) {
        ++piece;
        used = 0;
      }
    }
    phys[r.phys].content.Write(r.offset, part);
  }
}

bool Model::IsMappingRun(const std::string& buffer, uint64_t offset, uint64_t size) const {
  auto r = reservations.find(buffer);
  if (r == reservations.end() || !r->second.reserved || size == 0) return false;
  uint64_t at = offset;
  while (at < offset + size) {
    auto it = r->second.maps.find(at);
    if (it == r->second.maps.end()) return false;
    at += it->second.size;
  }
  return at == offset + size;
}

std::vector<uint64_t> Model::FreeOffsets(const std::string& buffer, uint64_t size) const {
  std::vector<uint64_t> out;
  auto r = reservations.find(buffer);
  if (r == reservations.end() || !r->second.reserved) return out;
  for (uint64_t at = 0; at + size <= r->second.size; at += granularity_) {
    bool free = true;
    for (const auto& [offset, m] : r->second.maps)
      if (offset < at + size && at < offset + m.size) free = false;
    if (free) out.push_back(at);
  }
  return out;
}

uint64_t Model::HeldBytes(int device) const {
  uint64_t n = 0;
  for (const Phys& p : phys)
    if (p.alive() && p.location == Location::kDevice && p.device == device) n += p.size;
  return n;
}

}  // namespace vmm::gen
