// The KernelNodeParams every backend records for vmm-run's kernels: the launch geometry of
// kernels/launch_config.h and the arguments packed as the CUDA ABI lays them out (each naturally
// aligned, little-endian, no tail padding). The CUDA backend reads the same bytes back from a
// captured graph; the host backend and the fake engine build them here.
#pragma once

#include <cstdint>

#include "runner/engine/engine.h"

namespace vmm {

// vmm_fill_f32(float* dst, uint64_t count, uint64_t seed): 24 argument bytes.
KernelNodeParams FillKernelParams(DevicePtr dst, uint64_t count, uint64_t seed);

// vmm_matmul_f32(const float* a, const float* b, float* c, uint32_t m, n, k): 36 argument bytes.
KernelNodeParams MatmulKernelParams(const MatmulArgs& args);

}  // namespace vmm
