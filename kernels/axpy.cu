// vmm_axpy_f32: the elementwise kernels of the add, scale and axpy steps.
#include <cstdint>

#include "kernels/graph_kernels.h"
#include "kernels/launch_config.h"

// Grid-stride loop, launched with FillLaunch(count). With b: c[i] = fmaf(alpha, a[i], b[i]), one
// rounding (add is alpha = 1, where it equals a[i] + b[i] exactly); without b: c[i] = alpha *
// a[i]. Each element is read and written by one thread, so c may be a or b itself.
extern "C" __global__ void __launch_bounds__(vmm::kernels::kFillThreads)
    vmm_axpy_f32(const float* a, const float* b, float* c, uint64_t count, float alpha) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    c[i] = b != nullptr ? fmaf(alpha, a[i], b[i]) : alpha * a[i];
  }
}
