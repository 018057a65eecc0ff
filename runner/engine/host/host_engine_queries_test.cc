// The host twin's answers to the queries (memory accounting, retain, address range, granularity,
// granted properties, capabilities) and its reserve hint, against the driver's semantics.
#include <gtest/gtest.h>

#include <string>

#include "runner/engine/host/host_engine.h"
#include "runner/engine/host/host_vmm.h"

namespace vmm {
namespace {

constexpr uint64_t kG = 2 << 20;  // granularity used by these tests

class HostQueriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine({kG});
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    engine_ = std::move(engine).value();
  }
  uint64_t Free() {
    uint64_t free = 0, total = 0;
    EXPECT_TRUE(engine_->MemoryInfo(&free, &total).ok());
    EXPECT_EQ(total, engine_->info().total_memory);
    return free;
  }
  AllocHandle Create(const AllocProps& props) {
    AllocHandle h;
    Status s = engine_->Create(props, &h);
    EXPECT_TRUE(s.ok()) << s.message();
    return h;
  }
  // A reservation of `size` with `handle` mapped at its start, read_write.
  DevicePtr Mapped(AllocHandle handle, uint64_t size) {
    DevicePtr va = 0;
    EXPECT_TRUE(engine_->Reserve(size, 0, &va).ok());
    EXPECT_TRUE(engine_->Map(va, size, 0, handle).ok());
    EXPECT_TRUE(engine_->SetAccess(va, size, Access::kReadWrite).ok());
    return va;
  }
  static AllocProps Plain(uint64_t size) {
    AllocProps p;
    p.size = size;
    return p;
  }
  std::unique_ptr<Engine> engine_;
};

TEST_F(HostQueriesTest, DeviceMemoryIsUsedUntilTheLastHandleAndMappingGo) {
  const uint64_t start = Free();
  AllocHandle h = Create(Plain(2 * kG));
  EXPECT_EQ(Free(), start - 2 * kG);
  const DevicePtr va = Mapped(h, 2 * kG);
  ASSERT_TRUE(engine_->Release(h, nullptr).ok());
  EXPECT_EQ(Free(), start - 2 * kG) << "a release while mapped frees nothing";
  ASSERT_TRUE(engine_->Unmap(va, 2 * kG, nullptr).ok());
  EXPECT_EQ(Free(), start) << "the unmap of the last mapping frees it";
  ASSERT_TRUE(engine_->Free(va, 2 * kG).ok());
}

// hold_memory on the twin: what leaves `leave_free` free counts as used, in whole granules, until
// it is given back; a second hold is refused; a hold of more than is free takes nothing.
TEST_F(HostQueriesTest, HeldMemoryCountsAsUsedUntilItIsReturned) {
  const uint64_t before = Free();
  uint64_t held = 0, returned = 0;
  ASSERT_TRUE(engine_->HoldMemory(3 * kG, &held).ok());
  EXPECT_EQ(held, (before - 3 * kG) / kG * kG);
  EXPECT_EQ(Free(), before - held);
  AllocHandle h;
  Status too_big = engine_->Create(AllocProps{.size = 4 * kG}, &h);
  ASSERT_NE(too_big.cuda_error(), nullptr);
  EXPECT_STREQ(too_big.cuda_error(), "CUDA_ERROR_OUT_OF_MEMORY");
  Status again = engine_->HoldMemory(kG, &held);
  ASSERT_NE(again.cuda_error(), nullptr);
  EXPECT_STREQ(again.cuda_error(), "CUDA_ERROR_INVALID_VALUE");
  ASSERT_TRUE(engine_->ReturnMemory(&returned).ok());
  EXPECT_EQ(returned, (before - 3 * kG) / kG * kG);
  EXPECT_EQ(Free(), before);
  ASSERT_TRUE(engine_->HoldMemory(before + kG, &held).ok());
  EXPECT_EQ(held, 0u);
  ASSERT_TRUE(engine_->ReturnMemory(&returned).ok());
  EXPECT_EQ(returned, 0u);
}

