// The KernelNodeParams every backend records for vmm-run's graph kernels, built from the kernel's
// row (kernels/graph_kernels.h): its name, the launch geometry the row computes from the
// arguments, and the arguments packed as the row's layout says (the CUDA ABI: each naturally
// aligned, little-endian, zero padding, no tail padding). The CUDA backend launches these bytes
// (Engine::LaunchKernel) and reads the same bytes back from a captured graph; the host backend
// runs them through its CPU twins.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/graph_kernels.h"
#include "runner/engine/engine.h"

namespace vmm {

// KernelParams' values: each as 64 bits (integers and addresses) and as a double (floats).
template <typename V>
constexpr uint64_t ToBits(V v) {
  static_assert(std::is_arithmetic_v<V>, "a kernel argument is a number or a DevicePtr");
  if constexpr (std::is_floating_point_v<V>)
    return 0;
  else
    return static_cast<uint64_t>(v);
}
template <typename V>
constexpr double ToFloat(V v) {
  return static_cast<double>(v);
}

// One decoded argument of parameter type P.
template <typename P>
P DecodeArg(const uint8_t* at) {
  if constexpr (std::is_pointer_v<P>) {
    uint64_t bits = 0;
    std::memcpy(&bits, at, sizeof bits);
    return reinterpret_cast<P>(static_cast<uintptr_t>(bits));
  } else {
    P value{};
    std::memcpy(&value, at, sizeof value);
    return value;
  }
}
template <typename... P, size_t... I>
void CallDecoded(void (*fn)(P...), const uint8_t* in, const kernels::ArgLayout& l,
                 std::index_sequence<I...>) {
  fn(DecodeArg<P>(in + l.offset[I])...);
}

// The row named `function`, or nullptr; its index in kernels::kGraphKernels, or -1.
const kernels::GraphKernel* FindGraphKernel(const std::string& function);
int GraphKernelIndex(const std::string& function);

// Argument `i` of packed arguments as `row` lays them out, widened to 64 bits (a float's bits, a
// pointer's address); 0 past their end.
uint64_t ArgBits(const kernels::GraphKernel& row, const std::vector<uint8_t>& args, int i);

// Packs `values` (one per parameter, in order) into `p` as `row` lays them out, with the row's
// name and geometry. A pointer parameter takes an address (DevicePtr), a float parameter a value
// converted to float, an integer one a value converted to its width.
void PackKernelParams(const kernels::GraphKernel& row, const uint64_t* values,
                      const double* float_values, KernelNodeParams* p);

// The KernelNodeParams of the kernel of row `Row` (kernels::row::vmm_axpy_f32) over `values`,
// one per parameter, in order: KernelParams<kernels::row::vmm_axpy_f32>(a, b, c, count, alpha).
template <int Row, typename... V>
KernelNodeParams KernelParams(V... values) {
  static_assert(sizeof...(V) == kernels::kGraphKernels[Row].layout.count,
                "one value per parameter of the kernel");
  uint64_t bits[] = {0, ToBits(values)...};
  double floats[] = {0, ToFloat(values)...};
  KernelNodeParams p;
  PackKernelParams(kernels::kGraphKernels[Row], bits + 1, floats + 1, &p);
  return p;
}

// Calls `fn`, whose signature is its kernel's (the caller checks: decltype(kernel)), with the
// packed arguments decoded as `row` lays them out (arguments past the end of `args` read as
// zero): the host twin's CPU run.
template <typename... P>
void CallWithPackedArgs(void (*fn)(P...), const kernels::GraphKernel& row,
                        const std::vector<uint8_t>& args) {
  std::vector<uint8_t> whole(args);
  if (whole.size() < row.layout.bytes) whole.resize(row.layout.bytes, 0);
  CallDecoded(fn, whole.data(), row.layout, std::index_sequence_for<P...>{});
}

// The packers of the kernels vmm-run's engines launch by name.
inline KernelNodeParams FillKernelParams(DevicePtr dst, uint64_t count, uint64_t seed) {
  return KernelParams<kernels::row::vmm_fill_f32>(dst, count, seed);
}
inline KernelNodeParams MatmulKernelParams(const MatmulArgs& a) {
  return KernelParams<kernels::row::vmm_matmul_f32>(a.a, a.b, a.c, a.m, a.n, a.k);
}
// b 0: scale, c = alpha * a.
inline KernelNodeParams AxpyKernelParams(const AxpyArgs& a) {
  return KernelParams<kernels::row::vmm_axpy_f32>(a.a, a.b, a.c, a.count, a.alpha);
}
inline KernelNodeParams SetConditionKernelParams(DevicePtr word, uint64_t handle) {
  return KernelParams<kernels::row::vmm_set_condition>(word, handle);
}
// passes 0: none.
inline KernelNodeParams NextPassKernelParams(DevicePtr counter, DevicePtr passes, uint64_t handle) {
  return KernelParams<kernels::row::vmm_next_pass>(counter, passes, handle);
}

// The memory a node of kernel `function` touches, read from its packed arguments with its row's
// `touches`, in row order, each named as the kernel's parameter. Both backends describe a kernel
// node with it, and the host twin proves a kernel's access with it before running the kernel.
// Empty for a kernel without a row.
std::vector<NodeOperand> KernelOperands(const std::string& function,
                                        const std::vector<uint8_t>& args);

// The call as text, for errors: "vmm_axpy_f32(a=0x7f.., b=0, c=0x7f.., count=1024,
// alpha=2.5)" (pointers in hex, the rest in decimal); the bare name for a kernel without a row.
std::string KernelCallText(const KernelNodeParams& params);

}  // namespace vmm
