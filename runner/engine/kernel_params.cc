#include "runner/engine/kernel_params.h"

#include <type_traits>
#include <vector>

#include "kernels/launch_config.h"

namespace vmm {
namespace {

// Appends `value` at the next multiple of its size (natural alignment), little-endian.
template <typename T>
void PackArg(std::vector<uint8_t>* bytes, T value) {
  static_assert(std::is_unsigned_v<T>);
  while (bytes->size() % sizeof(T) != 0) bytes->push_back(0);
  for (size_t i = 0; i < sizeof(T); ++i) bytes->push_back(static_cast<uint8_t>(value >> (8 * i)));
}

KernelNodeParams Geometry(const char* function, const kernels::LaunchConfig& launch) {
  KernelNodeParams p;
  p.function = function;
  p.grid = launch.grid;
  p.block = launch.block;
  p.shared_bytes = launch.shared_bytes;
  return p;
}

}  // namespace

KernelNodeParams FillKernelParams(DevicePtr dst, uint64_t count, uint64_t seed) {
  KernelNodeParams p = Geometry(kernels::kFillKernelName, kernels::FillLaunch(count));
  PackArg<uint64_t>(&p.arg_bytes, dst);
  PackArg<uint64_t>(&p.arg_bytes, count);
  PackArg<uint64_t>(&p.arg_bytes, seed);
  return p;
}

KernelNodeParams MatmulKernelParams(const MatmulArgs& args) {
  KernelNodeParams p = Geometry(kernels::kMatmulKernelName, kernels::MatmulLaunch(args.m, args.n));
  for (uint64_t ptr : {args.a, args.b, args.c}) PackArg<uint64_t>(&p.arg_bytes, ptr);
  for (uint32_t dim : {args.m, args.n, args.k}) PackArg<uint32_t>(&p.arg_bytes, dim);
  return p;
}

KernelNodeParams SetConditionKernelParams(DevicePtr word, uint64_t handle) {
  KernelNodeParams p = Geometry(kernels::kSetConditionKernelName, kernels::ConditionLaunch());
  PackArg<uint64_t>(&p.arg_bytes, word);
  PackArg<uint64_t>(&p.arg_bytes, handle);
  return p;
}

KernelNodeParams NextPassKernelParams(DevicePtr counter, DevicePtr passes, uint64_t handle) {
  KernelNodeParams p = Geometry(kernels::kNextPassKernelName, kernels::ConditionLaunch());
  for (uint64_t v : {counter, passes, handle}) PackArg<uint64_t>(&p.arg_bytes, v);
  return p;
}

}  // namespace vmm