TEST_F(HostQueriesTest, HostMemoryIsNotDeviceMemory) {
  const uint64_t start = Free();
  AllocProps props = Plain(kG);
  props.location = MemLocation::kHost;
  AllocHandle h = Create(props);
  EXPECT_EQ(Free(), start);
  ASSERT_TRUE(engine_->Release(h, nullptr).ok());
}

TEST_F(HostQueriesTest, RetainGivesAnotherHandleToTheMappedMemory) {
  AllocHandle h = Create(Plain(kG));
  const DevicePtr va = Mapped(h, kG);
  ASSERT_TRUE(engine_->Fill(va, kG / 4, 3, nullptr).ok());
  AllocHandle retained;
  ASSERT_TRUE(engine_->Retain(va + 4096, &retained).ok());
  bool same = false;
  ASSERT_TRUE(engine_->SameAllocation(h, retained, &same).ok());
  EXPECT_TRUE(same);
  // The original handle goes; the retained one maps the same memory at a second address.
  ASSERT_TRUE(engine_->Release(h, nullptr).ok());
  const uint64_t before = Free();
  const DevicePtr second = Mapped(retained, kG);
  uint32_t a = 0, b = 1;
  ASSERT_TRUE(engine_->CopyToHost(va + 64, 4, &a).ok());
  ASSERT_TRUE(engine_->CopyToHost(second + 64, 4, &b).ok());
  EXPECT_EQ(a, b);
  EXPECT_EQ(Free(), before) << "a second mapping uses no more memory";
  ASSERT_TRUE(engine_->Unmap(va, kG, nullptr).ok());
  ASSERT_TRUE(engine_->Unmap(second, kG, nullptr).ok());
  EXPECT_EQ(Free(), before) << "the retained handle still holds the memory";
  ASSERT_TRUE(engine_->Release(retained, nullptr).ok());
  EXPECT_EQ(Free(), before + kG);
  EXPECT_FALSE(engine_->Release(retained, nullptr).ok()) << "released as often as retained";
}

TEST_F(HostQueriesTest, RetainAndRangeNeedAMappedAddress) {
  DevicePtr va = 0;
  ASSERT_TRUE(engine_->Reserve(kG, 0, &va).ok());
  AllocHandle h;
  Status s = engine_->Retain(va, &h);
  EXPECT_NE(s.message().find("cuMemRetainAllocationHandle: CUDA_ERROR_INVALID_VALUE"),
            std::string::npos)
      << s.message();
  DevicePtr base = 0;
  uint64_t size = 0;
  s = engine_->AddressRange(va, &base, &size);
  EXPECT_NE(s.message().find("cuMemGetAddressRange: CUDA_ERROR_NOT_FOUND"), std::string::npos)
      << s.message();
}

TEST_F(HostQueriesTest, TheRangeOfAnAddressIsItsMapping) {
  DevicePtr va = 0;
  ASSERT_TRUE(engine_->Reserve(4 * kG, 0, &va).ok());
  AllocHandle a = Create(Plain(kG)), b = Create(Plain(2 * kG));
  ASSERT_TRUE(engine_->Map(va, kG, 0, a).ok());
  ASSERT_TRUE(engine_->Map(va + kG, 2 * kG, 0, b).ok());
  DevicePtr base = 0;
  uint64_t size = 0;
  // As on the H200: a mapping is found once the device has access to it.
  EXPECT_EQ(engine_->AddressRange(va + kG + 12345, &base, &size).message().substr(0, 42),
            "cuMemGetAddressRange: CUDA_ERROR_NOT_FOUND");
  ASSERT_TRUE(engine_->SetAccess(va, 3 * kG, Access::kRead).ok());
  ASSERT_TRUE(engine_->AddressRange(va + kG + 12345, &base, &size).ok());
  EXPECT_EQ(base, va + kG);
  EXPECT_EQ(size, 2 * kG);
  bool same = true;
  ASSERT_TRUE(engine_->SameAllocation(a, b, &same).ok());
  EXPECT_FALSE(same);
}

