// Deterministic test data and buffer hashing, shared bit for bit by the host backend (g++) and the
// CUDA kernels (nvcc). Everything here is integer arithmetic plus exact float conversions, so the
// host and the device produce identical bits for the same (seed, index).
//
// Contract:
//   FillValue(seed, i)  = a float in [-1, 1), exactly k / 2^23 for an integer k in [-2^23, 2^23).
//   HashWord(word, i)   = a 64-bit mix of one 32-bit element and its index (hash scheme 2, below).
//   The hash of a buffer of n 32-bit words is the wrapping sum (mod 2^64) of HashWord(w[i], i):
//   order-independent, so a device reduction in any order gives the same value.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define VMM_HD __host__ __device__ __forceinline__
#else
#define VMM_HD inline
#endif

namespace vmm::datagen {

// SplitMix64 finaliser: a bijective 64-bit mixer (Steele, Lea, Flood 2014).
VMM_HD uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Counter-based generator: the value of element `index` of a buffer filled with `seed`.
VMM_HD float FillValue(uint64_t seed, uint64_t index) {
  uint64_t bits = Mix64(Mix64(seed) ^ index);
  int32_t k = static_cast<int32_t>(bits >> 40) - (1 << 23);  // uniform in [-2^23, 2^23)
  return static_cast<float>(k) * (1.0f / 8388608.0f);        // exact: k / 2^23
}

// The buffer hash's scheme, written in every report (`data_hash_scheme`): hashes of different
// schemes are not comparable, and `vmm-run diff` says so instead of comparing them.
//   1 (reports before 2026-12-02, which do not name it): Mix64(Mix64(i) + word).
//   2: Round(i * kIndexKey + word), Round being one xor-shift / multiply / xor-shift round
//      (Jon Maiga's mx3 round: x ^= x >> 32, x *= C, x ^= x >> 29). Two 64-bit multiplications
//      per word instead of four, and the kernels take one index key for four words (i * kIndexKey
//      is one addition from the previous index's), about 1.25 a word: the GPU's hash was bound by
//      its multiplications (a 4 GiB snapshot's one-pass copy + hash at 0.8 of the raw copy,
//      check_value at 1.4 TB/s). Each step of the round is a bijection, so for a fixed index the
//      hash is a bijection of the word: any one changed word changes the buffer's hash. The odd
//      multiplier spreads the index over all 64 bits.
inline constexpr int kHashScheme = 2;
inline constexpr uint64_t kIndexKey = 0xd1b54a32d192ed03ull;         // odd
inline constexpr uint64_t kRoundMultiplier = 0xbea225f9eb34556dull;  // odd (mx3's)

// The index's part of HashWord; IndexKey(i + 1) == IndexKey(i) + kIndexKey (mod 2^64).
VMM_HD uint64_t IndexKey(uint64_t index) { return index * kIndexKey; }
// HashWord with the index's part already computed: HashKeyed(word, IndexKey(i)) == HashWord(word,
// i).
VMM_HD uint64_t HashKeyed(uint32_t word, uint64_t key) {
  uint64_t x = key + word;
  x ^= x >> 32;
  x *= kRoundMultiplier;
  return x ^ (x >> 29);
}
VMM_HD uint64_t HashWord(uint32_t word, uint64_t index) { return HashKeyed(word, IndexKey(index)); }

}  // namespace vmm::datagen
