// Rng: the generator's one source of randomness. SplitMix64, written out here rather than taken
// from <random>, so that a seed gives the same scenario with every compiler and standard library
// (std::uniform_int_distribution's algorithm is not specified).
#pragma once

#include <cstdint>
#include <vector>

namespace vmm::gen {

class Rng {
 public:
  explicit Rng(uint64_t state) : state_(state) {}

  // The starting state for a scenario's seed. SplitMix64's state advances by a constant, so
  // seeding with a linear function of the seed gave seed k+1 the stream of seed k shifted by one
  // draw: every scenario of a run read the same sequence (found in session 12: a draw at the same
  // point of the sequence came out 76 in every scenario that reached it). Mixing the seed first
  // puts each seed's stream at an unrelated place.
  static uint64_t StreamFor(uint64_t seed) { return Rng(seed ^ 0x5EED5EED5EED5EEDull).Next(); }

  uint64_t Next() {
    uint64_t x = (state_ += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
  // Uniform in [0, n) (n > 0; the modulo bias is below 2^-40 for the small n used here).
  uint64_t Below(uint64_t n) { return Next() % n; }
  // Uniform in [lo, hi].
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo + 1)));
  }
  // True with probability percent / 100.
  bool Percent(int percent) { return static_cast<int>(Below(100)) < percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& items) {
    return items[Below(items.size())];
  }

 private:
  uint64_t state_;
};

}  // namespace vmm::gen
