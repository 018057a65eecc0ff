// vmm_fill_f32: deterministic test data, dst[i] = datagen::FillValue(seed, i).
#include <cstdint>

#include "kernels/datagen.h"
#include "kernels/graph_kernels.h"
#include "kernels/kernels.h"
#include "kernels/launch.cuh"
#include "kernels/launch_config.h"

// Grid-stride loop, launched with FillLaunch(count). FillValue is integer arithmetic plus exact
// float conversions, so the device writes the same bits as the host backend.
extern "C" __global__ void __launch_bounds__(vmm::kernels::kFillThreads)
    vmm_fill_f32(float* dst, uint64_t count, uint64_t seed) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    dst[i] = vmm::datagen::FillValue(seed, i);
  }
}

namespace vmm::kernels {

int LaunchFill(float* dst, uint64_t count, uint64_t seed, CUstream_st* stream) {
  void* args[] = {&dst, &count, &seed};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_fill_f32), FillLaunch(count), args,
                        stream);
}

}  // namespace vmm::kernels
