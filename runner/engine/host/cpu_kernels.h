// The host backend's kernels: plain CPU functions over raw memory, bit-identical to kernels/*.cu.
//
// They check nothing: HostEngine proves that every byte they touch is mapped with enough access
// before calling them. Arguments may not overlap unless stated (as on the device, an overlapping
// output gives an unspecified result).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/engine/engine.h"

namespace vmm::host {

// dst[i] = datagen::FillValue(seed, i) for i in [0, count).
void FillF32(float* dst, uint64_t count, uint64_t seed);

// Row-major C[m x n] = A[m x k] * B[k x n] under the Engine's matmul contract: each element is
// acc = std::fmaf(A[i,p], B[p,j], acc) for p = 0 .. k-1 in order, from acc = 0.0f. No other
// floating-point operation touches the result, so it is bit-identical to vmm_matmul_f32.
// Uses the FMA instruction when the CPU has one, else the (exact, slower) libm fmaf.
void MatmulF32(const float* a, const float* b, float* c, uint32_t m, uint32_t n, uint32_t k);

// add / scale / axpy: c[i] = std::fma(alpha, a[i], b[i]) (one rounding, bit-identical to
// vmm_axpy_f32), or c[i] = alpha * a[i] when b is nullptr, for i in [0, count). c may be a or b.
void AxpyF32(const float* a, const float* b, float* c, uint64_t count, float alpha);

// The CPU twin of a graph kernel (a function with the kernel's signature), run on the kernel's
// packed arguments: one row per kernel of kernels::kGraphKernels but the conditional nodes' two
// (whose state is the engine's). A kernel node of the host twin runs through its row.
struct CpuKernel {
  const char* function;
  void (*run)(const std::vector<uint8_t>& args);
};
// The row of `function`, or nullptr.
const CpuKernel* FindCpuKernel(const std::string& function);

// The datagen buffer hash: wrapping sum of datagen::HashWord(word[i], i) over `count` 32-bit words.
uint64_t ChecksumWords(const void* words, uint64_t count);

}  // namespace vmm::host
