// Private to kernels/*.cu: block-wide reductions and scans for 1-D blocks of kBlockThreads threads.
#pragma once

#include <cstdint>

namespace vmm::kernels::detail {

inline constexpr int kBlockThreads = 256;
inline constexpr int kWarps = kBlockThreads / 32;
inline constexpr unsigned kFullMask = 0xffffffffu;

// Sum of `value` over the block; valid in thread 0 only. `warp_sums` is shared scratch of kWarps
// elements. Contains __syncthreads: every thread of the block must call it.
template <typename T>
__device__ __forceinline__ T BlockSum(T value, T* warp_sums) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_down_sync(kFullMask, value, offset);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  T total = 0;
  if (threadIdx.x == 0) {
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += warp_sums[w];
  }
  return total;
}

// Exclusive prefix sum of `value` over the block in thread order. `warp_sums` is shared scratch of
// kWarps elements. Contains __syncthreads: every thread of the block must call it.
__device__ __forceinline__ uint32_t BlockExclusiveScan(uint32_t value, uint32_t* warp_sums) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  uint32_t inclusive = value;
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const uint32_t up = __shfl_up_sync(kFullMask, inclusive, offset);
    if (lane >= offset) inclusive += up;
  }
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  uint32_t warp_base = 0;
  for (int w = 0; w < warp; ++w) warp_base += warp_sums[w];
  return warp_base + inclusive - value;
}

}  // namespace vmm::kernels::detail
