// vmm_busy_u32: in-flight work of a known length. One block: thread 0 reads the GPU's global timer
// (nanoseconds) and every thread spins until `duration_ns` has passed, then the block writes
// `pattern` to dst[0, count) in a block-stride loop. An unmap under it (wait: false, isolate
// blocks only) makes those writes fault: Xid 31 FAULT_PDE on the H200, CUDA_ERROR_ILLEGAL_ADDRESS
// for the process.
#include <cstdint>

#include "kernels/kernels.h"
#include "kernels/launch.cuh"
#include "kernels/launch_config.h"

namespace {

__device__ __forceinline__ uint64_t GlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(vmm::kernels::kBusyThreads)
    vmm_busy_u32(uint32_t* dst, uint64_t count, uint64_t duration_ns, uint32_t pattern) {
  __shared__ uint64_t start;
  if (threadIdx.x == 0) start = GlobalTimerNs();
  __syncthreads();
  while (GlobalTimerNs() - start < duration_ns) {
  }
  for (uint64_t i = threadIdx.x; i < count; i += blockDim.x) dst[i] = pattern;
}

namespace vmm::kernels {

static_assert(detail::ParamCount(&vmm_busy_u32) == 4);

int LaunchBusy(uint32_t* dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
               CUstream_st* stream) {
  void* args[] = {&dst, &count, &duration_ns, &pattern};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_busy_u32), BusyLaunch(), args, stream);
}

}  // namespace vmm::kernels
