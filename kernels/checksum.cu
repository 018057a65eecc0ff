// vmm_checksum_u32: the datagen buffer hash, sum (mod 2^64) of HashWord(src[i], i);
// vmm_copy_checksum_u32: the same hash of the words while it copies them to dst.
#include <cstdint>

#include "kernels/datagen.h"
#include "kernels/kernels.h"
#include "kernels/launch.cuh"
#include "kernels/launch_config.h"
#include "kernels/reduce.cuh"

namespace {

using vmm::kernels::detail::kBlockThreads;

// Grid-stride partial sums, reduced per block, added to *hash with one 64-bit atomic per block.
// Unsigned addition wraps mod 2^64 and is associative and commutative, so any order of the
// additions gives the same result as the host's sequential loop. A 16-byte aligned source is read
// as uint4 vectors, kLoads of them in flight per thread (the scalar loop reached about a third of
// HBM bandwidth: the snapshot's hash took longer than its copy); the words past the last whole
// vector, and an unaligned source, are read one by one. The copying kernel is the same loop with
// a store after each load (vectors when source and destination are both 16-byte aligned): the
// snapshot's copy and hash in one pass over the source, as many bytes moved as the copy alone.
constexpr uint32_t kLoads = 4;

// Four consecutive words from `index`: one multiplication for their four index keys.
__device__ __forceinline__ unsigned long long HashWords4(uint4 w, uint64_t index) {
  using vmm::datagen::HashKeyed;
  using vmm::datagen::kIndexKey;
  const uint64_t key = vmm::datagen::IndexKey(index);
  return HashKeyed(w.x, key) + HashKeyed(w.y, key + kIndexKey) +
         HashKeyed(w.z, key + 2 * kIndexKey) + HashKeyed(w.w, key + 3 * kIndexKey);
}

template <bool kCopy>
__device__ __forceinline__ void ChecksumWords(const uint32_t* src, uint32_t* dst, uint64_t count,
                                              unsigned long long* hash) {
  __shared__ unsigned long long warp_sums[vmm::kernels::detail::kWarps];
  unsigned long long sum = 0;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  const uint64_t first = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  uint64_t scalar_from = 0;
  const bool aligned = reinterpret_cast<uintptr_t>(src) % 16 == 0 &&
                       (!kCopy || reinterpret_cast<uintptr_t>(dst) % 16 == 0);
  if (aligned) {
    const uint4* vectors = reinterpret_cast<const uint4*>(src);
    uint4* out = reinterpret_cast<uint4*>(dst);
    const uint64_t num_vectors = count / 4;
    uint64_t v = first;
    for (; v + (kLoads - 1) * stride < num_vectors; v += kLoads * stride) {
      uint4 w[kLoads];
#pragma unroll
      for (uint32_t u = 0; u < kLoads; ++u) w[u] = __ldg(vectors + v + u * stride);
#pragma unroll
      for (uint32_t u = 0; u < kLoads; ++u) {
        if constexpr (kCopy) out[v + u * stride] = w[u];
        sum += HashWords4(w[u], (v + u * stride) * 4);
      }
    }
    for (; v < num_vectors; v += stride) {
      const uint4 w = __ldg(vectors + v);
      if constexpr (kCopy) out[v] = w;
      sum += HashWords4(w, v * 4);
    }
    scalar_from = num_vectors * 4;
  }
  for (uint64_t i = scalar_from + first; i < count; i += stride) {
    const uint32_t w = src[i];
    if constexpr (kCopy) dst[i] = w;
    sum += vmm::datagen::HashWord(w, i);
  }
  sum = vmm::kernels::detail::BlockSum(sum, warp_sums);
  if (threadIdx.x == 0 && sum != 0) atomicAdd(hash, sum);
}

__global__ void __launch_bounds__(kBlockThreads)
    vmm_checksum_u32(const uint32_t* src, uint64_t count, unsigned long long* hash) {
  ChecksumWords<false>(src, nullptr, count, hash);
}

__global__ void __launch_bounds__(kBlockThreads)
    vmm_copy_checksum_u32(const uint32_t* src, uint32_t* dst, uint64_t count,
                          unsigned long long* hash) {
  ChecksumWords<true>(src, dst, count, hash);
}

}  // namespace

namespace vmm::kernels {

int LaunchChecksum(const uint32_t* src, uint64_t count, uint64_t* hash, CUstream_st* stream) {
  static_assert(sizeof(uint64_t) == sizeof(unsigned long long));
  cudaError_t err = cudaMemsetAsync(hash, 0, sizeof(uint64_t), stream);
  if (err != cudaSuccess) return static_cast<int>(err);
  if (count == 0) return static_cast<int>(cudaSuccess);
  LaunchConfig cfg = FillLaunch(count);  // same grid-stride geometry as fill
  static_assert(kFillThreads == kBlockThreads, "BlockSum assumes kBlockThreads threads");
  auto* out = reinterpret_cast<unsigned long long*>(hash);
  void* args[] = {&src, &count, &out};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_checksum_u32), cfg, args, stream);
}

int LaunchCopyChecksum(const uint32_t* src, uint32_t* dst, uint64_t count, uint64_t* hash,
                       CUstream_st* stream) {
  cudaError_t err = cudaMemsetAsync(hash, 0, sizeof(uint64_t), stream);
  if (err != cudaSuccess) return static_cast<int>(err);
  if (count == 0) return static_cast<int>(cudaSuccess);
  LaunchConfig cfg = FillLaunch(count);
  auto* out = reinterpret_cast<unsigned long long*>(hash);
  void* args[] = {&src, &dst, &count, &out};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_copy_checksum_u32), cfg, args, stream);
}

}  // namespace vmm::kernels
