// The kernels of conditional graph nodes (if / while, CUDA 12.4+): they read a condition word in
// device memory and set the node's condition with cudaGraphSetConditional, a device runtime
// builtin (__cudart_builtin__), so no relocatable device code is needed. Each runs one thread:
// calls of cudaGraphSetConditional must not race.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/graph_kernels.h"
#include "kernels/kernels.h"
#include "kernels/launch.cuh"
#include "kernels/launch_config.h"

// Before a conditional node: condition = (*word != 0).
extern "C" __global__ void vmm_set_condition(const uint32_t* word,
                                             cudaGraphConditionalHandle handle) {
  cudaGraphSetConditional(handle, *word != 0u ? 1u : 0u);
}

// The last node of a while body: one pass is done. The counter loses one (never below zero), the
// pass count (when given) gains one, and the loop goes on while the counter is not zero.
extern "C" __global__ void vmm_next_pass(uint32_t* counter, uint32_t* passes,
                                         cudaGraphConditionalHandle handle) {
  uint32_t left = *counter;
  if (left != 0u) --left;
  *counter = left;
  if (passes != nullptr) *passes += 1u;
  cudaGraphSetConditional(handle, left != 0u ? 1u : 0u);
}

namespace vmm::kernels {

static_assert(sizeof(cudaGraphConditionalHandle) == sizeof(uint64_t));
static_assert(std::is_same_v<cudaGraphConditionalHandle, VmmConditionHandle>);

int LaunchSetCondition(const uint32_t* word, uint64_t handle, CUstream_st* stream) {
  cudaGraphConditionalHandle h = handle;
  void* args[] = {&word, &h};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_set_condition), ConditionLaunch(), args,
                        stream);
}

int LaunchNextPass(uint32_t* counter, uint32_t* passes, uint64_t handle, CUstream_st* stream) {
  cudaGraphConditionalHandle h = handle;
  void* args[] = {&counter, &passes, &h};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_next_pass), ConditionLaunch(), args,
                        stream);
}

}  // namespace vmm::kernels
