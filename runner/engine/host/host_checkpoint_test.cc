// The host twin's checkpoint and restore against what driver 580 did on the H200
// (tools/checkpoint_probe.cc): the memory really leaves (its pages go back to the OS, the device's
// free memory rises) and comes back with its data at the same addresses; a restore without room
// fails and every later one fails for good; host-NUMA memory is never restored, host memory is;
// a lock waits for work in flight only as long as it is told.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "kernels/launch_config.h"
#include "runner/engine/host/host_engine.h"

namespace vmm {
namespace {

constexpr uint64_t kG = 2 << 20;

class HostCheckpointTest : public ::testing::Test {
 protected:
  void Open(uint64_t memory_bytes) {
    HostEngineOptions options{kG};
    options.memory_bytes = memory_bytes;
    StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine(options);
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    engine_ = std::move(engine).value();
  }
  void SetUp() override { Open(0); }
  uint64_t Free() {
    uint64_t free = 0, total = 0;
    EXPECT_TRUE(engine_->MemoryInfo(&free, &total).ok());
    return free;
  }
  // `bytes` of memory at `location`, mapped read_write at a new reservation.
  DevicePtr Mapped(uint64_t bytes, MemLocation location = MemLocation::kDevice) {
    AllocProps props;
    props.size = bytes;
    props.location = location;
    if (location == MemLocation::kHostNuma) props.location_id = 0;
    AllocHandle h;
    DevicePtr va = 0;
    EXPECT_TRUE(engine_->Create(props, &h).ok());
    EXPECT_TRUE(engine_->Reserve(bytes, 0, &va).ok());
    EXPECT_TRUE(engine_->Map(va, bytes, 0, h).ok());
    EXPECT_TRUE(engine_->SetAccess(va, bytes, Access::kReadWrite).ok());
    return va;
  }
  static const char* Error(const Status& s) { return s.cuda_error() ? s.cuda_error() : "none"; }
  std::unique_ptr<Engine> engine_;
};

TEST_F(HostCheckpointTest, TheMemoryLeavesAndComesBackWithItsData) {
  const DevicePtr va = Mapped(4 * kG);
  auto* words = reinterpret_cast<uint32_t*>(va);
  for (uint64_t i = 0; i < 4 * kG / 4; ++i) words[i] = static_cast<uint32_t>(i * 2654435761u);
  const uint64_t before = Free();
  CheckpointFacts facts;
  ASSERT_TRUE(engine_->CheckpointProcess(1000, &facts).ok());
  EXPECT_TRUE(engine_->Checkpointed());
  EXPECT_EQ(facts.freed_bytes, static_cast<int64_t>(4 * kG));
  EXPECT_EQ(facts.state, "checkpointed");
  EXPECT_EQ(Free(), before + 4 * kG);
  EXPECT_EQ(words[12345], 0u) << "the pages went back to the OS (the memfd's hole reads zero)";
  CheckpointFacts back;
  ASSERT_TRUE(engine_->RestoreProcess(&back).ok());
  EXPECT_FALSE(engine_->Checkpointed());
  EXPECT_EQ(back.freed_bytes, -static_cast<int64_t>(4 * kG));
  EXPECT_EQ(back.state, "running");
  EXPECT_EQ(Free(), before);
  for (uint64_t i = 0; i < 4 * kG / 4; ++i)
    ASSERT_EQ(words[i], static_cast<uint32_t>(i * 2654435761u)) << "word " << i;
  CheckpointFacts again;
  EXPECT_TRUE(engine_->CheckpointProcess(1000, &again).ok()) << "a second cycle works";
  EXPECT_TRUE(engine_->RestoreProcess(&again).ok());
}

TEST_F(HostCheckpointTest, ARestoreWithoutRoomFailsForGood) {
  Open(64 * kG);
  Mapped(16 * kG);
  CheckpointFacts facts;
  ASSERT_TRUE(engine_->CheckpointProcess(1000, &facts).ok());
  uint64_t held = 0, returned = 0;
  ASSERT_TRUE(engine_->HoldMemory(4 * kG, &held).ok());
  EXPECT_EQ(held, 60 * kG);
  Status refused = engine_->RestoreProcess(&facts);
  EXPECT_STREQ(Error(refused), "CUDA_ERROR_OUT_OF_MEMORY") << refused.message();
  EXPECT_TRUE(engine_->Checkpointed());
  ASSERT_TRUE(engine_->ReturnMemory(&returned).ok());
  Status again = engine_->RestoreProcess(&facts);
  EXPECT_STREQ(Error(again), "CUDA_ERROR_OPERATING_SYSTEM") << again.message();
  EXPECT_EQ(facts.state, "checkpointed");
  EXPECT_TRUE(engine_->Checkpointed());
}

// A hold made while checkpointed is the helper's (another process's): a later checkpoint of the
// process neither frees it nor brings it back, and it is given back whenever asked.
TEST_F(HostCheckpointTest, AHoldMadeWhileCheckpointedIsNotThisProcesssMemory) {
  Open(64 * kG);
  Mapped(4 * kG);
  CheckpointFacts facts;
  ASSERT_TRUE(engine_->CheckpointProcess(1000, &facts).ok());
  EXPECT_EQ(facts.freed_bytes, static_cast<int64_t>(4 * kG));
  uint64_t held = 0, returned = 0;
  ASSERT_TRUE(engine_->HoldMemory(40 * kG, &held).ok());
  EXPECT_EQ(held, 24 * kG);
  ASSERT_TRUE(engine_->RestoreProcess(&facts).ok()) << "24 + 4 granules fit in 64";
  ASSERT_TRUE(engine_->CheckpointProcess(1000, &facts).ok());
  EXPECT_EQ(facts.freed_bytes, static_cast<int64_t>(4 * kG)) << "the helper's hold stays";
  EXPECT_EQ(Free(), 40 * kG);
  ASSERT_TRUE(engine_->ReturnMemory(&returned).ok());
  EXPECT_EQ(returned, held);
  EXPECT_EQ(Free(), 64 * kG);
  ASSERT_TRUE(engine_->RestoreProcess(&facts).ok());
  EXPECT_EQ(Free(), 60 * kG);
}

TEST_F(HostCheckpointTest, HostNumaMemoryIsNotRestoredHostMemoryIs) {
  std::string why;
  ASSERT_TRUE(engine_->ProbeCapability(Capability::kHostNuma, &why).ok());
  if (!why.empty()) GTEST_SKIP() << "no host NUMA node 0 here: " << why;
  const DevicePtr host = Mapped(kG, MemLocation::kHost);
  std::memset(reinterpret_cast<void*>(host), 0x66, kG);
  CheckpointFacts facts;
  ASSERT_TRUE(engine_->CheckpointProcess(1000, &facts).ok());
  ASSERT_TRUE(engine_->RestoreProcess(&facts).ok()) << "host memory without a node is restored";
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(host)[kG - 1], 0x66);
  Mapped(kG, MemLocation::kHostNuma);
  ASSERT_TRUE(engine_->CheckpointProcess(1000, &facts).ok());
  Status refused = engine_->RestoreProcess(&facts);
  EXPECT_STREQ(Error(refused), "CUDA_ERROR_UNKNOWN") << refused.message();
  Status again = engine_->RestoreProcess(&facts);
  EXPECT_STREQ(Error(again), "CUDA_ERROR_OPERATING_SYSTEM") << again.message();
}

TEST_F(HostCheckpointTest, TheLockWaitsForWorkInFlightOnlyUntilItsTimeout) {
  const DevicePtr va = Mapped(kG);
  ASSERT_TRUE(
      engine_->Busy(va, kG / 4, 2'000'000'000, 7, kernels::BusyTouch::kEnd, 0, nullptr).ok());
  CheckpointFacts facts;
  Status refused = engine_->CheckpointProcess(50, &facts);
  EXPECT_STREQ(Error(refused), "CUDA_ERROR_NOT_READY") << refused.message();
  EXPECT_EQ(facts.state, "running");
  EXPECT_FALSE(engine_->Checkpointed());
  bool expired = true;
  ASSERT_TRUE(engine_->SetFlag(0, &expired).ok());
  ASSERT_TRUE(engine_->CheckpointProcess(5000, &facts).ok()) << "the kernel ended: the lock holds";
  ASSERT_TRUE(engine_->RestoreProcess(&facts).ok());
  EXPECT_EQ(reinterpret_cast<const uint32_t*>(va)[0], 7u) << "the busy's end write survived";
}

TEST_F(HostCheckpointTest, RestoreOfARunningProcessIsAnIllegalState) {
  CheckpointFacts facts;
  Status refused = engine_->RestoreProcess(&facts);
  EXPECT_STREQ(Error(refused), "CUDA_ERROR_ILLEGAL_STATE") << refused.message();
  ASSERT_TRUE(engine_->CheckpointProcess(1000, &facts).ok());
  Status twice = engine_->CheckpointProcess(1000, &facts);
  EXPECT_STREQ(Error(twice), "CUDA_ERROR_ILLEGAL_STATE") << twice.message();
}

}  // namespace
}  // namespace vmm
