// The host engine's kernels and data calls at their edges: empty launches, impossible sizes,
// timings, and the reference "reuse" demo end to end.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/datagen.h"
#include "runner/base/format.h"
#include "runner/engine/host/cpu_kernels.h"
#include "runner/engine/host/host_engine.h"
#include "runner/engine/kernel_params.h"

namespace vmm {
namespace {

constexpr uint64_t kMiB = 1 << 20;

class HostKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override { engine_ = std::move(CreateHostEngine({2 * kMiB})).value(); }
  // One 2 MiB buffer with read_write access (the demos' layout).
  DevicePtr Buffer() {
    DevicePtr va = 0;
    AllocHandle h;
    EXPECT_TRUE(engine_->Reserve(2 * kMiB, 0, &va).ok());
    EXPECT_TRUE(engine_->Create(2 * kMiB, &h).ok());
    EXPECT_TRUE(engine_->Map(va, 2 * kMiB, 0, h).ok());
    EXPECT_TRUE(engine_->SetAccess(va, 2 * kMiB, Access::kReadWrite).ok());
    handles_.push_back(h);
    return va;
  }
  std::vector<float> Read(DevicePtr va, uint64_t count) {
    std::vector<float> out(count);
    EXPECT_TRUE(engine_->CopyToHost(va, count * 4, out.data()).ok());
    return out;
  }

