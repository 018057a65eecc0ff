// What a multi-device run needs beyond `requires:`: every device it names, VMM on each, and peer
// access for every pair a set_access creates (DescribeDevices).
#include "runner/pipeline/requirements.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vmm {
namespace {

// Two devices; `peers_of_1` is what device 1 can reach, `vmm_on_1` its VMM support.
class TwoDeviceEngine final : public Engine {
 public:
  TwoDeviceEngine(std::vector<int> peers_of_1, bool vmm_on_1)
      : peers_of_1_(std::move(peers_of_1)), vmm_on_1_(vmm_on_1) {
    info_.backend = "test";
    info_.name = "device zero";
    info_.vmm_supported = true;
    info_.device_count = 2;
    info_.peers = {0, 1};
  }
  const DeviceInfo& info() const override { return info_; }
  Status DescribeDevice(int ordinal, DeviceInfo* out) override {
    if (ordinal == 0) return Engine::DescribeDevice(ordinal, out);
    *out = info_;
    out->name = "device one";
    out->ordinal = 1;
    out->pci_bus_id = "0000:3b:00.0";
    out->vmm_supported = vmm_on_1_;
    out->peers = peers_of_1_;
    return Status::Ok();
  }

 private:
  DeviceInfo info_;
  std::vector<int> peers_of_1_;
  bool vmm_on_1_;
};

Plan TwoDevicePlan(std::vector<std::pair<int, int>> peers) {
  Plan plan;
  plan.devices = 2;
  plan.used_devices = {0, 1};
  plan.peer_access = std::move(peers);
  return plan;
}

TEST(DescribeDevicesTest, RecordsEveryDeviceTheScenarioNames) {
  TwoDeviceEngine engine({0, 1}, true);
  std::vector<report::DeviceRecord> devices;
  EXPECT_EQ(DescribeDevices(TwoDevicePlan({{1, 0}}), engine, &devices), "");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].name, "device zero");
  EXPECT_EQ(devices[1].name, "device one");
  EXPECT_EQ(devices[1].scenario_device, 1);
  EXPECT_EQ(devices[1].pci_bus_id, "0000:3b:00.0");
}

TEST(DescribeDevicesTest, AMissingPeerPairSkipsTheRun) {
  TwoDeviceEngine engine({1}, true);
  std::vector<report::DeviceRecord> devices;
  EXPECT_EQ(DescribeDevices(TwoDevicePlan({{0, 1}}), engine, &devices), "");  // 0 reaches 1
  devices.clear();
  EXPECT_EQ(DescribeDevices(TwoDevicePlan({{1, 0}}), engine, &devices),
            "device 1 (ordinal 1) cannot access the memory of device 0 (ordinal 0): "
            "cuDeviceCanAccessPeer is 0");
}

TEST(DescribeDevicesTest, ADeviceWithoutVmmSkipsTheRun) {
  TwoDeviceEngine engine({0, 1}, false);
  std::vector<report::DeviceRecord> devices;
  EXPECT_EQ(DescribeDevices(TwoDevicePlan({}), engine, &devices),
            "device 1 (ordinal 1) does not support virtual memory management");
}

}  // namespace
}  // namespace vmm
