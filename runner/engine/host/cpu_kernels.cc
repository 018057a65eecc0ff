// Compiled with -ffp-contract=off (see CMakeLists.txt): the compiler may neither fuse a multiply
// and an add on its own nor reorder the accumulation; the only fused operations are the explicit
// std::fmaf calls the matmul contract prescribes.
#include "runner/engine/host/cpu_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/datagen.h"
#include "runner/engine/kernel_params.h"

namespace vmm::host {
namespace {

// x86-64 compilers may not assume FMA hardware; aarch64 always has it.
#if defined(__x86_64__)
#define VMM_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define VMM_FMA_CLONES
#endif

// Rows of A processed together: each row of B is loaded once per block instead of once per row.
constexpr uint32_t kRowBlock = 4;

// acc[r][j] = fmaf(a[r][p], b[p][j], acc[r][j]) for p ascending: the per-element order of the
// contract. The loop over j carries no dependency, so it vectorises to vfmadd where FMA exists;
// target_clones builds an FMA variant and a portable one and picks at load time.
template <uint32_t kRows>
__attribute__((always_inline)) inline void AccumulateRows(const float* a, const float* b,
                                                          float* acc, uint32_t n, uint32_t k) {
  for (uint32_t p = 0; p < k; ++p) {
    const float* brow = b + static_cast<uint64_t>(p) * n;
    for (uint32_t r = 0; r < kRows; ++r) {
      const float aip = a[static_cast<uint64_t>(r) * k + p];
      float* accr = acc + static_cast<uint64_t>(r) * n;
      for (uint32_t j = 0; j < n; ++j) accr[j] = std::fmaf(aip, brow[j], accr[j]);
    }
  }
}

VMM_FMA_CLONES void MatmulBlock(const float* a, const float* b, float* acc, uint32_t rows,
                                uint32_t n, uint32_t k) {
  if (rows == kRowBlock) {
    AccumulateRows<kRowBlock>(a, b, acc, n, k);
  } else {
    for (uint32_t r = 0; r < rows; ++r) {
      AccumulateRows<1>(a + static_cast<uint64_t>(r) * k, b, acc + static_cast<uint64_t>(r) * n, n,
                        k);
    }
  }
}

}  // namespace

void FillF32(float* dst, uint64_t count, uint64_t seed) {
  for (uint64_t i = 0; i < count; ++i) dst[i] = datagen::FillValue(seed, i);
}

void MatmulF32(const float* a, const float* b, float* c, uint32_t m, uint32_t n, uint32_t k) {
  std::vector<float> acc(static_cast<size_t>(kRowBlock) * n);
  for (uint32_t i = 0; i < m; i += kRowBlock) {
    const uint32_t rows = m - i < kRowBlock ? m - i : kRowBlock;
    std::fill(acc.begin(), acc.end(), 0.0f);
    MatmulBlock(a + static_cast<uint64_t>(i) * k, b, acc.data(), rows, n, k);
    std::memcpy(c + static_cast<uint64_t>(i) * n, acc.data(),
                static_cast<size_t>(rows) * n * sizeof(float));
  }
}

VMM_FMA_CLONES void AxpyF32(const float* a, const float* b, float* c, uint64_t count, float alpha) {
  if (b == nullptr) {
    for (uint64_t i = 0; i < count; ++i) c[i] = alpha * a[i];
    return;
  }
  for (uint64_t i = 0; i < count; ++i) c[i] = std::fma(alpha, a[i], b[i]);
}

namespace {

void CopyU32(const uint32_t* src, uint32_t* dst, uint64_t count) {
  std::memcpy(dst, src, count * sizeof(uint32_t));
}

// A CPU twin has its kernel's signature (checked here), so its arguments decode by the kernel's
// row: one entry per kernel of kGraphKernels but the conditional nodes' (their state is the
// engine's, host_engine_conditional.cc).
template <typename KernelFn, int Row, auto Twin>
constexpr CpuKernel TwinOf() {
  static_assert(std::is_same_v<KernelFn*, decltype(Twin)>,
                "a CPU twin has the signature of its kernel");
  return {kernels::kGraphKernels[Row].name, [](const std::vector<uint8_t>& args) {
            CallWithPackedArgs(Twin, kernels::kGraphKernels[Row], args);
          }};
}
#define VMM_CPU_TWIN(kernel, twin) TwinOf<decltype(::kernel), kernels::row::kernel, &twin>()

constexpr CpuKernel kCpuKernels[] = {
    VMM_CPU_TWIN(vmm_fill_f32, FillF32),
    VMM_CPU_TWIN(vmm_matmul_f32, MatmulF32),
    VMM_CPU_TWIN(vmm_axpy_f32, AxpyF32),
    VMM_CPU_TWIN(vmm_copy_u32, CopyU32),
};

}  // namespace

const CpuKernel* FindCpuKernel(const std::string& function) {
  for (const CpuKernel& k : kCpuKernels)
    if (function == k.function) return &k;
  return nullptr;
}

uint64_t ChecksumWords(const void* words, uint64_t count) {
  const auto* bytes = static_cast<const unsigned char*>(words);
  uint64_t sum = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t w;
    std::memcpy(&w, bytes + i * 4, 4);
    sum += datagen::HashWord(w, i);
  }
  return sum;
}

}  // namespace vmm::host
