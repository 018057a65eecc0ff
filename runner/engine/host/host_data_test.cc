// The host engine's data plane: snapshots in every place, copies in every direction, checks in
// place, and the refusals in the CUDA backend's words.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/datagen.h"
#include "runner/base/format.h"
#include "runner/engine/host/cpu_kernels.h"
#include "runner/engine/host/host_engine.h"
#include "runner/engine/kernel_params.h"

namespace vmm {
namespace {

constexpr uint64_t kMiB = 1 << 20;

class HostDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = std::move(CreateHostEngine({2 * kMiB})).value();
    AllocHandle h;
    ASSERT_TRUE(engine_->Reserve(2 * kMiB, 0, &va_).ok());
    ASSERT_TRUE(engine_->Create(2 * kMiB, &h).ok());
    ASSERT_TRUE(engine_->Map(va_, 2 * kMiB, 0, h).ok());
    ASSERT_TRUE(engine_->SetAccess(va_, 2 * kMiB, Access::kReadWrite).ok());
    ASSERT_TRUE(engine_->Fill(va_, kCount, 9, nullptr).ok());
  }

  static constexpr uint64_t kCount = 1000;
  std::unique_ptr<Engine> engine_;
  DevicePtr va_ = 0;
};

TEST_F(HostDataTest, SnapshotsHoldAndRestoreDataInEveryPlace) {
  for (DataPlace place : {DataPlace::kDevice, DataPlace::kHostPinned, DataPlace::kHostPageable}) {
    SCOPED_TRACE(DataPlaceName(place));
    SnapshotHandle s;
    ASSERT_TRUE(engine_->AllocSnapshot(kCount * 4, place, &s).ok());
    EXPECT_EQ(s.place, place);
    OpTiming t;
    ASSERT_TRUE(engine_->Copy(DataRef::Of(s), DataRef::Device(va_), kCount * 4, &t).ok());
    EXPECT_GE(t.gpu_us, 0);
    ASSERT_TRUE(engine_->Memset(va_, kCount, 0, nullptr).ok());
    DataCompareResult r;
    ASSERT_TRUE(engine_->CompareData(va_, DataRef::Of(s), kCount, {}, &r).ok());
    EXPECT_GT(r.mismatches, kCount / 2);  // zeros against the filled values
    ASSERT_FALSE(r.first.empty());
    EXPECT_EQ(r.first[0].got, 0u);
    ASSERT_TRUE(engine_->Copy(DataRef::Device(va_), DataRef::Of(s), kCount * 4, nullptr).ok());
    ASSERT_TRUE(engine_->CompareData(va_, DataRef::Of(s), kCount, {}, &r).ok());
    EXPECT_EQ(r.mismatches, 0u);
    EXPECT_EQ(r.hash, r.other_hash);
    uint64_t hash = 0;
    if (!IsHostPlace(place)) {  // a device snapshot is device memory to every data call
      ASSERT_TRUE(engine_->Checksum(s.addr, kCount, &hash).ok());
      EXPECT_EQ(hash, r.hash);
    }
    ASSERT_TRUE(engine_->FreeSnapshot(s).ok());
    EXPECT_FALSE(engine_->FreeSnapshot(s).ok());
  }
}

TEST_F(HostDataTest, RefusalsNameTheDriverCall) {
  SnapshotHandle host, device;
  ASSERT_TRUE(engine_->AllocSnapshot(64, DataPlace::kHostPinned, &host).ok());
  ASSERT_TRUE(engine_->AllocSnapshot(64, DataPlace::kDevice, &device).ok());
  // Past the end of the host snapshot.
  EXPECT_EQ(engine_->Copy(DataRef::Of(host), DataRef::Device(va_), 128, nullptr).message(),
            "cuMemcpyDtoHAsync: CUDA_ERROR_INVALID_VALUE: dst " + Hex(host.addr) +
                " + 128 B is not inside one host snapshot");
  // A host snapshot's address is not device memory.
  DataCompareResult r;
  EXPECT_EQ(engine_->CompareData(host.addr, DataRef::Device(va_), 4, {}, &r).message(),
            "vmm_compare_count: CUDA_ERROR_ILLEGAL_ADDRESS: read of 'a' [" + Hex(host.addr) +
                ", +0x10) touches the unmapped address " + Hex(host.addr));
  // A device snapshot is not host memory.
  EXPECT_EQ(
      engine_->Copy(DataRef{device.addr, DataPlace::kHostPinned}, DataRef::Device(va_), 64, nullptr)
          .message(),
      "cuMemcpyDtoHAsync: CUDA_ERROR_INVALID_VALUE: dst " + Hex(device.addr) +
          " + 64 B is not inside one host snapshot");
  EXPECT_EQ(engine_->AllocSnapshot(0, DataPlace::kDevice, &device).message(),
            "cuMemAlloc: CUDA_ERROR_INVALID_VALUE: a snapshot of 0 bytes");
  // In a capture, a pinned host snapshot makes a memcpy node; pageable memory is refused (the
  // runtime refuses memcpy nodes over it) without invalidating the capture.
  SnapshotHandle pageable;
  ASSERT_TRUE(engine_->AllocSnapshot(64, DataPlace::kHostPageable, &pageable).ok());
  ASSERT_TRUE(engine_->BeginCapture().ok());
  EXPECT_TRUE(engine_->Copy(DataRef::Of(host), DataRef::Device(va_), 64, nullptr).ok());
  EXPECT_EQ(engine_->Copy(DataRef::Of(pageable), DataRef::Device(va_), 64, nullptr).message(),
            "cudaMemcpyAsync: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: a captured copy cannot use "
            "pageable host memory; keep the snapshot pinned or on the device");
  EXPECT_EQ(engine_->CompareValue(va_, 0, 4, 8, &r).message(),
            "cuStreamSynchronize: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: not allowed while the "
            "stream is capturing (the capture is now invalidated)");
}

