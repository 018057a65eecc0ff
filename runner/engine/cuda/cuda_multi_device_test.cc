// GPU tests of the CUDA engine across two devices (binary vmm_gpu_tests, ctest label "gpu"). Every
// test skips without at least two CUDA devices. Data is checked bit for bit against the host
// formulas, through device 0 (the engine's own).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runner/engine/cuda/cuda_engine.h"
#include "runner/engine/cuda/cuda_test_util.h"
#include "runner/engine/engine.h"

namespace vmm::testing_cuda {
namespace {

class CudaMultiDeviceTest : public CudaEngineTest {
 protected:
  void SetUp() override {
    CudaEngineTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (engine_->info().device_count < 2) {
      GTEST_SKIP() << "needs two CUDA devices; this machine has " << engine_->info().device_count;
    }
  }

  // Reserves `pages` granules and maps page i on device devices[i % devices.size()]; no access.
  void Striped(uint64_t pages, const std::vector<int>& devices, DevicePtr* va) {
    ASSERT_OK(engine_->Reserve(pages * gran_, 0, va));
    for (uint64_t i = 0; i < pages; ++i) {
      AllocProps props;
      props.size = gran_;
      props.location_id = devices[i % devices.size()];
      AllocHandle h;
      ASSERT_OK(engine_->Create(props, &h));
      ASSERT_OK(engine_->Map(*va + i * gran_, gran_, 0, h));
      handles_.push_back(h);
    }
  }

