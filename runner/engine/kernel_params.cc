#include "runner/engine/kernel_params.h"

#include <cstring>
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

KernelNodeParams AxpyKernelParams(const AxpyArgs& args) {
  KernelNodeParams p = Geometry(kernels::kAxpyKernelName, kernels::FillLaunch(args.count));
  for (uint64_t ptr : {args.a, args.b, args.c, args.count}) PackArg<uint64_t>(&p.arg_bytes, ptr);
  uint32_t alpha = 0;
  std::memcpy(&alpha, &args.alpha, sizeof alpha);
  PackArg<uint32_t>(&p.arg_bytes, alpha);
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

namespace {

template <typename T>
T ArgAt(const std::vector<uint8_t>& bytes, size_t offset) {
  return KernelArg<T>(bytes, offset);
}

// `count` elements of 4 bytes, saturating: an impossible size then fails an access check.
uint64_t Bytes4(uint64_t count) { return count > UINT64_MAX / 4 ? UINT64_MAX : count * 4; }

using Args = const std::vector<uint8_t>&;
struct KernelMemory {
  const char* function;
  std::vector<NodeOperand> (*operands)(Args args);
};
// The offsets are those the packers above write (the CUDA ABI's natural alignment).
const KernelMemory kKernelMemory[] = {
    {kernels::kFillKernelName,  // (dst, count, seed)
     [](Args a) -> std::vector<NodeOperand> {
       return {{ArgAt<uint64_t>(a, 0), Bytes4(ArgAt<uint64_t>(a, 8)), Access::kReadWrite, "dst"}};
     }},
    {kernels::kMatmulKernelName,  // (a, b, c, m, n, k)
     [](Args a) -> std::vector<NodeOperand> {
       const uint64_t m = ArgAt<uint32_t>(a, 24), n = ArgAt<uint32_t>(a, 28),
                      k = ArgAt<uint32_t>(a, 32);
       return {{ArgAt<uint64_t>(a, 0), Bytes4(m * k), Access::kRead, "a"},
               {ArgAt<uint64_t>(a, 8), Bytes4(k * n), Access::kRead, "b"},
               {ArgAt<uint64_t>(a, 16), Bytes4(m * n), Access::kReadWrite, "c"}};
     }},
    {kernels::kAxpyKernelName,  // (a, b, c, count, alpha); b 0: none
     [](Args a) -> std::vector<NodeOperand> {
       const uint64_t bytes = Bytes4(ArgAt<uint64_t>(a, 24));
       std::vector<NodeOperand> out = {{ArgAt<uint64_t>(a, 0), bytes, Access::kRead, "a"}};
       if (const uint64_t b = ArgAt<uint64_t>(a, 8); b != 0)
         out.push_back({b, bytes, Access::kRead, "b"});
       out.push_back({ArgAt<uint64_t>(a, 16), bytes, Access::kReadWrite, "c"});
       return out;
     }},
    {kernels::kSetConditionKernelName,  // (word, handle)
     [](Args a) -> std::vector<NodeOperand> {
       return {{ArgAt<uint64_t>(a, 0), 4, Access::kRead, "word"}};
     }},
    {kernels::kNextPassKernelName,  // (counter, passes, handle); passes 0: none
     [](Args a) -> std::vector<NodeOperand> {
       std::vector<NodeOperand> out = {{ArgAt<uint64_t>(a, 0), 4, Access::kReadWrite, "counter"}};
       if (const uint64_t passes = ArgAt<uint64_t>(a, 8); passes != 0)
         out.push_back({passes, 4, Access::kReadWrite, "passes"});
       return out;
     }},
};

}  // namespace

std::vector<NodeOperand> KernelOperands(const std::string& function, Args args) {
  for (const KernelMemory& k : kKernelMemory)
    if (function == k.function) return k.operands(args);
  return {};
}

}  // namespace vmm
