#include "runner/generate/content.h"

#include <utility>

namespace vmm::gen {
namespace {

bool Continues(const Piece& before, const Piece& next) {
  if (before.kind != next.kind || before.a != next.a) return false;
  switch (next.kind) {
    case PieceKind::kUnset:
    case PieceKind::kConst:
      return true;
    case PieceKind::kSeed:
    case PieceKind::kOpaque:
      return next.base == before.base + before.bytes / 4;
  }
  return false;
}

// The part of `p` that starts `skip` bytes into it and is `bytes` long.
Piece Slice(const Piece& p, uint64_t skip, uint64_t bytes) {
  Piece out = p;
  out.bytes = bytes;
  if (p.kind == PieceKind::kSeed || p.kind == PieceKind::kOpaque) out.base = p.base + skip / 4;
  return out;
}

uint64_t MixIn(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

}  // namespace

Content Uniform(uint64_t bytes, PieceKind kind, uint64_t a) {
  return bytes == 0 ? Content{} : Content{Piece{bytes, kind, a, 0}};
}

Content Normalize(Content content) {
  Content out;
  for (const Piece& p : content) {
    if (p.bytes == 0) continue;
    if (!out.empty() && Continues(out.back(), p)) {
      out.back().bytes += p.bytes;
    } else {
      out.push_back(p);
    }
  }
  return out;
}

uint64_t Bytes(const Content& content) {
  uint64_t n = 0;
  for (const Piece& p : content) n += p.bytes;
  return n;
}

bool HasUnset(const Content& content) {
  for (const Piece& p : content)
    if (p.kind == PieceKind::kUnset) return true;
  return false;
}

bool IsConst(const Content& content, uint32_t word) {
  for (const Piece& p : content)
    if (p.kind != PieceKind::kConst || p.a != word) return false;
  return !content.empty();
}

uint64_t TokenOf(const std::vector<const Content*>& inputs, uint64_t salt) {
  uint64_t h = MixIn(0x6a09e667f3bcc909ull, salt);
  for (const Content* c : inputs) {
    h = MixIn(h, c->size());
    for (const Piece& p : *c) {
      h = MixIn(h, p.bytes);
      h = MixIn(h, static_cast<uint64_t>(p.kind));
      h = MixIn(h, p.a);
      h = MixIn(h, p.base);
    }
  }
  return h;
}

bool ElementwiseInput(const Content& content) {
  if (content.empty()) return false;
  for (const Piece& p : content) {
    if (p.kind == PieceKind::kUnset || p.kind == PieceKind::kConst) return false;
    if (p.kind == PieceKind::kOpaque && (p.a & kElementwiseToken) != 0) return false;
  }
  return true;
}

Content ElementwiseResult(const std::string& op, const std::string& alpha, const Content& a,
                          const Content& b) {
  uint64_t salt = 0xcbf29ce484222325ull;  // FNV-1a of "op alpha": the same on every machine
  for (const char ch : op + " " + alpha)
    salt = (salt ^ static_cast<unsigned char>(ch)) * 0x100000001b3ull;
  std::vector<const Content*> inputs = {&a};
  if (op != "scale") inputs.push_back(&b);
  if (op == "add" && TokenOf({&b}, 0) < TokenOf({&a}, 0)) std::swap(inputs[0], inputs[1]);
  return Uniform(Bytes(a), PieceKind::kOpaque, TokenOf(inputs, salt) | kElementwiseToken);
}

PhysContent::PhysContent(uint64_t size) : size_(size) {
  if (size > 0) pieces_[0] = Piece{size, PieceKind::kUnset, 0, 0};
}

void PhysContent::SplitAt(uint64_t at) {
  if (at >= size_) return;
  auto it = pieces_.upper_bound(at);
  --it;  // the piece that holds `at`
  if (it->first == at) return;
  const uint64_t skip = at - it->first;
  const Piece whole = it->second;
  it->second = Slice(whole, 0, skip);
  pieces_[at] = Slice(whole, skip, whole.bytes - skip);
}

void PhysContent::Write(uint64_t at, const Content& content) {
  const uint64_t end = at + Bytes(content);
  SplitAt(at);
  SplitAt(end);
  pieces_.erase(pieces_.lower_bound(at), pieces_.lower_bound(end));
  uint64_t pos = at;
  for (const Piece& p : content) {
    pieces_[pos] = p;
    pos += p.bytes;
  }
}

Content PhysContent::Read(uint64_t at, uint64_t bytes) const {
  Content out;
  const uint64_t end = at + bytes;
  auto it = pieces_.upper_bound(at);
  --it;
  for (; it != pieces_.end() && it->first < end; ++it) {
    const uint64_t lo = it->first > at ? it->first : at;
    const uint64_t piece_end = it->first + it->second.bytes;
    const uint64_t hi = piece_end < end ? piece_end : end;
    out.push_back(Slice(it->second, lo - it->first, hi - lo));
  }
  return Normalize(std::move(out));
}

}  // namespace vmm::gen
