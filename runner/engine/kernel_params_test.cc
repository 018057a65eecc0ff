// The graph-kernel table (kernels/graph_kernels.h) against the CUDA ABI written out by hand, and
// the generic launch through it.
#include "runner/engine/kernel_params.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kernels/graph_kernels.h"

namespace vmm {
namespace {

TEST(GraphKernelTable, LayoutsAreTheAbisNaturalAlignment) {
  // Offsets and sizes as the CUDA ABI places each kernel's parameters (pointer 8, uint64 8,
  // uint32 4, float 4, each at a multiple of its size), and the packed length.
  struct Expected {
    std::vector<std::pair<int, int>> slots;
    uint32_t bytes;
  };
  const std::map<std::string, Expected> abi = {
      {"vmm_matmul_f32", {{{0, 8}, {8, 8}, {16, 8}, {24, 4}, {28, 4}, {32, 4}}, 36}},
      {"vmm_fill_f32", {{{0, 8}, {8, 8}, {16, 8}}, 24}},
      {"vmm_axpy_f32", {{{0, 8}, {8, 8}, {16, 8}, {24, 8}, {32, 4}}, 36}},
      {"vmm_copy_u32", {{{0, 8}, {8, 8}, {16, 8}}, 24}},
      {"vmm_set_condition", {{{0, 8}, {8, 8}}, 16}},
      {"vmm_next_pass", {{{0, 8}, {8, 8}, {16, 8}}, 24}},
  };
  int rows = 0;
  for (const kernels::GraphKernel& k : kernels::kGraphKernels) {
    ++rows;
    SCOPED_TRACE(k.name);
    auto it = abi.find(k.name);
    ASSERT_NE(it, abi.end()) << "a new row: add its ABI layout here";
    ASSERT_EQ(k.layout.count, static_cast<int>(it->second.slots.size()));
    for (int i = 0; i < k.layout.count; ++i) {
      EXPECT_EQ(k.layout.offset[i], it->second.slots[i].first) << "parameter " << i;
      EXPECT_EQ(k.layout.size[i], it->second.slots[i].second) << "parameter " << i;
      EXPECT_NE(k.params[i], nullptr) << "parameter " << i << " has no name";
    }
    EXPECT_EQ(k.layout.bytes, it->second.bytes);
    for (const kernels::Touch& t : k.touches) {
      if (t.arg < 0) continue;
      EXPECT_TRUE(k.layout.is_pointer[t.arg]) << "touch through parameter " << int(t.arg);
    }
    EXPECT_EQ(FindGraphKernel(k.name), &k);
  }
  EXPECT_EQ(rows, static_cast<int>(abi.size()));
  EXPECT_EQ(FindGraphKernel("vmm_busy_u32"), nullptr);
}

TEST(GraphKernelTable, CallTextNamesEveryParameter) {
  EXPECT_EQ(KernelCallText(AxpyKernelParams({0x100, 0, 0x7f00, 1024, 2.5f})),
            "vmm_axpy_f32(a=0x100, b=0x0, c=0x7f00, count=1024, alpha=2.5)");
  EXPECT_EQ(KernelCallText(MatmulKernelParams({0x10, 0x20, 0x30, 3, 4, 5})),
            "vmm_matmul_f32(a=0x10, b=0x20, c=0x30, m=3, n=4, k=5)");
  KernelNodeParams unknown;
  unknown.function = "vmm_busy_u32";
  EXPECT_EQ(KernelCallText(unknown), "vmm_busy_u32");
}

TEST(GraphKernelTable, OperandsMultiplyTheirCounts) {
  // matmul m=3, n=4, k=5: a is m*k, b k*n, c m*n elements of 4 bytes.
  const KernelNodeParams mm = MatmulKernelParams({0x1000, 0x2000, 0x3000, 3, 4, 5});
  EXPECT_EQ(KernelOperands(mm.function, mm.arg_bytes),
            (std::vector<NodeOperand>{{0x1000, 60, Access::kRead},
                                      {0x2000, 80, Access::kRead},
                                      {0x3000, 48, Access::kReadWrite}}));
  // next_pass without a pass count: only the counter, one word.
  const KernelNodeParams np = NextPassKernelParams(0x40, 0, 7);
  EXPECT_EQ(KernelOperands(np.function, np.arg_bytes),
            (std::vector<NodeOperand>{{0x40, 4, Access::kReadWrite}}));
  // A count whose bytes overflow saturates, so an access check fails instead of wrapping.
  const KernelNodeParams huge = FillKernelParams(0x40, UINT64_MAX / 2, 1);
  EXPECT_EQ(KernelOperands(huge.function, huge.arg_bytes)[0].bytes, UINT64_MAX);
}

}  // namespace
}  // namespace vmm
