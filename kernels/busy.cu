// vmm_busy_u32: in-flight work of a known length. One block: thread 0 reads the GPU's global timer
// (nanoseconds) and the stop flag for all, then the block touches dst[0, count) as BusyTouch says:
// spins until `duration_ns` has passed (or the flag is set) and writes `pattern` once (kEnd), or
// reads (kRead) or writes (kWrite) every word in block-stride passes until then. An unmap under it
// (wait: false, isolate blocks only) makes those accesses fault: Xid 31 FAULT_PDE on the H200,
// CUDA_ERROR_ILLEGAL_ADDRESS for the process.
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

enum : uint32_t { kRunning = 0, kTimeUp = 1, kFlagSet = 2 };

}  // namespace

extern "C" __global__ void __launch_bounds__(vmm::kernels::kBusyThreads)
    vmm_busy_u32(uint32_t* dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
                 uint32_t touch, const uint32_t* flag, uint32_t* expired) {
  using vmm::kernels::BusyTouch;
  __shared__ uint64_t start;
  __shared__ uint32_t state;
  if (threadIdx.x == 0) start = GlobalTimerNs();
  __syncthreads();
  // volatile: every pass really loads (or stores) every word, and the flag is read from host
  // memory each time; nothing is cached in registers.
  volatile uint32_t* words = dst;
  const volatile uint32_t* stop_flag = flag;
  const bool reads = touch == static_cast<uint32_t>(BusyTouch::kRead);
  const bool writes = touch == static_cast<uint32_t>(BusyTouch::kWrite);
  uint32_t seen = 0, now;
  do {
    if (reads) {
      for (uint64_t i = threadIdx.x; i < count; i += blockDim.x) seen ^= words[i];
    } else if (writes) {
      for (uint64_t i = threadIdx.x; i < count; i += blockDim.x) words[i] = pattern;
    }
    if (threadIdx.x == 0) {
      state = stop_flag != nullptr && *stop_flag != 0  ? kFlagSet
              : GlobalTimerNs() - start >= duration_ns ? kTimeUp
                                                       : kRunning;
    }
    __syncthreads();
    now = state;
    __syncthreads();  // every thread has read `state` before thread 0 writes it again
  } while (now == kRunning);
  (void)seen;
  if (threadIdx.x == 0 && now == kTimeUp && expired != nullptr)
    *static_cast<volatile uint32_t*>(expired) = 1;
  if (reads || writes) return;
  for (uint64_t i = threadIdx.x; i < count; i += blockDim.x) dst[i] = pattern;
}

namespace vmm::kernels {

static_assert(detail::ParamCount(&vmm_busy_u32) == 7);

int LaunchBusy(uint32_t* dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
               BusyTouch touch, const uint32_t* flag, uint32_t* expired, CUstream_st* stream) {
  uint32_t mode = static_cast<uint32_t>(touch);
  void* args[] = {&dst, &count, &duration_ns, &pattern, &mode, &flag, &expired};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_busy_u32), BusyLaunch(), args, stream);
}

}  // namespace vmm::kernels
