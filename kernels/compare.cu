// Word checks at HBM speed: a[i] against b[i] (check_equal) or against one pattern
// (check_value), in the three steps of check_kernels.h.
//
// The count pass streams both operands once: one warp owns a chunk of kWordChunk words (16 KiB
// per operand) at a time, in a grid-stride loop over chunks; each lane reads 16-byte vectors,
// eight in flight per operand, so a warp-iteration reads 512 contiguous bytes per operand. A
// chunk's mismatch count is one store; the totals are one atomic per warp at the end. The
// datagen hash, when asked, is summed on the way (it is compute-heavier than the compare: one
// multiply round per word), and for every mismatch the difference HashWord(b, i) - HashWord(a, i)
// is summed, from which the caller derives one operand's hash from the other's (datagen.h: the hash
// is a wrapping sum, so hash(b) = hash(a) + that difference).
#include <cstdint>

#include "kernels/check_kernels.h"
#include "kernels/datagen.h"
#include "kernels/launch.cuh"
#include "kernels/reduce.cuh"

namespace {

using vmm::datagen::HashKeyed;
using vmm::datagen::IndexKey;
using vmm::datagen::kIndexKey;
using vmm::kernels::kWordChunk;
using vmm::kernels::PickedChunk;
using vmm::kernels::PickedChunks;
using vmm::kernels::ScanTotals;
using vmm::kernels::WordReport;
using vmm::kernels::detail::kBlockThreads;

constexpr int kWarpsPerBlock = kBlockThreads / 32;
constexpr uint32_t kVectorsPerLane = kWordChunk / 4 / 32;  // 32 uint4 per lane per chunk
constexpr uint32_t kUnroll = 8;                            // uint4 loads in flight per operand
static_assert(kVectorsPerLane % kUnroll == 0);
constexpr uint32_t kCollectPerThread = kWordChunk / kBlockThreads;  // 16
static_assert(kCollectPerThread * kBlockThreads == kWordChunk);

// The reference operand: another buffer, or one pattern.
struct WordsRhs {
  const uint32_t* b;
  static constexpr bool kDelta = true;
  __device__ __forceinline__ uint4 Load4(uint64_t i) const {
    return __ldg(reinterpret_cast<const uint4*>(b + i));
  }
  __device__ __forceinline__ uint32_t Load(uint64_t i) const { return __ldg(b + i); }
};
struct ValueRhs {
  uint32_t value;
  static constexpr bool kDelta = false;
  __device__ __forceinline__ uint4 Load4(uint64_t) const {
    return make_uint4(value, value, value, value);
  }
  __device__ __forceinline__ uint32_t Load(uint64_t) const { return value; }
};

struct LaneSums {
  uint32_t mismatches = 0;
  unsigned long long hash = 0, delta = 0;
};

// One word; `key` is datagen::IndexKey(index).
template <typename Rhs, bool kHash>
__device__ __forceinline__ void Word(uint32_t got, uint32_t want, uint64_t key, LaneSums& s) {
  if (kHash) s.hash += HashKeyed(got, key);
  if (got != want) {
    ++s.mismatches;
    if (Rhs::kDelta) s.delta += HashKeyed(want, key) - HashKeyed(got, key);
  }
}

// Four consecutive words from `index`: one multiplication for their four index keys.
template <typename Rhs, bool kHash>
__device__ __forceinline__ void Words4(uint4 got, uint4 want, uint64_t index, LaneSums& s) {
  const uint64_t key = IndexKey(index);
  Word<Rhs, kHash>(got.x, want.x, key, s);
  Word<Rhs, kHash>(got.y, want.y, key + kIndexKey, s);
  Word<Rhs, kHash>(got.z, want.z, key + 2 * kIndexKey, s);
  Word<Rhs, kHash>(got.w, want.w, key + 3 * kIndexKey, s);
}

// Step 1. `vectors`: a (and b) are 16-byte aligned, so full chunks are read as uint4.
template <typename Rhs, bool kHash>
__global__ void __launch_bounds__(kBlockThreads)
    vmm_word_count(const uint32_t* __restrict__ a, Rhs rhs, uint64_t count, uint64_t index_base,
                   bool vectors, uint32_t* __restrict__ chunk_counts, ScanTotals* totals) {
  const uint64_t num_chunks = (count + kWordChunk - 1) / kWordChunk;
  const uint32_t lane = threadIdx.x % 32;
  const uint64_t warps = static_cast<uint64_t>(gridDim.x) * kWarpsPerBlock;
  uint64_t warp_total = 0;  // the same in every lane
  uint64_t first = ~0ull;   // the warp's first chunk with a mismatch
  LaneSums sums;
  for (uint64_t chunk = (static_cast<uint64_t>(blockIdx.x) * kBlockThreads + threadIdx.x) / 32;
       chunk < num_chunks; chunk += warps) {
    const uint64_t start = chunk * kWordChunk;
    const uint32_t before = sums.mismatches;
    if (vectors && start + kWordChunk <= count) {
      const uint4* va = reinterpret_cast<const uint4*>(a + start);
      for (uint32_t v0 = 0; v0 < kVectorsPerLane; v0 += kUnroll) {
        uint4 got[kUnroll], want[kUnroll];
#pragma unroll
        for (uint32_t u = 0; u < kUnroll; ++u) {
          const uint32_t v = (v0 + u) * 32 + lane;
          got[u] = __ldg(va + v);
          want[u] = rhs.Load4(start + v * 4);
        }
#pragma unroll
        for (uint32_t u = 0; u < kUnroll; ++u) {
          const uint64_t index = index_base + start + ((v0 + u) * 32 + lane) * 4;
          Words4<Rhs, kHash>(got[u], want[u], index, sums);
        }
      }
    } else {
      const uint64_t end = start + kWordChunk < count ? start + kWordChunk : count;
      for (uint64_t i = start + lane; i < end; i += 32)
        Word<Rhs, kHash>(__ldg(a + i), rhs.Load(i), IndexKey(index_base + i), sums);
    }
    const uint32_t in_chunk = vmm::kernels::detail::WarpSum(sums.mismatches - before);
    if (lane == 0) chunk_counts[chunk] = in_chunk;
    if (in_chunk != 0) {
      warp_total += in_chunk;
      if (chunk < first) first = chunk;
    }
  }
  unsigned long long hash = 0, delta = 0;
  if (kHash) hash = vmm::kernels::detail::WarpSum(sums.hash);
  if (Rhs::kDelta) delta = vmm::kernels::detail::WarpSum(sums.delta);
  if (lane == 0) {
    if (warp_total != 0) {
      atomicAdd(&totals->mismatches, static_cast<unsigned long long>(warp_total));
      atomicMax(&totals->first_chunk_inv, ~static_cast<unsigned long long>(first));
    }
    if (kHash) atomicAdd(&totals->hash, hash);
    if (Rhs::kDelta && delta != 0) atomicAdd(&totals->delta, delta);
  }
}

// Step 3: one block per picked chunk. Thread t owns the contiguous run [16 t, +16) of the chunk,
// so an exclusive scan of the per-thread counts gives each thread the output position of its
// first mismatch, and the chunk's mismatches come out in ascending order.
template <typename Rhs>
__global__ void __launch_bounds__(kBlockThreads)
    vmm_word_collect(const uint32_t* __restrict__ a, Rhs rhs, uint64_t count, uint64_t index_base,
                     const PickedChunks* picked, uint32_t max_report, WordReport* report) {
  __shared__ uint32_t warp_sums[vmm::kernels::detail::kWarps];
  if (blockIdx.x >= picked->count) return;  // the whole block: nothing picked for it
  const PickedChunk chunk = picked->chunk[blockIdx.x];
  const uint64_t begin = chunk.chunk * kWordChunk + threadIdx.x * kCollectPerThread;
  uint32_t mine = 0;
  for (uint32_t l = 0; l < kCollectPerThread; ++l) {
    const uint64_t i = begin + l;
    if (i < count && a[i] != rhs.Load(i)) ++mine;
  }
  uint64_t pos = chunk.base + vmm::kernels::detail::BlockExclusiveScan(mine, warp_sums);
  if (mine == 0) return;
  for (uint32_t l = 0; l < kCollectPerThread && pos < max_report; ++l) {
    const uint64_t i = begin + l;
    if (i >= count) break;
    const uint32_t got = a[i], want = rhs.Load(i);
    if (got == want) continue;
    report->index[pos] = index_base + i;
    report->want[pos] = want;
    report->got[pos] = got;
    ++pos;
  }
}

bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

uint32_t CountBlocks(uint64_t count, uint32_t blocks) {
  const uint64_t chunks = vmm::kernels::WordChunkCount(count);
  const uint64_t wanted = (chunks + kWarpsPerBlock - 1) / kWarpsPerBlock;  // a chunk per warp
  const uint64_t cap = blocks != 0 ? blocks : 1024;
  return static_cast<uint32_t>(wanted < cap ? (wanted == 0 ? 1 : wanted) : cap);
}

template <typename Rhs, bool kHash>
int LaunchCount(const uint32_t* a, Rhs rhs, uint64_t count, uint64_t index_base, bool vectors,
                uint32_t* chunk_counts, ScanTotals* totals, uint32_t blocks, cudaStream_t stream) {
  vmm::kernels::LaunchConfig cfg;
  cfg.grid = {CountBlocks(count, blocks), 1, 1};
  cfg.block = {kBlockThreads, 1, 1};
  void* args[] = {&a, &rhs, &count, &index_base, &vectors, &chunk_counts, &totals};
  return vmm::kernels::detail::Launch(reinterpret_cast<const void*>(&vmm_word_count<Rhs, kHash>),
                                      cfg, args, stream);
}

template <typename Rhs>
int LaunchCollect(const uint32_t* a, Rhs rhs, uint64_t count, uint64_t index_base,
                  const PickedChunks* picked, uint32_t max_report, WordReport* report,
                  cudaStream_t stream) {
  if (max_report > vmm::kernels::kMaxCheckReport) max_report = vmm::kernels::kMaxCheckReport;
  if (max_report == 0 || count == 0) return static_cast<int>(cudaSuccess);
  vmm::kernels::LaunchConfig cfg;
  cfg.grid = {max_report, 1, 1};  // at most one picked chunk per reported mismatch
  cfg.block = {kBlockThreads, 1, 1};
  void* args[] = {&a, &rhs, &count, &index_base, &picked, &max_report, &report};
  return vmm::kernels::detail::Launch(reinterpret_cast<const void*>(&vmm_word_collect<Rhs>), cfg,
                                      args, stream);
}

}  // namespace

