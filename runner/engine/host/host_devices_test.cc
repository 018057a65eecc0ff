// The host twin's emulated devices: memory tagged with a device, access kept per device, kernels
// and reads judged by the selected device's access, execs replaying on their own device.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/datagen.h"
#include "runner/engine/host/host_engine.h"

namespace vmm {
namespace {

constexpr uint64_t kG = 64 * 1024;
constexpr uint64_t kCount = kG / 4;

class HostDevicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HostEngineOptions options;
    options.granularity = kG;
    options.device_count = 2;
    StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine(options);
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    engine_ = std::move(engine).value();
  }
  // One granule on `device`, mapped, with no access yet.
  DevicePtr Page(int device) {
    DevicePtr va = 0;
    EXPECT_TRUE(engine_->Reserve(kG, 0, &va).ok());
    AllocProps props;
    props.size = kG;
    props.location_id = device;
    AllocHandle h;
    Status s = engine_->Create(props, &h);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(engine_->Map(va, kG, 0, h).ok());
    return va;
  }
  Access AccessOf(DevicePtr va, int device) {
    Access a = Access::kReadWrite;
    Status s = engine_->GetAccess(va, device, &a);
    EXPECT_TRUE(s.ok()) << s.message();
    return a;
  }

  std::unique_ptr<Engine> engine_;
};

TEST_F(HostDevicesTest, InfoCountsTheEmulatedDevices) {
  const DeviceInfo& info = engine_->info();
  EXPECT_EQ(info.device_count, 2);
  EXPECT_EQ(info.ordinal, 0);
  EXPECT_EQ(info.pci_bus_id, "host");
  EXPECT_EQ(info.peers, (std::vector<int>{0, 1}));
  DeviceInfo other;
  ASSERT_TRUE(engine_->DescribeDevice(1, &other).ok());
  EXPECT_EQ(other.ordinal, 1);
  EXPECT_EQ(other.name, info.name);
  Status s = engine_->DescribeDevice(2, &other);
  EXPECT_EQ(s.message(),
            "cuDeviceGet: CUDA_ERROR_INVALID_DEVICE: device 2 is not one of the 2 emulated "
            "devices (--host-devices)");
}

TEST_F(HostDevicesTest, NewMappingHasNoAccessForAnyDeviceAndSetAccessNamesDevices) {
  const DevicePtr va = Page(1);
  EXPECT_EQ(AccessOf(va, 0), Access::kNone);
  EXPECT_EQ(AccessOf(va, 1), Access::kNone);
  const std::array<DeviceAccess, 2> both{DeviceAccess{0, Access::kRead},
                                         DeviceAccess{1, Access::kReadWrite}};
  ASSERT_TRUE(engine_->SetAccess(va, kG, both).ok());
  EXPECT_EQ(AccessOf(va, 0), Access::kRead);
  EXPECT_EQ(AccessOf(va, 1), Access::kReadWrite);
  EXPECT_EQ(AccessOf(va, -1), Access::kRead);                   // -1: the engine's own device, 0
  ASSERT_TRUE(engine_->SetAccess(va, kG, Access::kNone).ok());  // device 0 only
  EXPECT_EQ(AccessOf(va, 0), Access::kNone);
  EXPECT_EQ(AccessOf(va, 1), Access::kReadWrite);
  Access a;
  EXPECT_EQ(engine_->GetAccess(va + kG, 0, &a)
                .message()
                .rfind("cuMemGetAccess: "
                       "CUDA_ERROR_INVALID_VALUE: ",
                       0),
            0u);
}

TEST_F(HostDevicesTest, KernelsAreJudgedByTheSelectedDevicesAccess) {
  const DevicePtr va = Page(0);
  const std::array<DeviceAccess, 2> list{DeviceAccess{0, Access::kReadWrite},
                                         DeviceAccess{1, Access::kRead}};
  ASSERT_TRUE(engine_->SetAccess(va, kG, list).ok());
  ASSERT_TRUE(engine_->SelectDevice(1).ok());
  const Status refused = engine_->Fill(va, kCount, 1, nullptr);
  EXPECT_NE(refused.message().find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos)
      << refused.message();
  EXPECT_NE(refused.message().find("with access 'read' for device 1 (needs 'read_write')"),
            std::string::npos)
      << refused.message();
  std::vector<float> out(kCount);
  EXPECT_TRUE(engine_->CopyToHost(va, kG, out.data()).ok());  // device 1 may read
  ASSERT_TRUE(engine_->SelectDevice(0).ok());
  ASSERT_TRUE(engine_->Fill(va, kCount, 1, nullptr).ok());
  ASSERT_TRUE(engine_->SelectDevice(1).ok());
  ASSERT_TRUE(engine_->CopyToHost(va, kG, out.data()).ok());
  EXPECT_EQ(out[5], datagen::FillValue(1, 5));
  EXPECT_FALSE(engine_->SelectDevice(2).ok());
}