  std::vector<AllocHandle> handles_;  // released by the engine's destructor
};

TEST_F(CudaMultiDeviceTest, DescribesTheSecondDevice) {
  DeviceInfo other;
  ASSERT_OK(engine_->DescribeDevice(1, &other));
  EXPECT_EQ(other.ordinal, 1);
  EXPECT_FALSE(other.name.empty());
  EXPECT_FALSE(other.pci_bus_id.empty());
  EXPECT_NE(other.pci_bus_id, engine_->info().pci_bus_id);
  EXPECT_TRUE(other.vmm_supported);
  EXPECT_GT(other.total_memory, 0u);
  EXPECT_NE(std::find(other.peers.begin(), other.peers.end(), 1), other.peers.end());
  std::printf("device 1: %s at %s, peers of 0: %zu, peers of 1: %zu\n", other.name.c_str(),
              other.pci_bus_id.c_str(), engine_->info().peers.size(), other.peers.size());
}

TEST_F(CudaMultiDeviceTest, NewMappingHasNoAccessForAnyDevice) {
  DevicePtr va = 0;
  ASSERT_NO_FATAL_FAILURE(Striped(2, {0, 1}, &va));
  for (int device : {0, 1}) {
    for (uint64_t page : {0u, 1u}) {
      Access a = Access::kReadWrite;
      ASSERT_OK(engine_->GetAccess(va + page * gran_, device, &a));
      EXPECT_EQ(a, Access::kNone) << "device " << device << ", page " << page;
    }
  }
}

TEST_F(CudaMultiDeviceTest, OneSetAccessForTwoDevicesAndGetAccessPerDevice) {
  DevicePtr va = 0;
  ASSERT_NO_FATAL_FAILURE(Striped(2, {0, 1}, &va));
  const std::array<DeviceAccess, 2> both{DeviceAccess{0, Access::kReadWrite},
                                         DeviceAccess{1, Access::kReadWrite}};
  ASSERT_OK(engine_->SetAccess(va, 2 * gran_, both));
  for (int device : {0, 1}) {
    Access a = Access::kNone;
    ASSERT_OK(engine_->GetAccess(va + gran_, device, &a));
    EXPECT_EQ(a, Access::kReadWrite) << "device " << device;
  }
  // Naming device 0 alone leaves device 1's access as it was.
  const DeviceAccess only0{0, Access::kRead};
  ASSERT_OK(engine_->SetAccess(va, 2 * gran_, std::span<const DeviceAccess>(&only0, 1)));
  Access a0 = Access::kNone, a1 = Access::kNone;
  ASSERT_OK(engine_->GetAccess(va, 0, &a0));
  ASSERT_OK(engine_->GetAccess(va, 1, &a1));
  EXPECT_EQ(a0, Access::kRead);
  EXPECT_EQ(a1, Access::kReadWrite);
}

TEST_F(CudaMultiDeviceTest, KernelOnDeviceOneOverStripedMemory) {
  DevicePtr va = 0;
  ASSERT_NO_FATAL_FAILURE(Striped(4, {0, 1}, &va));
  const std::array<DeviceAccess, 2> both{DeviceAccess{0, Access::kReadWrite},
                                         DeviceAccess{1, Access::kReadWrite}};
  ASSERT_OK(engine_->SetAccess(va, 4 * gran_, both));
  const uint64_t count = 4 * gran_ / sizeof(float);
  ASSERT_OK(engine_->SelectDevice(1));
  OpTiming timing;
  ASSERT_OK(engine_->Fill(va, count, 8, &timing));
  EXPECT_GT(timing.gpu_us, 0);
  ASSERT_OK(engine_->Fill(va, count, 9, nullptr));  // left in flight on device 1
  // Read back through device 0: its stream must wait for device 1's fill (program order).
  ASSERT_OK(engine_->SelectDevice(-1));
  uint64_t mismatches = 0;
  const std::string diff = DescribeMismatches(Expected(9, count), Read(va, count), &mismatches);
  EXPECT_EQ(mismatches, 0u) << diff;
}

TEST_F(CudaMultiDeviceTest, KernelOnDeviceOneOverDeviceZerosMemoryAndUnmapWaitsForIt) {
  DevicePtr va = 0;
  ASSERT_NO_FATAL_FAILURE(Striped(8, {0}, &va));  // all of it device 0's memory
  const std::array<DeviceAccess, 2> both{DeviceAccess{0, Access::kReadWrite},
                                         DeviceAccess{1, Access::kReadWrite}};
  ASSERT_OK(engine_->SetAccess(va, 8 * gran_, both));
  ASSERT_OK(engine_->SelectDevice(1));
  ASSERT_OK(engine_->Fill(va, 8 * gran_ / sizeof(float), 3, nullptr));  // left in flight
  ASSERT_OK(engine_->SelectDevice(0));
  SyncNote note;
  ASSERT_OK(engine_->Unmap(va, 8 * gran_, &note));  // must wait for device 1's stream first
  std::printf("unmap after an async fill on device 1: waited %d (%.1f us)\n", note.waited ? 1 : 0,
              note.wait_us);
}

TEST_F(CudaMultiDeviceTest, PeerCopyBetweenDevices) {
  DevicePtr src = 0, dst = 0;
  ASSERT_NO_FATAL_FAILURE(Striped(8, {0}, &src));
  ASSERT_NO_FATAL_FAILURE(Striped(8, {1}, &dst));
  const std::array<DeviceAccess, 2> both{DeviceAccess{0, Access::kReadWrite},
                                         DeviceAccess{1, Access::kReadWrite}};
  ASSERT_OK(engine_->SetAccess(src, 8 * gran_, both));
  ASSERT_OK(engine_->SetAccess(dst, 8 * gran_, both));
  const uint64_t count = 8 * gran_ / sizeof(float);
  ASSERT_OK(engine_->Fill(src, count, 5, nullptr));
  for (int device : {1, 0}) {
    ASSERT_OK(engine_->SelectDevice(device));
    OpTiming timing;
    ASSERT_OK(engine_->CopyDevice(dst, src, 8 * gran_, &timing));
    ASSERT_GT(timing.gpu_us, 0);
    std::printf("peer copy of %llu MiB on device %d: %.1f GB/s\n",
                static_cast<unsigned long long>(8 * gran_ >> 20), device,
                static_cast<double>(8 * gran_) / (timing.gpu_us * 1e3));
  }
  ASSERT_OK(engine_->SelectDevice(0));
  uint64_t mismatches = 0;
  const std::string diff = DescribeMismatches(Expected(5, count), Read(dst, count), &mismatches);
  EXPECT_EQ(mismatches, 0u) << diff;
}

TEST_F(CudaMultiDeviceTest, GraphInstantiatedOnDeviceOneReplaysThere) {
  DevicePtr va = 0;
  ASSERT_NO_FATAL_FAILURE(Striped(2, {1}, &va));
  const std::array<DeviceAccess, 2> both{DeviceAccess{0, Access::kRead},
                                         DeviceAccess{1, Access::kReadWrite}};
  ASSERT_OK(engine_->SetAccess(va, 2 * gran_, both));
  const uint64_t count = 2 * gran_ / sizeof(float);
  ASSERT_OK(engine_->SelectDevice(1));
  ASSERT_OK(engine_->BeginCapture());
  ASSERT_OK(engine_->Fill(va, count, 13, nullptr));
  GraphHandle graph;
  ASSERT_OK(engine_->EndCapture(&graph));
  ExecHandle exec;
  ASSERT_OK(engine_->Instantiate(graph, &exec));
  ASSERT_OK(engine_->SelectDevice(0));  // the exec still replays on device 1
  OpTiming timing;
  ASSERT_OK(engine_->Replay(exec, &timing));
  uint64_t mismatches = 0;
  const std::string diff = DescribeMismatches(Expected(13, count), Read(va, count), &mismatches);
  EXPECT_EQ(mismatches, 0u) << diff;
  std::vector<KernelNodeParams> nodes;
  ASSERT_OK(engine_->KernelNodes(graph, &nodes));
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].function, "vmm_fill_f32");
}

TEST_F(CudaMultiDeviceTest, PeerReadOnlyAccessIsHonouredOrRefused) {
  DevicePtr va = 0;
  ASSERT_NO_FATAL_FAILURE(Striped(1, {0}, &va));
  const std::array<DeviceAccess, 2> list{DeviceAccess{0, Access::kReadWrite},
                                         DeviceAccess{1, Access::kRead}};
  const Status s = engine_->SetAccess(va, gran_, list);
  if (!s.ok()) {
    std::printf("peer read-only access REFUSED by the driver: %s\n", s.message().c_str());
    return;
  }
  Access a = Access::kNone;
  ASSERT_OK(engine_->GetAccess(va, 1, &a));
  std::printf("peer read-only access accepted; device 1 reports %s\n", AccessName(a));
  EXPECT_NE(a, Access::kNone);
}

TEST(CudaMultiDeviceSelect, UnknownOrdinalIsAnError) {
  StatusOr<std::unique_ptr<Engine>> engine = CreateCudaEngine(0);
  if (!engine.ok()) GTEST_SKIP() << SkipReason(engine.status());
  const int count = (*engine)->info().device_count;
  const Status s = (*engine)->SelectDevice(count);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no CUDA device " + std::to_string(count)), std::string::npos)
      << s.message();
  ASSERT_OK((*engine)->SelectDevice(0));  // still usable
}

}  // namespace
}  // namespace vmm::testing_cuda
