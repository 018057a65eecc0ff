// The kernels a CUDA graph may hold, each declared once.
//
// Its signature is the C declaration below. The .cu that defines the kernel includes this file,
// so the two cannot differ (C linkage allows one signature per name: nvcc refuses a second).
// Host C++ reaches the kernel through the host stub nvcc generates under the same name, the
// symbol cudaLaunchKernel takes and cudaGraphKernelNodeGetParams reports (GraphKernelSymbol).
//
// Its row of VMM_GRAPH_KERNELS says the rest, and everything else derives from it:
//   - the argument layout, from the declaration (the CUDA ABI: each argument at the next multiple
//     of its alignment, no tail padding): KernelNodeParams::arg_bytes are packed
//     (runner/engine/kernel_params.h), launched (Engine::LaunchKernel), read back from a graph and
//     decoded for the host twin's CPU run by it; the CUDA registry checks it against
//     cuFuncGetParamInfo;
//   - the parameters' names: errors, operands and descriptions use them;
//   - the launch geometry, computed from the arguments;
//   - the memory the kernel touches through its pointer arguments (runner/engine's
//     KernelOperands: both backends describe a node with it, the host twin proves access with it).
// A new capturable kernel costs its .cu (kernels/CMakeLists.txt compiles every .cu here), its
// declaration and row here, and its CPU twin's row in runner/engine/host/cpu_kernels.cc.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include "kernels/launch_config.h"

#if defined(__CUDACC__)
#define VMM_GRAPH_KERNEL extern "C" __global__
#else
#define VMM_GRAPH_KERNEL extern "C"
#endif

// A cudaGraphConditionalHandle, spelt without the CUDA headers (it is this type there).
using VmmConditionHandle = unsigned long long;

// dst[i] = datagen::FillValue(seed, i) for i < count (fill.cu).
VMM_GRAPH_KERNEL void vmm_fill_f32(float* dst, uint64_t count, uint64_t seed);
// C[m x n] = A[m x k] * B[k x n], row-major fp32 (matmul.cu).
VMM_GRAPH_KERNEL void vmm_matmul_f32(const float* a, const float* b, float* c, uint32_t m,
                                     uint32_t n, uint32_t k);
// c[i] = fmaf(alpha, a[i], b[i]), or alpha * a[i] without b (axpy.cu).
VMM_GRAPH_KERNEL void vmm_axpy_f32(const float* a, const float* b, float* c, uint64_t count,
                                   float alpha);
// dst[i] = src[i] for i < count, 32-bit words: kernel_copy (copy.cu).
VMM_GRAPH_KERNEL void vmm_copy_u32(const uint32_t* src, uint32_t* dst, uint64_t count);
// The conditional nodes' kernels (condition.cu).
VMM_GRAPH_KERNEL void vmm_set_condition(const uint32_t* word, VmmConditionHandle handle);
VMM_GRAPH_KERNEL void vmm_next_pass(uint32_t* counter, uint32_t* passes, VmmConditionHandle handle);