namespace vmm::kernels {

uint64_t WordChunkCount(uint64_t count) { return (count + kWordChunk - 1) / kWordChunk; }

int LaunchCompareCount(const uint32_t* a, const uint32_t* b, uint64_t count, uint64_t index_base,
                       bool hash_a, uint32_t* chunk_counts, ScanTotals* totals, uint32_t blocks,
                       CUstream_st* stream) {
  if (count == 0) return static_cast<int>(cudaSuccess);
  const bool vectors = Aligned16(a) && Aligned16(b);
  const WordsRhs rhs{b};
  return hash_a ? LaunchCount<WordsRhs, true>(a, rhs, count, index_base, vectors, chunk_counts,
                                              totals, blocks, stream)
                : LaunchCount<WordsRhs, false>(a, rhs, count, index_base, vectors, chunk_counts,
                                               totals, blocks, stream);
}

int LaunchCompareCollect(const uint32_t* a, const uint32_t* b, uint64_t count, uint64_t index_base,
                         const PickedChunks* picked, uint32_t max_report, WordReport* report,
                         CUstream_st* stream) {
  return LaunchCollect(a, WordsRhs{b}, count, index_base, picked, max_report, report, stream);
}

int LaunchValueCount(const uint32_t* a, uint32_t pattern, uint64_t count, uint64_t index_base,
                     uint32_t* chunk_counts, ScanTotals* totals, uint32_t blocks,
                     CUstream_st* stream) {
  if (count == 0) return static_cast<int>(cudaSuccess);
  return LaunchCount<ValueRhs, true>(a, ValueRhs{pattern}, count, index_base, Aligned16(a),
                                     chunk_counts, totals, blocks, stream);
}

int LaunchValueCollect(const uint32_t* a, uint32_t pattern, uint64_t count, uint64_t index_base,
                       const PickedChunks* picked, uint32_t max_report, WordReport* report,
                       CUstream_st* stream) {
  return LaunchCollect(a, ValueRhs{pattern}, count, index_base, picked, max_report, report, stream);
}

}  // namespace vmm::kernels