TEST_F(HostQueriesTest, GranularityIsTheConfiguredOneForEveryLocation) {
  for (MemLocation where : {MemLocation::kDevice, MemLocation::kHost}) {
    AllocProps props;
    props.location = where;
    for (GranularityKind kind : {GranularityKind::kMinimum, GranularityKind::kRecommended}) {
      uint64_t g = 0;
      ASSERT_TRUE(engine_->Granularity(props, kind, &g).ok());
      EXPECT_EQ(g, kG);
    }
  }
  AllocProps missing;
  missing.location = MemLocation::kHostNuma;
  missing.location_id = 1000;
  uint64_t g = 0;
  Status s = engine_->Granularity(missing, GranularityKind::kMinimum, &g);
  EXPECT_EQ(s.message(),
            "cuMemGetAllocationGranularity: CUDA_ERROR_INVALID_VALUE: host NUMA node 1000 does "
            "not exist");
}

TEST_F(HostQueriesTest, GrantsLocationsAndPosixFdsButNeverCompressionOrRdma) {
  AllocProps props = Plain(kG);
  props.location = MemLocation::kHost;
  props.compression = true;
  props.gpudirect_rdma = true;
  AllocHandle h = Create(props);
  AllocProps granted;
  ASSERT_TRUE(engine_->AllocProperties(h, &granted).ok());
  EXPECT_EQ(granted.location, MemLocation::kHostNuma);  // as driver 580 reads HOST back
  EXPECT_FALSE(granted.compression);
  EXPECT_FALSE(granted.gpudirect_rdma);
  ASSERT_TRUE(engine_->Release(h, nullptr).ok());
  EXPECT_FALSE(engine_->AllocProperties(h, &granted).ok()) << "a released handle";
  // Device memory may ask for a POSIX fd; host memory may not (the H200 refused it).
  AllocProps shared = Plain(kG);
  shared.handle_types = kHandleTypePosixFd;
  h = Create(shared);
  ASSERT_TRUE(engine_->AllocProperties(h, &granted).ok());
  EXPECT_EQ(granted.handle_types, kHandleTypePosixFd);
  ASSERT_TRUE(engine_->Release(h, nullptr).ok());
  props.handle_types = kHandleTypePosixFd;
  AllocHandle refused;
  EXPECT_EQ(engine_->Create(props, &refused).message(),
            "cuMemCreate: CUDA_ERROR_INVALID_VALUE: host memory cannot be exported as a POSIX fd");
}

TEST_F(HostQueriesTest, DeviceMemoryCountsAgainstTheDeviceItLivesOn) {
  // Memory on device 1 is granted there and takes nothing from device 0's free memory; device 1's
  // free memory (asked with device 1 selected, as cuMemGetInfo asks the current context) drops.
  const uint64_t start = Free();
  AllocProps on1 = Plain(2 * kG);
  on1.location_id = 1;
  AllocHandle h = Create(on1);
  AllocProps granted;
  ASSERT_TRUE(engine_->AllocProperties(h, &granted).ok());
  EXPECT_EQ(granted.location, MemLocation::kDevice);
  EXPECT_EQ(granted.location_id, 1);
  EXPECT_EQ(Free(), start) << "device 0 is untouched";
  ASSERT_TRUE(engine_->SelectDevice(1).ok());
  EXPECT_EQ(Free(), start - 2 * kG);
  ASSERT_TRUE(engine_->Release(h, nullptr).ok());
  EXPECT_EQ(Free(), start);
}

TEST_F(HostQueriesTest, RefusesWhatItCannotProvideInTheDriversWords) {
  AllocHandle h;
  AllocProps fabric = Plain(kG);
  fabric.handle_types = kHandleTypeFabric;
  EXPECT_EQ(engine_->Create(fabric, &h).message(),
            "cuMemCreate: CUDA_ERROR_NOT_PERMITTED: fabric handles need an IMEX channel; the host "
            "twin has none");
  AllocProps past = Plain(kG);  // one past the emulated devices
  past.location_id = kDefaultHostDevices;
  EXPECT_EQ(engine_->Create(past, &h).message(),
            "cuMemCreate: CUDA_ERROR_INVALID_DEVICE: device " +
                std::to_string(kDefaultHostDevices) + " is not one of the " +
                std::to_string(kDefaultHostDevices) + " emulated devices (--host-devices)");
  AllocProps node = Plain(kG);
  node.location = MemLocation::kHostNuma;
  node.location_id = 1000;
  EXPECT_EQ(engine_->Create(node, &h).message(),
            "cuMemCreate: CUDA_ERROR_INVALID_VALUE: host NUMA node 1000 does not exist");
}