// WriteValue writes exactly its word, after earlier work; a misaligned address is the driver's
// CUDA_ERROR_INVALID_VALUE, and a word without read_write access is refused before the write.
TEST_F(HostDataTest, WriteValueWritesOneWord) {
  ASSERT_TRUE(engine_->Memset(va_, kCount, 0, nullptr).ok());
  OpTiming t;
  ASSERT_TRUE(engine_->WriteValue(va_ + 40, 0xC0FFEEu, &t).ok());
  EXPECT_GE(t.gpu_us, 0);
  std::vector<uint32_t> words(kCount);
  ASSERT_TRUE(engine_->CopyToHost(va_, kCount * 4, words.data()).ok());
  for (uint64_t i = 0; i < kCount; ++i) ASSERT_EQ(words[i], i == 10 ? 0xC0FFEEu : 0u) << i;
  Status misaligned = engine_->WriteValue(va_ + 2, 1, nullptr);
  ASSERT_NE(misaligned.cuda_error(), nullptr);
  EXPECT_STREQ(misaligned.cuda_error(), "CUDA_ERROR_INVALID_VALUE");
  ASSERT_TRUE(engine_->SetAccess(va_, 2 * kMiB, Access::kRead).ok());
  EXPECT_FALSE(engine_->WriteValue(va_ + 40, 7, nullptr).ok());
  ASSERT_TRUE(engine_->SetAccess(va_, 2 * kMiB, Access::kReadWrite).ok());
  ASSERT_TRUE(engine_->CopyToHost(va_ + 40, 4, words.data()).ok());
  EXPECT_EQ(words[0], 0xC0FFEEu);  // the refused write changed nothing
  // Not a graph node: refused during a capture, as on CUDA, and nothing is written.
  ASSERT_TRUE(engine_->BeginCapture().ok());
  Status captured = engine_->WriteValue(va_ + 40, 9, nullptr);
  GraphHandle g;
  ASSERT_TRUE(engine_->EndCapture(&g).ok());
  ASSERT_NE(captured.cuda_error(), nullptr);
  EXPECT_STREQ(captured.cuda_error(), "CUDA_ERROR_NOT_SUPPORTED");
  ASSERT_TRUE(engine_->CopyToHost(va_ + 40, 4, words.data()).ok());
  EXPECT_EQ(words[0], 0xC0FFEEu);
}

