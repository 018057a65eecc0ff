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
  EXPECT_EQ(engine.Matmul(MatmulArgs{}, &timing).message(),
            "the bare backend does not implement Matmul");
}

}  // namespace
}  // namespace vmm