namespace vmm::kernels {

inline constexpr int kMaxKernelArgs = 8;

// Where each argument lies in the packed argument bytes.
struct ArgLayout {
  int count = 0;
  std::array<uint8_t, kMaxKernelArgs> offset{};
  std::array<uint8_t, kMaxKernelArgs> size{};
  std::array<bool, kMaxKernelArgs> is_pointer{};
  std::array<bool, kMaxKernelArgs> is_float{};
  uint32_t bytes = 0;  // the packed length: the end of the last argument
};

template <typename F>
struct Signature;
template <typename... P>
struct Signature<void(P...)> {
  static_assert(sizeof...(P) <= kMaxKernelArgs, "raise kMaxKernelArgs");
  static_assert(((std::is_arithmetic_v<P> || std::is_pointer_v<P>)&&...),
                "a graph kernel takes scalars and pointers only");
  static_assert(((!std::is_floating_point_v<P> || std::is_same_v<P, float>)&&...),
                "a graph kernel's floating-point parameters are float");
  static constexpr ArgLayout Layout() {
    ArgLayout l;
    ((l.offset[l.count] =
          static_cast<uint8_t>((l.bytes + alignof(P) - 1) / alignof(P) * alignof(P)),
      l.size[l.count] = sizeof(P), l.is_pointer[l.count] = std::is_pointer_v<P>,
      l.is_float[l.count] = std::is_floating_point_v<P>,
      l.bytes = l.offset[l.count] + static_cast<uint32_t>(sizeof(P)), ++l.count),
     ...);
    return l;
  }
};

// How a kernel's grid follows from its arguments (launch_config.h): the grid-stride loop over
// the count in argument `x` (FillLaunch), tiles of m = `x` rows by n = `y` columns (MatmulLaunch),
// or one thread (ConditionLaunch).
struct Geometry {
  enum Kind : uint8_t { kGridStride, kMatmulTiles, kOneThread } kind = kOneThread;
  int8_t x = -1;
  int8_t y = -1;
};
constexpr Geometry GridStride(int count_arg) { return {Geometry::kGridStride, int8_t(count_arg)}; }
constexpr Geometry MatmulTiles(int m_arg, int n_arg) {
  return {Geometry::kMatmulTiles, int8_t(m_arg), int8_t(n_arg)};
}
constexpr Geometry OneThread() { return {}; }

// The memory a kernel touches through pointer argument `arg`: `unit` bytes times the product of
// the arguments `count` names (-1: a factor of 1), read only or also written. An optional
// pointer may be null, and then touches nothing.
struct Touch {
  int8_t arg = -1;
  bool writes = false;
  bool optional = false;
  uint8_t unit = 4;
  std::array<int8_t, 2> count{-1, -1};
};
constexpr Touch Reads(int arg, int count_arg = -1, int count_arg2 = -1) {
  return {int8_t(arg), false, false, 4, {int8_t(count_arg), int8_t(count_arg2)}};
}
constexpr Touch Writes(int arg, int count_arg = -1, int count_arg2 = -1) {
  return {int8_t(arg), true, false, 4, {int8_t(count_arg), int8_t(count_arg2)}};
}
constexpr Touch Optional(Touch t) {
  t.optional = true;
  return t;
}

inline constexpr int kMaxTouches = 3;
template <typename... T>
constexpr std::array<Touch, kMaxTouches> Touches(T... touches) {
  static_assert(sizeof...(T) <= kMaxTouches, "raise kMaxTouches");
  return {touches...};
}
template <typename... T>
constexpr std::array<const char*, kMaxKernelArgs> Names(T... names) {
  return {names...};
}

// The rows: X(kernel, geometry, Names(parameter names, in order), Touches(...)). A row's layout
// comes from the kernel's declaration above (decltype: the row does not need the kernel's code,
// so a build without CUDA has the table too).
#define VMM_GRAPH_KERNELS(X)                                                                       \
  X(vmm_matmul_f32, MatmulTiles(3, 4), Names("a", "b", "c", "m", "n", "k"),                        \
    Touches(Reads(0, 3, 5), Reads(1, 5, 4), Writes(2, 3, 4)))                                      \
  X(vmm_fill_f32, GridStride(1), Names("dst", "count", "seed"), Touches(Writes(0, 1)))             \
  X(vmm_axpy_f32, GridStride(3), Names("a", "b", "c", "count", "alpha"),                           \
    Touches(Reads(0, 3), Optional(Reads(1, 3)), Writes(2, 3)))                                     \
  X(vmm_copy_u32, GridStride(2), Names("src", "dst", "count"), Touches(Reads(0, 2), Writes(1, 2))) \
  X(vmm_set_condition, OneThread(), Names("word", "handle"), Touches(Reads(0)))                    \
  X(vmm_next_pass, OneThread(), Names("counter", "passes", "handle"),                              \
    Touches(Writes(0), Optional(Writes(1))))

// One kernel a graph may hold.
struct GraphKernel {
  const char* name;  // the symbol's name, as KernelNodeParams::function holds it
  ArgLayout layout;  // from its declaration
  std::array<const char*, kMaxKernelArgs> params;  // its parameters' names
  Geometry geometry;
  std::array<Touch, kMaxTouches> touches;  // unused entries have arg -1
};

// Each row's index, named as its kernel: row::vmm_axpy_f32.
namespace row {
#define VMM_GRAPH_KERNEL_INDEX(kernel, ...) kernel,
enum : int { VMM_GRAPH_KERNELS(VMM_GRAPH_KERNEL_INDEX) };
#undef VMM_GRAPH_KERNEL_INDEX
}  // namespace row

#define VMM_GRAPH_KERNEL_ROW(kernel, geometry, names, touches) \
  GraphKernel{#kernel, Signature<decltype(::kernel)>::Layout(), names, geometry, touches},
inline constexpr GraphKernel kGraphKernels[] = {VMM_GRAPH_KERNELS(VMM_GRAPH_KERNEL_ROW)};
#undef VMM_GRAPH_KERNEL_ROW
inline constexpr int kGraphKernelCount = sizeof(kGraphKernels) / sizeof(kGraphKernels[0]);

// Row `index`'s host symbol, as cudaLaunchKernel takes it and cudaGraphKernelNodeGetParams reports
// it (kernel_symbols.cc, built with the kernels: CUDA builds only).
const void* GraphKernelSymbol(int index);

}  // namespace vmm::kernels
