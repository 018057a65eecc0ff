// Private to kernels/*.cu: launches a kernel with a LaunchConfig through cudaLaunchKernel, which
// returns the launch's own error (a <<<>>> launch only reports it through cudaGetLastError).
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/launch_config.h"

namespace vmm::kernels::detail {

inline int Launch(const void* kernel, const LaunchConfig& cfg, void** args, cudaStream_t stream) {
  const dim3 grid(cfg.grid[0], cfg.grid[1], cfg.grid[2]);
  const dim3 block(cfg.block[0], cfg.block[1], cfg.block[2]);
  const cudaError_t err = cudaLaunchKernel(kernel, grid, block, args, cfg.shared_bytes, stream);
  // A failed launch also sets the thread's last-error state; clear it so that it is not reported a
  // second time by an unrelated later cudaGetLastError (sticky errors cannot be cleared anyway).
  if (err != cudaSuccess) (void)cudaGetLastError();
  return static_cast<int>(err);
}

// The number of parameters of a kernel, for static_asserts against kernels.h.
template <typename... Args>
constexpr uint32_t ParamCount(void (*)(Args...)) {
  return sizeof...(Args);
}

}  // namespace vmm::kernels::detail
