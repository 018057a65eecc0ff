#include "runner/engine/engine.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

// A backend that implements nothing but info(): every call is refused by the base.
class BareEngine final : public Engine {
 public:
  BareEngine() { info_.backend = "bare"; }
  const DeviceInfo& info() const override { return info_; }

 private:
  DeviceInfo info_;
};

TEST(EngineTest, MethodsABackendDoesNotImplementAreRefusedByName) {
  BareEngine engine;
  DevicePtr va = 0;
  Status s = engine.Reserve(2 << 20, 0, &va);
  EXPECT_EQ(s.code(), Code::kRuntime);
  EXPECT_EQ(s.message(), "the bare backend does not implement Reserve");
  EXPECT_EQ(engine.Synchronize().message(), "the bare backend does not implement Synchronize");
  OpTiming timing;
  // Matmul is a convenience over LaunchKernel: the call refused is that one.
  EXPECT_EQ(engine.Matmul(MatmulArgs{}, &timing).message(),
            "the bare backend does not implement LaunchKernel");
}

TEST(EngineTest, ABackendOfOneDeviceServesItsOwnAndRefusesOthers) {
  BareEngine engine;
  EXPECT_TRUE(engine.SelectDevice(-1).ok());
  EXPECT_TRUE(engine.SelectDevice(0).ok());
  EXPECT_EQ(engine.SelectDevice(1).message(), "the bare backend does not implement SelectDevice");
  DeviceInfo info;
  EXPECT_TRUE(engine.DescribeDevice(0, &info).ok());
  EXPECT_EQ(info.backend, "bare");
  EXPECT_EQ(engine.DescribeDevice(1, &info).message(),
            "the bare backend does not implement DescribeDevice");
  Access access;
  EXPECT_EQ(engine.GetAccess(0, 0, &access).message(),
            "the bare backend does not implement GetAccess");
  EXPECT_EQ(engine.SetAccess(0, 2 << 20, Access::kRead).message(),  // the one-device form
            "the bare backend does not implement SetAccess");
}

}  // namespace
}  // namespace vmm
