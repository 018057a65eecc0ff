// vmm_busy_u32: in-flight work of a known length. One block: thread 0 reads the GPU's global timer
// (nanoseconds) for all, then the block touches dst[0, count) as BusyTouch says: spins until
// `duration_ns` has passed and writes `pattern` once (kEnd), or reads (kRead) or writes (kWrite)
// every word in block-stride passes until then. An unmap under it (wait: false, isolate blocks
// only) makes those accesses fault: Xid 31 FAULT_PDE on the H200, CUDA_ERROR_ILLEGAL_ADDRESS for
// the process.
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
    vmm_busy_u32(uint32_t* dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
                 uint32_t touch) {
  using vmm::kernels::BusyTouch;
  __shared__ uint64_t start;
  if (threadIdx.x == 0) start = GlobalTimerNs();
  __syncthreads();
  // volatile: every pass really loads (or stores) every word; nothing is cached in registers.
  volatile uint32_t* words = dst;
  if (touch == static_cast<uint32_t>(BusyTouch::kRead)) {
    uint32_t seen = 0;
    do {
      for (uint64_t i = threadIdx.x; i < count; i += blockDim.x) seen ^= words[i];
    } while (GlobalTimerNs() - start < duration_ns);
    (void)seen;
    return;
  }
  if (touch == static_cast<uint32_t>(BusyTouch::kWrite)) {
    do {
      for (uint64_t i = threadIdx.x; i < count; i += blockDim.x) words[i] = pattern;
    } while (GlobalTimerNs() - start < duration_ns);
    return;
  }
  while (GlobalTimerNs() - start < duration_ns) {
  }
  for (uint64_t i = threadIdx.x; i < count; i += blockDim.x) dst[i] = pattern;
}

namespace vmm::kernels {

static_assert(detail::ParamCount(&vmm_busy_u32) == 5);

int LaunchBusy(uint32_t* dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
               BusyTouch touch, CUstream_st* stream) {
  uint32_t mode = static_cast<uint32_t>(touch);
  void* args[] = {&dst, &count, &duration_ns, &pattern, &mode};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_busy_u32), BusyLaunch(), args, stream);
}

}  // namespace vmm::kernels
