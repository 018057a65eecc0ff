#include "runner/engine/kernel_params.h"

#include <cstdio>
#include <cstring>
#include <vector>

namespace vmm {

int GraphKernelIndex(const std::string& function) {
  for (int i = 0; i < kernels::kGraphKernelCount; ++i)
    if (function == kernels::kGraphKernels[i].name) return i;
  return -1;
}

const kernels::GraphKernel* FindGraphKernel(const std::string& function) {
  const int i = GraphKernelIndex(function);
  return i < 0 ? nullptr : &kernels::kGraphKernels[i];
}

uint64_t ArgBits(const kernels::GraphKernel& row, const std::vector<uint8_t>& args, int i) {
  if (i < 0 || i >= row.layout.count) return 0;
  const uint64_t offset = row.layout.offset[i], width = row.layout.size[i];
  if (offset + width > args.size()) return 0;
  uint64_t value = 0;  // little-endian: the low bytes of a wider integer
  std::memcpy(&value, args.data() + offset, width);
  return value;
}

namespace {

kernels::LaunchConfig GeometryOf(const kernels::GraphKernel& row,
                                 const std::vector<uint8_t>& args) {
  const kernels::Geometry& g = row.geometry;
  switch (g.kind) {
    case kernels::Geometry::kGridStride:
      return kernels::FillLaunch(ArgBits(row, args, g.x));
    case kernels::Geometry::kMatmulTiles:
      return kernels::MatmulLaunch(static_cast<uint32_t>(ArgBits(row, args, g.x)),
                                   static_cast<uint32_t>(ArgBits(row, args, g.y)));
    case kernels::Geometry::kOneThread:
      break;
  }
  return kernels::ConditionLaunch();
}

}  // namespace

void PackKernelParams(const kernels::GraphKernel& row, const uint64_t* values,
                      const double* float_values, KernelNodeParams* p) {
  const kernels::ArgLayout& l = row.layout;
  p->function = row.name;
  p->arg_bytes.assign(l.bytes, 0);
  for (int i = 0; i < l.count; ++i) {
    uint8_t* at = p->arg_bytes.data() + l.offset[i];
    if (l.is_float[i]) {
      const float f = static_cast<float>(float_values[i]);  // every float parameter is 4 bytes
      std::memcpy(at, &f, sizeof f);
    } else {
      std::memcpy(at, &values[i], l.size[i]);  // little-endian: the low bytes
    }
  }
  const kernels::LaunchConfig launch = GeometryOf(row, p->arg_bytes);
  p->grid = launch.grid;
  p->block = launch.block;
  p->shared_bytes = launch.shared_bytes;
}

std::vector<NodeOperand> KernelOperands(const std::string& function,
                                        const std::vector<uint8_t>& args) {
  const kernels::GraphKernel* row = FindGraphKernel(function);
  if (row == nullptr) return {};
  auto arg = [&](int i) { return ArgBits(*row, args, i); };
  std::vector<NodeOperand> out;
  for (const kernels::Touch& t : row->touches) {
    if (t.arg < 0) continue;
    const uint64_t va = arg(t.arg);
    if (t.optional && va == 0) continue;
    // unit times each count, saturating: an impossible size then fails an access check
    uint64_t bytes = t.unit;
    for (int8_t c : t.count) {
      if (c < 0) continue;
      const uint64_t n = arg(c);
      bytes = n != 0 && bytes > UINT64_MAX / n ? UINT64_MAX : bytes * n;
    }
    out.push_back({va, bytes, t.writes ? Access::kReadWrite : Access::kRead, row->params[t.arg]});
  }
  return out;
}

std::string KernelCallText(const KernelNodeParams& params) {
  const kernels::GraphKernel* row = FindGraphKernel(params.function);
  if (row == nullptr) return params.function;
  std::string text = params.function + "(";
  for (int i = 0; i < row->layout.count; ++i) {
    const uint64_t bits = ArgBits(*row, params.arg_bytes, i);
    char value[32];
    if (row->layout.is_pointer[i]) {
      std::snprintf(value, sizeof value, "0x%llx", static_cast<unsigned long long>(bits));
    } else if (row->layout.is_float[i] && row->layout.size[i] == 4) {
      float f = 0;
      const uint32_t low = static_cast<uint32_t>(bits);
      std::memcpy(&f, &low, sizeof f);
      std::snprintf(value, sizeof value, "%g", static_cast<double>(f));
    } else {
      std::snprintf(value, sizeof value, "%llu", static_cast<unsigned long long>(bits));
    }
    text += std::string(i > 0 ? ", " : "") + row->params[i] + "=" + value;
  }
  return text + ")";
}

Status Engine::Fill(DevicePtr dst, uint64_t count, uint64_t seed, OpTiming* timing) {
  return LaunchKernel(FillKernelParams(dst, count, seed), timing);
}

Status Engine::Matmul(const MatmulArgs& args, OpTiming* timing) {
  return LaunchKernel(MatmulKernelParams(args), timing);
}

}  // namespace vmm
