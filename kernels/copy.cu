// vmm_copy_u32: the kernel_copy step, a copy made of the SMs' loads and stores (not a copy engine).
#include <cstdint>

#include "kernels/graph_kernels.h"
#include "kernels/launch_config.h"

// Grid-stride loop, launched with FillLaunch(count): dst[i] = src[i] for i < count, 32-bit words,
// bit for bit. src and dst do not overlap.
extern "C" __global__ void __launch_bounds__(vmm::kernels::kFillThreads)
    vmm_copy_u32(const uint32_t* src, uint32_t* dst, uint64_t count) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    dst[i] = src[i];
  }
}
