// Step 2 of every data check (check_kernels.h): from the per-chunk mismatch counts, the chunks
// that hold the first max_report mismatches, each with the output position of its first one.
#include <cstdint>

#include "kernels/check_kernels.h"
#include "kernels/launch.cuh"
#include "kernels/reduce.cuh"

namespace {

using vmm::kernels::PickedChunks;
using vmm::kernels::ScanTotals;

constexpr int kPickThreads = 1024;

// One block walks windows of kPickThreads counts from the first chunk with a mismatch and stops
// once it has passed max_report mismatches (or all of them): it reads few counts unless the first
// mismatches are spread far apart. A chunk is taken when its first mismatch's position is below
// the wanted number; positions strictly increase, so at most max_report chunks are taken.
__global__ void __launch_bounds__(kPickThreads)
    vmm_pick_chunks(const uint32_t* __restrict__ counts, uint64_t num_chunks,
                    const ScanTotals* totals, uint32_t max_report, PickedChunks* picked) {
  __shared__ uint32_t scratch[kPickThreads / 32 + 1];
  const uint64_t total = totals->mismatches;
  const uint64_t want = total < max_report ? total : max_report;
  uint32_t taken = 0;  // the same in every thread
  uint64_t base = 0;   // mismatches in the windows before this one
  if (want > 0) {
    for (uint64_t w = ~totals->first_chunk_inv; w < num_chunks && base < want; w += kPickThreads) {
      const uint64_t c = w + threadIdx.x;
      const uint32_t n = c < num_chunks ? counts[c] : 0;
      uint32_t window = 0, takes = 0;
      const uint32_t before = vmm::kernels::detail::BlockScan<kPickThreads>(n, scratch, &window);
      const bool take = n != 0 && base + before < want;
      const uint32_t slot =
          vmm::kernels::detail::BlockScan<kPickThreads>(take ? 1u : 0u, scratch, &takes);
      if (take) picked->chunk[taken + slot] = {c, base + before};
      taken += takes;
      base += window;
    }
  }
  if (threadIdx.x == 0) picked->count = taken;
}

}  // namespace

namespace vmm::kernels {

int LaunchPickChunks(const uint32_t* chunk_counts, uint64_t num_chunks, const ScanTotals* totals,
                     uint32_t max_report, PickedChunks* picked, CUstream_st* stream) {
  if (max_report > kMaxCheckReport) max_report = kMaxCheckReport;
  LaunchConfig cfg;
  cfg.grid = {1, 1, 1};
  cfg.block = {kPickThreads, 1, 1};
  void* args[] = {&chunk_counts, &num_chunks, &totals, &max_report, &picked};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_pick_chunks), cfg, args, stream);
}

}  // namespace vmm::kernels