  std::unique_ptr<Engine> engine_;
  std::vector<AllocHandle> handles_;
};

TEST_F(HostKernelsTest, LaunchKernelRunsAnyRowAndRefusesTheRest) {
  const DevicePtr a = Buffer();
  const DevicePtr b = Buffer();
  ASSERT_TRUE(engine_->LaunchKernel(FillKernelParams(a, 1000, 9), nullptr).ok());
  ASSERT_TRUE(engine_->Fill(b, 1000, 9, nullptr).ok());
  EXPECT_EQ(Read(a, 1000), Read(b, 1000));  // the generic launch is the named one
  std::vector<float> want(1000);
  host::FillF32(want.data(), 1000, 9);
  EXPECT_EQ(Read(a, 1000), want);

  KernelNodeParams unknown = FillKernelParams(a, 10, 1);
  unknown.function = "vmm_busy_u32";
  EXPECT_EQ(engine_->LaunchKernel(unknown, nullptr).message(),
            "cudaLaunchKernel: CUDA_ERROR_INVALID_VALUE: no graph kernel is named 'vmm_busy_u32'");
  KernelNodeParams short_args = FillKernelParams(a, 10, 1);
  short_args.arg_bytes.pop_back();
  EXPECT_EQ(engine_->LaunchKernel(short_args, nullptr).message(),
            "cudaLaunchKernel: CUDA_ERROR_INVALID_VALUE: vmm_fill_f32(dst=" + Hex(a) +
                ", count=10, seed=0) takes 24 bytes of arguments, got 23");  // seed cut short: 0
  // Its access is proven from the row's operands, as for the named call.
  EXPECT_EQ(engine_->LaunchKernel(FillKernelParams(a, 2 * kMiB / 4 + 1, 1), nullptr).message(),
            "vmm_fill_f32: CUDA_ERROR_ILLEGAL_ADDRESS: write of 'dst' [" + Hex(a) +
                ", +0x200004) touches the unmapped address " + Hex(a + 2 * kMiB));
}

TEST_F(HostKernelsTest, EmptyLaunchesAndDegenerateShapes) {
  const DevicePtr c = Buffer();
  OpTiming timing;
  EXPECT_TRUE(engine_->Fill(0, 0, 1, &timing).ok());  // touches nothing, so any address is fine
  EXPECT_GE(timing.gpu_us, 0);
  ASSERT_TRUE(engine_->Fill(c, 6, 5, nullptr).ok());
  ASSERT_TRUE(engine_->Matmul({0, 0, c, 2, 3, 0}, nullptr).ok());  // k = 0: C = 0
  EXPECT_EQ(Read(c, 6), std::vector<float>(6, 0.0f));
  EXPECT_EQ(engine_->Matmul({c, c, c, 4, 0, 4}, nullptr).message(),
            "cudaLaunchKernel: CUDA_ERROR_INVALID_VALUE: vmm_matmul_f32(a=" + Hex(c) +
                ", b=" + Hex(c) + ", c=" + Hex(c) +
                ", m=4, n=0, k=4) has a launch dimension of 0 (grid 0x1x1, block 256x1x1)");
  EXPECT_EQ(engine_->Fill(c, uint64_t{1} << 62, 1, nullptr).message(),
            "vmm_fill_f32: CUDA_ERROR_ILLEGAL_ADDRESS: write of 'dst' [" + Hex(c) +
                ", +0xffffffffffffffff) touches the end of the address space");
  EXPECT_EQ(engine_->Fill(c, 2 * kMiB / 4 + 1, 1, nullptr).message(),
            "vmm_fill_f32: CUDA_ERROR_ILLEGAL_ADDRESS: write of 'dst' [" + Hex(c) +
                ", +0x200004) touches the unmapped address " + Hex(c + 2 * kMiB));
  EXPECT_EQ(engine_->CopyToHost(c, 4, nullptr).message(),
            "cuMemcpyDtoH: CUDA_ERROR_INVALID_VALUE: the destination is null");
  EXPECT_TRUE(engine_->CopyToHost(c, 0, nullptr).ok());
  DataCompareResult cmp{7, {{1, 2, 3}}, 5, 6};
  ASSERT_TRUE(engine_->CompareData(c, DataRef::Device(c), 0, {}, &cmp).ok());
  EXPECT_EQ(cmp.mismatches, 0u);
  EXPECT_TRUE(cmp.first.empty());
  EXPECT_EQ(cmp.hash, 0u);
}

TEST_F(HostKernelsTest, MatmulThroughTheEngineMatchesTheCpuKernel) {
  const uint32_t m = 37, n = 53, k = 29;
  const DevicePtr a = Buffer(), b = Buffer(), c = Buffer();
  ASSERT_TRUE(engine_->Fill(a, m * k, 1, nullptr).ok());
  ASSERT_TRUE(engine_->Fill(b, k * n, 2, nullptr).ok());
  OpTiming timing;
  ASSERT_TRUE(engine_->Matmul({a, b, c, m, n, k}, &timing).ok());
  EXPECT_GE(timing.gpu_us, 0);
  std::vector<float> ha = Read(a, m * k), hb = Read(b, k * n), want(m * n);
  for (uint64_t i = 0; i < ha.size(); ++i) ASSERT_EQ(ha[i], datagen::FillValue(1, i));
  host::MatmulF32(ha.data(), hb.data(), want.data(), m, n, k);
  uint64_t hash = 0;
  ASSERT_TRUE(engine_->Checksum(c, m * n, &hash).ok());
  EXPECT_EQ(hash, host::ChecksumWords(want.data(), want.size()));
}

// Reference demo 1: C = A·B, swap A's and B's physical memory under the same VAs, C = A·B again.
TEST_F(HostKernelsTest, ReuseDemo) {
  const uint64_t count = 256 * 256;
  const DevicePtr a = Buffer(), b = Buffer(), c = Buffer(), first = Buffer();
  ASSERT_TRUE(engine_->Fill(a, count, 1, nullptr).ok());
  ASSERT_TRUE(engine_->Fill(b, count, 2, nullptr).ok());
  ASSERT_TRUE(engine_->Matmul({a, b, c, 256, 256, 256}, nullptr).ok());
  ASSERT_TRUE(engine_->Matmul({a, b, first, 256, 256, 256}, nullptr).ok());
  SyncNote note;
  for (int i = 0; i < 2; ++i) {  // A and B: unmap, release, map new memory at the same VA
    const DevicePtr va = i == 0 ? a : b;
    ASSERT_TRUE(engine_->Unmap(va, 2 * kMiB, &note).ok());
    ASSERT_TRUE(engine_->Release(handles_[i], &note).ok());
    AllocHandle fresh;
    ASSERT_TRUE(engine_->Create(2 * kMiB, &fresh).ok());
    ASSERT_TRUE(engine_->Map(va, 2 * kMiB, 0, fresh).ok());
    ASSERT_TRUE(engine_->SetAccess(va, 2 * kMiB, Access::kReadWrite).ok());
    ASSERT_TRUE(engine_->Fill(va, count, 3 + i, nullptr).ok());
  }
  ASSERT_TRUE(engine_->Matmul({a, b, c, 256, 256, 256}, nullptr).ok());
  DataCompareResult cmp;
  CompareOptions options;
  options.max_report = 4;
  ASSERT_TRUE(engine_->CompareData(c, DataRef::Device(first), count, options, &cmp).ok());
  EXPECT_GT(cmp.mismatches, count / 2);  // new inputs, new product
  std::vector<float> ha = Read(a, count), hb = Read(b, count), want(count);
  EXPECT_EQ(ha[0], datagen::FillValue(3, 0));
  host::MatmulF32(ha.data(), hb.data(), want.data(), 256, 256, 256);
  EXPECT_EQ(Read(c, count), want);
}

}  // namespace
}  // namespace vmm