// In an isolate block's child (trap mode) kernels run for real, and the CPU sees only the widest
// access of any device: device 1's read_write would let device 0's write through. The GPU faults
// there (each device has page tables of its own), so the twin does too, and stays poisoned.
TEST(HostDevicesTrap, AWriteOnlyAnotherDeviceMayMakeFaultsInTrapMode) {
  HostEngineOptions options;
  options.granularity = kG;
  options.device_count = 2;
  options.trap_faults = true;
  StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine(options);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  Engine& e = **engine;
  DevicePtr va = 0;
  ASSERT_TRUE(e.Reserve(kG, 0, &va).ok());
  AllocProps props;
  props.size = kG;
  props.location_id = 1;
  AllocHandle h;
  ASSERT_TRUE(e.Create(props, &h).ok());
  ASSERT_TRUE(e.Map(va, kG, 0, h).ok());
  const std::array<DeviceAccess, 2> list{DeviceAccess{0, Access::kRead},
                                         DeviceAccess{1, Access::kReadWrite}};
  ASSERT_TRUE(e.SetAccess(va, kG, list).ok());
  OpTiming timing;
  const Status faulted = e.Fill(va, kCount, 1, &timing);  // on device 0
  EXPECT_STREQ(faulted.cuda_error(), "CUDA_ERROR_ILLEGAL_ADDRESS") << faulted.message();
  EXPECT_NE(e.FaultNote().find("device 0's access refused it"), std::string::npos) << e.FaultNote();
  EXPECT_FALSE(e.Synchronize().ok()) << "the fault is sticky, as a CUDA context's";
}

TEST_F(HostDevicesTest, AnExecReplaysWithTheDeviceItWasInstantiatedOn) {
  const DevicePtr va = Page(1);
  const DeviceAccess only1{1, Access::kReadWrite};
  ASSERT_TRUE(engine_->SetAccess(va, kG, std::span<const DeviceAccess>(&only1, 1)).ok());
  ASSERT_TRUE(engine_->SelectDevice(1).ok());
  ASSERT_TRUE(engine_->BeginCapture().ok());
  ASSERT_TRUE(engine_->Fill(va, kCount, 4, nullptr).ok());
  GraphHandle g;
  ASSERT_TRUE(engine_->EndCapture(&g).ok());
  ExecHandle on1, on0;
  ASSERT_TRUE(engine_->Instantiate(g, &on1).ok());
  ASSERT_TRUE(engine_->SelectDevice(0).ok());
  ASSERT_TRUE(engine_->Instantiate(g, &on0).ok());
  Status s = engine_->Replay(on1, nullptr);  // device 0 selected, the exec runs on device 1
  EXPECT_TRUE(s.ok()) << s.message();
  s = engine_->Replay(on0, nullptr);  // device 0 has no access
  EXPECT_NE(s.message().find("cuGraphLaunch: node 0"), std::string::npos) << s.message();
}

TEST_F(HostDevicesTest, MemoryOnAnUnknownDeviceIsRefused) {
  AllocProps props;
  props.size = kG;
  props.location_id = 2;
  AllocHandle h;
  EXPECT_EQ(engine_->Create(props, &h).message(),
            "cuMemCreate: CUDA_ERROR_INVALID_DEVICE: device 2 is not one of the 2 emulated devices "
            "(--host-devices)");
  DevicePtr va = Page(0);
  const DeviceAccess bad{3, Access::kRead};
  EXPECT_EQ(engine_->SetAccess(va, kG, std::span<const DeviceAccess>(&bad, 1)).message(),
            "cuMemSetAccess: CUDA_ERROR_INVALID_DEVICE: device 3 is not one of the 2 emulated "
            "devices (--host-devices)");
}

TEST(HostDevicesOptions, TheEnginesDeviceMustBeEmulated) {
  HostEngineOptions options;
  options.device = 2;
  StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine(options);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), Code::kUnavailable);
  EXPECT_EQ(engine.status().message(), "no host device 2: the host twin has 2 (--host-devices 2)");
  options.device = 1;
  engine = CreateHostEngine(options);
  ASSERT_TRUE(engine.ok());
  EXPECT_EQ((*engine)->info().ordinal, 1);
  options.device_count = 0;
  EXPECT_EQ(CreateHostEngine(options).status().code(), Code::kInvalidInput);
}

}  // namespace
}  // namespace vmm
