// The KernelNodeParams every backend records for vmm-run's kernels: the launch geometry of
// kernels/launch_config.h and the arguments packed as the CUDA ABI lays them out (each naturally
// aligned, little-endian, no tail padding). The CUDA backend reads the same bytes back from a
// captured graph; the host backend and the fake engine build them here.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runner/engine/engine.h"

namespace vmm {

// vmm_fill_f32(float* dst, uint64_t count, uint64_t seed): 24 argument bytes.
KernelNodeParams FillKernelParams(DevicePtr dst, uint64_t count, uint64_t seed);

// vmm_matmul_f32(const float* a, const float* b, float* c, uint32_t m, n, k): 36 argument bytes.
KernelNodeParams MatmulKernelParams(const MatmulArgs& args);

// vmm_axpy_f32(const float* a, const float* b, float* c, uint64_t count, float alpha): 36
// argument bytes (b 0: scale, c = alpha * a).
KernelNodeParams AxpyKernelParams(const AxpyArgs& args);

// vmm_set_condition(const uint32_t* word, cudaGraphConditionalHandle handle): 16 argument bytes.
KernelNodeParams SetConditionKernelParams(DevicePtr word, uint64_t handle);

// vmm_next_pass(uint32_t* counter, uint32_t* passes, cudaGraphConditionalHandle handle): 24
// argument bytes (passes 0: none).
KernelNodeParams NextPassKernelParams(DevicePtr counter, DevicePtr passes, uint64_t handle);

// The memory a node of kernel `function` touches, read from its packed arguments, in argument
// order, each named as the kernel's parameter: one row per kernel of kernels::GraphKernels
// (kernel_params.cc). Both backends describe a kernel node with it, and the host twin proves a
// kernel's access with it before running the kernel. Empty for a kernel it does not know.
std::vector<NodeOperand> KernelOperands(const std::string& function,
                                        const std::vector<uint8_t>& args);

// The argument of type T at byte `offset` of packed arguments (as the packers above lay them
// out), or T{} past their end.
template <typename T>
T KernelArg(const std::vector<uint8_t>& args, size_t offset) {
  T value{};
  if (offset + sizeof(T) <= args.size()) std::memcpy(&value, args.data() + offset, sizeof(T));
  return value;
}

}  // namespace vmm
