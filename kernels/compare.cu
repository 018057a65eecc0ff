// Bitwise comparison of two buffers of 32-bit words: mismatch count and the first mismatching
// indices in ascending order (see kernels.h for the two-pass protocol).
#include <cstdint>

#include "kernels/kernels.h"
#include "kernels/launch.cuh"
#include "kernels/launch_config.h"
#include "kernels/reduce.cuh"

namespace {

using vmm::kernels::kCompareChunk;
using vmm::kernels::detail::kBlockThreads;
constexpr uint32_t kPerThread = kCompareChunk / kBlockThreads;  // 16
static_assert(kPerThread * kBlockThreads == kCompareChunk);

// One block per chunk; coalesced reads (element chunk_start + l * 256 + thread).
__global__ void __launch_bounds__(kBlockThreads)
    vmm_compare_count_u32(const uint32_t* a, const uint32_t* b, uint64_t count,
                          uint32_t* chunk_counts) {
  __shared__ uint32_t warp_sums[vmm::kernels::detail::kWarps];
  const uint64_t start = static_cast<uint64_t>(blockIdx.x) * kCompareChunk;
  uint32_t mismatches = 0;
#pragma unroll
  for (uint32_t l = 0; l < kPerThread; ++l) {
    const uint64_t i = start + l * kBlockThreads + threadIdx.x;
    if (i < count && a[i] != b[i]) ++mismatches;
  }
  mismatches = vmm::kernels::detail::BlockSum(mismatches, warp_sums);
  if (threadIdx.x == 0) chunk_counts[blockIdx.x] = mismatches;
}

// One block per picked chunk. Thread t owns the contiguous run [start + 16 t, +16), so an exclusive
// scan of the per-thread counts gives each thread the output position of its first mismatch, and
// the chunk's indices come out in ascending order.
__global__ void __launch_bounds__(kBlockThreads)
    vmm_compare_collect_u32(const uint32_t* a, const uint32_t* b, uint64_t count,
                            const vmm::kernels::CompareChunk* chunks, uint64_t* indices,
                            uint32_t max_report) {
  __shared__ uint32_t warp_sums[vmm::kernels::detail::kWarps];
  const vmm::kernels::CompareChunk chunk = chunks[blockIdx.x];
  const uint64_t begin =
      chunk.chunk * kCompareChunk + static_cast<uint64_t>(threadIdx.x) * kPerThread;
  uint32_t mine = 0;
  for (uint32_t l = 0; l < kPerThread; ++l) {
    const uint64_t i = begin + l;
    if (i < count && a[i] != b[i]) ++mine;
  }
  uint64_t pos = chunk.base + vmm::kernels::detail::BlockExclusiveScan(mine, warp_sums);
  if (mine == 0) return;
  for (uint32_t l = 0; l < kPerThread && pos < max_report; ++l) {
    const uint64_t i = begin + l;
    if (i < count && a[i] != b[i]) indices[pos++] = i;
  }
}

}  // namespace

namespace vmm::kernels {

uint64_t CompareChunkCount(uint64_t count) { return (count + kCompareChunk - 1) / kCompareChunk; }

int LaunchCompareCount(const uint32_t* a, const uint32_t* b, uint64_t count, uint32_t* chunk_counts,
                       CUstream_st* stream) {
  const uint64_t chunks = CompareChunkCount(count);
  if (chunks == 0) return static_cast<int>(cudaSuccess);
  if (chunks > 0x7fffffffull) return static_cast<int>(cudaErrorInvalidValue);  // grid.x limit
  LaunchConfig cfg;
  cfg.grid = {static_cast<uint32_t>(chunks), 1, 1};
  cfg.block = {kBlockThreads, 1, 1};
  void* args[] = {&a, &b, &count, &chunk_counts};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_compare_count_u32), cfg, args, stream);
}

int LaunchCompareCollect(const uint32_t* a, const uint32_t* b, uint64_t count,
                         const CompareChunk* chunks, uint32_t num_chunks, uint64_t* indices,
                         uint32_t max_report, CUstream_st* stream) {
  if (num_chunks == 0 || max_report == 0) return static_cast<int>(cudaSuccess);
  if (num_chunks > 0x7fffffffu) return static_cast<int>(cudaErrorInvalidValue);
  LaunchConfig cfg;
  cfg.grid = {num_chunks, 1, 1};
  cfg.block = {kBlockThreads, 1, 1};
  void* args[] = {&a, &b, &count, &chunks, &indices, &max_report};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_compare_collect_u32), cfg, args, stream);
}

}  // namespace vmm::kernels