// add / scale / axpy compute alpha * a (+ b) in place or not, prove every operand's access first
// (a read-only output is refused, and nothing is written), and a captured one runs only when its
// exec does.
TEST_F(HostDataTest, ElementwiseKernelsComputeAlphaAPlusB) {
  const uint64_t n = 1024;
  const DevicePtr a = va_, b = va_ + 4 * n, c = va_ + 8 * n;
  ASSERT_TRUE(engine_->Fill(a, n, 3, nullptr).ok());
  ASSERT_TRUE(engine_->Fill(b, n, 4, nullptr).ok());
  std::vector<uint32_t> words(3 * n);
  ASSERT_TRUE(engine_->CopyToHost(va_, words.size() * 4, words.data()).ok());
  std::vector<float> fa(n), fb(n), want(n), got(n);
  std::memcpy(fa.data(), words.data(), 4 * n);
  std::memcpy(fb.data(), words.data() + n, 4 * n);
  ASSERT_TRUE(engine_->LaunchKernel(AxpyKernelParams(AxpyArgs{a, b, c, n, 0.5f}), nullptr).ok());
  ASSERT_TRUE(engine_->CopyToHost(c, 4 * n, got.data()).ok());
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], std::fma(0.5f, fa[i], fb[i])) << i;
  ASSERT_TRUE(engine_->LaunchKernel(AxpyKernelParams(AxpyArgs{a, 0, c, n, -2.0f}), nullptr).ok());
  ASSERT_TRUE(engine_->CopyToHost(c, 4 * n, got.data()).ok());
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], -2.0f * fa[i]) << i;
  ASSERT_TRUE(
      engine_->LaunchKernel(AxpyKernelParams(AxpyArgs{a, b, b, n, 1.0f}), nullptr).ok());  // b += a
  ASSERT_TRUE(engine_->CopyToHost(b, 4 * n, got.data()).ok());
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], fa[i] + fb[i]) << i;
  ASSERT_TRUE(engine_->SetAccess(va_, 2 * kMiB, Access::kRead).ok());
  Status refused = engine_->LaunchKernel(AxpyKernelParams(AxpyArgs{a, 0, c, n, 3.0f}), nullptr);
  ASSERT_NE(refused.cuda_error(), nullptr);
  EXPECT_STREQ(refused.cuda_error(), "CUDA_ERROR_ILLEGAL_ADDRESS");
  ASSERT_TRUE(engine_->CopyToHost(c, 4 * n, want.data()).ok());
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(want[i], -2.0f * fa[i]) << i;
  ASSERT_TRUE(engine_->SetAccess(va_, 2 * kMiB, Access::kReadWrite).ok());
  // Captured: one kernel node, which computes only when the exec runs.
  ASSERT_TRUE(engine_->BeginCapture().ok());
  ASSERT_TRUE(engine_->LaunchKernel(AxpyKernelParams(AxpyArgs{a, 0, c, n, 0.25f}), nullptr).ok());
  GraphHandle g;
  ASSERT_TRUE(engine_->EndCapture(&g).ok());
  std::vector<KernelNodeParams> nodes;
  ASSERT_TRUE(engine_->KernelNodes(g, &nodes).ok());
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0], AxpyKernelParams(AxpyArgs{a, 0, c, n, 0.25f}));
  ASSERT_TRUE(engine_->CopyToHost(c, 4 * n, got.data()).ok());
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], -2.0f * fa[i]) << i;  // not yet run
  ExecHandle x;
  ASSERT_TRUE(engine_->Instantiate(g, &x).ok());
  ASSERT_TRUE(engine_->Replay(x, nullptr).ok());
  ASSERT_TRUE(engine_->CopyToHost(c, 4 * n, got.data()).ok());
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 0.25f * fa[i]) << i;
}

TEST_F(HostDataTest, MatmulCheckRunsInPlace) {
  AllocHandle h;
  DevicePtr c = 0;
  ASSERT_TRUE(engine_->Reserve(2 * kMiB, 0, &c).ok());
  ASSERT_TRUE(engine_->Create(2 * kMiB, &h).ok());
  ASSERT_TRUE(engine_->Map(c, 2 * kMiB, 0, h).ok());
  ASSERT_TRUE(engine_->SetAccess(c, 2 * kMiB, Access::kReadWrite).ok());
  const MatmulArgs args{va_, va_ + 4096, c, 16, 16, 16};
  ASSERT_TRUE(engine_->Matmul(args, nullptr).ok());
  MatmulCheckResult check;
  ASSERT_TRUE(engine_->CheckMatmul(args, 8, &check).ok());
  EXPECT_EQ(check.mismatches, 0u);
  EXPECT_EQ(check.elements, 256u);
  ASSERT_TRUE(engine_->Memset(c + 40, 1, 0x7fc00000u, nullptr).ok());  // a NaN at index 10
  ASSERT_TRUE(engine_->CheckMatmul(args, 8, &check).ok());
  EXPECT_EQ(check.mismatches, 1u);
  ASSERT_EQ(check.first.size(), 1u);
  EXPECT_EQ(check.first[0].index, 10u);
  ASSERT_TRUE(engine_->SetAccess(c, 2 * kMiB, Access::kNone).ok());
  EXPECT_EQ(engine_->CheckMatmul(args, 8, &check).message(),
            "vmm_matmul_check: CUDA_ERROR_ILLEGAL_ADDRESS: read of 'c' [" + Hex(c) +
                ", +0x400) touches " + Hex(c) + " with access 'none' (needs 'read')");
}

}  // namespace
}  // namespace vmm