TEST_F(HostQueriesTest, HostNumaMemoryLivesOnItsNode) {
  if (!host::NumaNodeExists(0)) GTEST_SKIP() << "no NUMA node 0 on this machine";
  AllocProps props = Plain(kG);
  props.location = MemLocation::kHostNuma;
  props.location_id = 0;
  AllocHandle h;
  Status s = engine_->Create(props, &h);
  if (s.message().find("CUDA_ERROR_NOT_SUPPORTED") != std::string::npos)
    GTEST_SKIP() << "the kernel refuses memory policies here: " << s.message();
  ASSERT_TRUE(s.ok()) << s.message();
  AllocProps granted;
  ASSERT_TRUE(engine_->AllocProperties(h, &granted).ok());
  EXPECT_EQ(granted.location, MemLocation::kHostNuma);
  EXPECT_EQ(granted.location_id, 0);
  const DevicePtr va = Mapped(h, kG);
  EXPECT_TRUE(engine_->Fill(va, kG / 4, 1, nullptr).ok());
  ASSERT_TRUE(engine_->Unmap(va, kG, nullptr).ok());
  ASSERT_TRUE(engine_->Release(h, nullptr).ok());
}

TEST_F(HostQueriesTest, CapabilitiesAreDecidedByTrial) {
  std::string why;
  for (Capability c : {Capability::kPosixFd, Capability::kHostLocation}) {
    ASSERT_TRUE(engine_->ProbeCapability(c, &why).ok());
    EXPECT_EQ(why, "") << CapabilityName(c);
  }
  ASSERT_TRUE(engine_->ProbeCapability(Capability::kFabric, &why).ok());
  EXPECT_EQ(why,
            "a trial create of 2 MiB was refused: cuMemCreate: CUDA_ERROR_NOT_PERMITTED: fabric "
            "handles need an IMEX channel; the host twin has none");
  ASSERT_TRUE(engine_->ProbeCapability(Capability::kCompression, &why).ok());
  EXPECT_EQ(why,
            "a trial create of 2 MiB succeeded, but compression was not granted (read back "
            "uncompressed)");
  ASSERT_TRUE(engine_->ProbeCapability(Capability::kGpuDirectRdma, &why).ok());
  EXPECT_NE(why.find("the GPUDirect RDMA flag was not granted"), std::string::npos) << why;
  uint64_t free = 0, total = 0;
  ASSERT_TRUE(engine_->MemoryInfo(&free, &total).ok());
  EXPECT_EQ(free, total) << "the trials released what they made";
}

TEST_F(HostQueriesTest, AReserveHintIsHonouredWhereFreeAndMovedWhereTaken) {
  DevicePtr span = 0;
  ASSERT_TRUE(engine_->Reserve(4 * kG, 0, &span).ok());
  ASSERT_TRUE(engine_->Free(span, 4 * kG).ok());
  DevicePtr a = 0, b = 0, c = 0;
  ASSERT_TRUE(engine_->Reserve(kG, 0, span, &a).ok());
  EXPECT_EQ(a, span);
  ASSERT_TRUE(engine_->Reserve(kG, 0, a + kG, &b).ok());
  EXPECT_EQ(b, a + kG);
  ASSERT_TRUE(engine_->Reserve(kG, 0, a, &c).ok()) << "a taken hint is not an error";
  EXPECT_NE(c, a);
  EXPECT_EQ(c % kG, 0u) << "the alternative keeps the alignment";
  DevicePtr d = 0;
  ASSERT_TRUE(engine_->Reserve(kG, 0, span + 4 * kG + 4096, &d).ok()) << "a misaligned hint";
  EXPECT_EQ(d % kG, 0u);
  for (DevicePtr va : {a, b, c, d}) EXPECT_TRUE(engine_->Free(va, kG).ok());
}

}  // namespace
}  // namespace vmm
