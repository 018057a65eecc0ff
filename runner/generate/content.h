// What the generator knows about data: the contents of memory as pieces, so that it can state
// what every check must find. This is the generator's own model of the data plane, independent of
// both engines (docs/generator.md): a check's expectation comes from here, and the engines' data
// hashes are compared with each other.
//
// A piece is a run of 32-bit words with one description:
//   kUnset   never written since the memory was created (its contents are the device's business:
//            the generator never reads it, since a GPU's fresh memory is not zero as the twin's is)
//   kSeed    fill values: word i of the piece is FillValue(a, base + i)
//   kConst   every word is `a` (memset, write_value, busy)
//   kOpaque  a computed result (a matmul) named by a token: word i is element base + i of it;
//            two results with the same token are equal, different tokens are taken as different
// Offsets and lengths are bytes, multiples of 4.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace vmm::gen {

enum class PieceKind { kUnset, kSeed, kConst, kOpaque };

struct Piece {
  uint64_t bytes = 0;
  PieceKind kind = PieceKind::kUnset;
  uint64_t a = 0;     // seed, word or token
  uint64_t base = 0;  // kSeed, kOpaque: the element index of the piece's first word
  bool operator==(const Piece&) const = default;
};

// A tensor's contents, first byte first; normalized: no empty piece, and no two neighbours that
// describe one run (a kSeed or kOpaque piece continuing the one before it merges into it).
using Content = std::vector<Piece>;

// Content of `bytes` bytes described by one piece.
Content Uniform(uint64_t bytes, PieceKind kind, uint64_t a);
// Merges neighbours that describe one run; drops empty pieces.
Content Normalize(Content content);
uint64_t Bytes(const Content& content);
bool HasUnset(const Content& content);
// True when every word is `word`.
bool IsConst(const Content& content, uint32_t word);
// A token for a computed result from its inputs' descriptions (order matters).
uint64_t TokenOf(const std::vector<const Content*>& inputs, uint64_t salt);
// The bit of a kOpaque token that marks an elementwise op's result (ElementwiseResult).
inline constexpr uint64_t kElementwiseToken = uint64_t{1} << 63;

// Whether add, scale or axpy may read `content` with the model still naming the result: every
// word written, no piece of one repeated word (a constant input can make a constant result, which
// the model would take for a computed one), and no piece an elementwise op computed (chains of
// them give equal data under different names: axpy(-2, x, x) twice is x again, add(x, x) then
// scale by 0.75 is axpy(0.5, x, x), each rounded once alike).
bool ElementwiseInput(const Content& content);
// What `op` ("add", "scale", "axpy") with factor `alpha` (as written) leaves: a computed result
// named by the op, alpha and its inputs (`b` is not read by scale), marked as an elementwise
// result (kElementwiseToken). fp32 addition commutes, so add's inputs in either order name one
// result.
Content ElementwiseResult(const std::string& op, const std::string& alpha, const Content& a,
                          const Content& b);

// The contents of one physical allocation, as pieces keyed by their first byte. Starts kUnset.
class PhysContent {
 public:
  explicit PhysContent(uint64_t size);
  // Replaces [at, at + Bytes(content)) with `content`.
  void Write(uint64_t at, const Content& content);
  // The (normalized) contents of [at, at + bytes).
  Content Read(uint64_t at, uint64_t bytes) const;

 private:
  // Splits the piece that holds `at` so that a piece starts there (at <= size).
  void SplitAt(uint64_t at);
  uint64_t size_;
  std::map<uint64_t, Piece> pieces_;
};

}  // namespace vmm::gen
