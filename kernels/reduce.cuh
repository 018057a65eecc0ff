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

// Sum of `value` over the warp, in every lane. Every lane of the warp must call it.
template <typename T>
__device__ __forceinline__ T WarpSum(T value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(kFullMask, value, offset);
  return value;
}

// Maximum of `value` over the warp, in every lane. Every lane of the warp must call it.
__device__ __forceinline__ unsigned long long WarpMax(unsigned long long value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    const unsigned long long other = __shfl_xor_sync(kFullMask, value, offset);
    value = other > value ? other : value;
  }
  return value;
}

// Exclusive prefix sum of `value` over a block of kThreads threads (a multiple of 32, at most
// 1024), in thread order; *total gets the block's sum in every thread. `scratch` is shared memory
// of kThreads / 32 + 1 elements. Every thread must call it; it may be called again at once.
template <int kThreads>
__device__ __forceinline__ uint32_t BlockScan(uint32_t value, uint32_t* scratch, uint32_t* total) {
  constexpr int kScanWarps = kThreads / 32;
  static_assert(kThreads % 32 == 0 && kScanWarps <= 32, "one warp scans the warp totals");
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  uint32_t inclusive = value;
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const uint32_t up = __shfl_up_sync(kFullMask, inclusive, offset);
    if (lane >= offset) inclusive += up;
  }
  if (lane == 31) scratch[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const uint32_t mine = lane < kScanWarps ? scratch[lane] : 0;
    uint32_t running = mine;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const uint32_t up = __shfl_up_sync(kFullMask, running, offset);
      if (lane >= offset) running += up;
    }
    if (lane < kScanWarps) scratch[lane] = running - mine;  // the warp's exclusive base
    if (lane == kScanWarps - 1) scratch[kScanWarps] = running;
  }
  __syncthreads();
  const uint32_t result = scratch[warp] + inclusive - value;
  *total = scratch[kScanWarps];
  __syncthreads();  // everyone has read scratch before a next call writes it
  return result;
}

}  // namespace vmm::kernels::detail
