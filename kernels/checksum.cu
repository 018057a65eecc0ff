// vmm_checksum_u32: the datagen buffer hash, sum (mod 2^64) of HashWord(src[i], i).
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
// additions gives the same result as the host's sequential loop.
__global__ void __launch_bounds__(kBlockThreads)
    vmm_checksum_u32(const uint32_t* src, uint64_t count, unsigned long long* hash) {
  __shared__ unsigned long long warp_sums[vmm::kernels::detail::kWarps];
  unsigned long long sum = 0;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    sum += vmm::datagen::HashWord(src[i], i);
  }
  sum = vmm::kernels::detail::BlockSum(sum, warp_sums);
  if (threadIdx.x == 0 && sum != 0) atomicAdd(hash, sum);
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

}  // namespace vmm::kernels
