// GPU tests of what the host twin claims about the driver's queries (issue 9): granted properties
// read back, cuMemGetAddressRange on VMM memory, retain, cuMemGetInfo deltas, the reserve hint,
// granularities and capabilities. Each prints the raw answers, so a run on the H200 is also the
// evidence docs/backends.md cites; where an expectation fails, the twin (not the driver) is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "runner/engine/cuda/cuda_test_util.h"
#include "runner/engine/engine.h"

namespace vmm::testing_cuda {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

class CudaQueriesTest : public CudaEngineTest {
 protected:
  uint64_t Free() {
    uint64_t free = 0, total = 0;
    const Status s = engine_->MemoryInfo(&free, &total);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_GT(total, free);
    return free;
  }
  static AllocProps Props(uint64_t size, MemLocation where = MemLocation::kDevice) {
    AllocProps p;
    p.size = size;
    p.location = where;
    if (where == MemLocation::kHostNuma) p.location_id = 0;
    return p;
  }
};

// hold_memory on the GPU: after the hold, little more than `leave_free` is free (the driver may
// keep a little of it for itself, and a chunk it refused leaves a little more), a create bigger
// than that fails with OUT_OF_MEMORY, a smaller one fits, and the return gives it all back.
TEST_F(CudaQueriesTest, HeldMemoryLeavesWhatWasAskedAndFreeMemoryComesBack) {
  const uint64_t before = Free();
  constexpr uint64_t kLeave = 1024 * kMiB;
  uint64_t held = 0, returned = 0;
  ASSERT_OK(engine_->HoldMemory(kLeave, &held));
  const uint64_t during = Free();
  std::printf("[ hold     ] free before %llu, held %llu, free after %llu (asked to leave %llu)\n",
              static_cast<unsigned long long>(before), static_cast<unsigned long long>(held),
              static_cast<unsigned long long>(during), static_cast<unsigned long long>(kLeave));
  EXPECT_GT(held, before / 2);
  EXPECT_LE(during, kLeave + 64 * kMiB);
  AllocHandle big, small;
  const Status refused = engine_->Create(Props(2 * kLeave), &big);
  ASSERT_NE(refused.cuda_error(), nullptr) << refused.message();
  EXPECT_STREQ(refused.cuda_error(), "CUDA_ERROR_OUT_OF_MEMORY");
  ASSERT_OK(engine_->Create(Props(kLeave / 4), &small));
  ASSERT_OK(engine_->Release(small, nullptr));
  uint64_t again = 0;
  const Status second = engine_->HoldMemory(kLeave, &again);
  ASSERT_NE(second.cuda_error(), nullptr);
  EXPECT_STREQ(second.cuda_error(), "CUDA_ERROR_INVALID_VALUE");
  ASSERT_OK(engine_->ReturnMemory(&returned));
  EXPECT_EQ(returned, held);
  EXPECT_GE(Free() + 64 * kMiB, before);
}

TEST_F(CudaQueriesTest, GrantedPropertiesReadBack) {
  AllocHandle plain;
  ASSERT_OK(engine_->Create(Props(gran_), &plain));
  AllocProps g;
  ASSERT_OK(engine_->AllocProperties(plain, &g));
  EXPECT_EQ(g.location, MemLocation::kDevice);
  EXPECT_EQ(g.location_id, 0);
  EXPECT_FALSE(g.compression);
  EXPECT_FALSE(g.gpudirect_rdma);
  EXPECT_EQ(g.size, gran_);
  ASSERT_OK(engine_->Release(plain, nullptr));
  for (MemLocation where : {MemLocation::kHost, MemLocation::kHostNuma}) {
    AllocHandle h;
    const Status s = engine_->Create(Props(gran_, where), &h);
    std::printf("create in %s memory: %s\n", MemLocationName(where),
                s.ok() ? "ok" : s.message().c_str());
    if (!s.ok()) continue;  // the capability test says whether it should have worked
    ASSERT_OK(engine_->AllocProperties(h, &g));
    // Driver 580 reads a HOST allocation back as HOST_NUMA node 0.
    EXPECT_EQ(g.location, MemLocation::kHostNuma);
    { EXPECT_EQ(g.location_id, 0); }
    ASSERT_OK(engine_->Release(h, nullptr));
  }
  for (bool compression : {true, false}) {
    AllocProps p = Props(gran_);
    p.compression = compression;
    p.gpudirect_rdma = !compression;
    AllocHandle h;
    ASSERT_OK(engine_->Create(p, &h));
    ASSERT_OK(engine_->AllocProperties(h, &g));
    std::printf("asked %s: granted compression %d, rdma %d\n",
                compression ? "compression" : "the RDMA flag", g.compression, g.gpudirect_rdma);
    EXPECT_FALSE(compression ? g.gpudirect_rdma : g.compression) << "granted what was not asked";
    ASSERT_OK(engine_->Release(h, nullptr));
  }
}

TEST_F(CudaQueriesTest, CapabilitiesAgreeWithWhatCreateGrants) {
  for (Capability c : AllCapabilities()) {
    std::string why;
    ASSERT_OK(engine_->ProbeCapability(c, &why));
    std::printf("capability %-15s %s\n", CapabilityName(c), why.empty() ? "yes" : why.c_str());
    if (!why.empty()) continue;
    AllocProps p = TrialProps(c);
    ASSERT_OK(engine_->Granularity(p, GranularityKind::kMinimum, &p.size));
    AllocHandle h;
    ASSERT_OK(engine_->Create(p, &h));
    AllocProps g;
    ASSERT_OK(engine_->AllocProperties(h, &g));
    std::string missing;
    EXPECT_TRUE(Granted(c, g, &missing)) << CapabilityName(c) << ": " << missing;
    ASSERT_OK(engine_->Release(h, nullptr));
  }
  std::string why;
  ASSERT_OK(engine_->ProbeCapability(Capability::kPosixFd, &why));
  EXPECT_EQ(why, "") << "every VMM-capable Linux GPU exports POSIX fds";
}

// The twin answers the mapping (one allocation) that contains the address.
TEST_F(CudaQueriesTest, AddressRangeIsTheMappingThatContainsTheAddress) {
  DevicePtr va = 0;
  ASSERT_OK(engine_->Reserve(4 * gran_, 0, &va));
  AllocHandle a, b;
  ASSERT_OK(engine_->Create(gran_, &a));
  ASSERT_OK(engine_->Create(2 * gran_, &b));
  ASSERT_OK(engine_->Map(va, gran_, 0, a));
  ASSERT_OK(engine_->Map(va + gran_, 2 * gran_, 0, b));
  ASSERT_OK(engine_->SetAccess(va, 3 * gran_, Access::kReadWrite));
  DevicePtr base = 0;
  uint64_t size = 0;
  ASSERT_OK(engine_->AddressRange(va + gran_ + 12345, &base, &size));
  std::printf("range of va+gran+12345: base va%+lld, size %llu\n",
              static_cast<long long>(base) - static_cast<long long>(va),
              static_cast<unsigned long long>(size));
  EXPECT_EQ(base, va + gran_);
  EXPECT_EQ(size, 2 * gran_);
  ASSERT_OK(engine_->AddressRange(va + 100, &base, &size));
  EXPECT_EQ(base, va);
  EXPECT_EQ(size, gran_);
  const Status unmapped = engine_->AddressRange(va + 3 * gran_, &base, &size);
  std::printf("range of reserved, unmapped va: %s\n",
              unmapped.ok() ? "ok (!)" : unmapped.message().c_str());
  EXPECT_FALSE(unmapped.ok()) << "the twin says CUDA_ERROR_NOT_FOUND";
  ASSERT_OK(engine_->Unmap(va, 3 * gran_, nullptr));
  ASSERT_OK(engine_->Release(a, nullptr));
  ASSERT_OK(engine_->Release(b, nullptr));
  ASSERT_OK(engine_->Free(va, 4 * gran_));
}

TEST_F(CudaQueriesTest, RetainIsTheSameMemoryAndOutlivesTheOriginalHandle) {
  DevicePtr va = 0, other_va = 0;
  AllocHandle h, other;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(gran_, &va, &h));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(gran_, &other_va, &other));
  const uint64_t count = gran_ / sizeof(float);
  ASSERT_OK(engine_->Fill(va, count, 9, nullptr));
  AllocHandle retained;
  ASSERT_OK(engine_->Retain(va + 4096, &retained));
  bool same = false;
  ASSERT_OK(engine_->SameAllocation(h, retained, &same));
  EXPECT_TRUE(same);
  ASSERT_OK(engine_->SameAllocation(other, retained, &same));
  EXPECT_FALSE(same);
  // The data probe put back what it flipped.
  uint64_t mismatches = 0;
  std::string diff = DescribeMismatches(Expected(9, count), Read(va, count), &mismatches);
  EXPECT_EQ(mismatches, 0u) << diff;
  ASSERT_OK(engine_->Release(h, nullptr));
  DevicePtr second = 0;
  ASSERT_OK(engine_->Reserve(gran_, 0, &second));
  ASSERT_OK(engine_->Map(second, gran_, 0, retained));
  ASSERT_OK(engine_->SetAccess(second, gran_, Access::kReadWrite));
  diff = DescribeMismatches(Expected(9, count), Read(second, count), &mismatches);
  EXPECT_EQ(mismatches, 0u) << "the retained handle maps the same memory:" << diff;
  ASSERT_OK(engine_->Unmap(second, gran_, nullptr));
  ASSERT_OK(engine_->Unmap(va, gran_, nullptr));
  ASSERT_OK(engine_->Release(retained, nullptr));
  ASSERT_OK(engine_->Free(second, gran_));
  ASSERT_OK(engine_->Free(va, gran_));
  ASSERT_OK(engine_->Unmap(other_va, gran_, nullptr));
  ASSERT_OK(engine_->Release(other, nullptr));
  ASSERT_OK(engine_->Free(other_va, gran_));
}

// cuMemGetInfo counts the whole device: the bounds leave room for the driver's own allocations.
// "FreeMemory" in the name makes CTest run it alone (runner/engine/cuda/CMakeLists.txt).
TEST_F(CudaQueriesTest, FreeMemoryFollowsCreateReleaseWhileMappedAndUnmap) {
  const uint64_t size = 64 * kMiB, slack = 16 * kMiB;
  const uint64_t start = Free();
  AllocHandle h;
  ASSERT_OK(engine_->Create(size, &h));
  const uint64_t created = Free();
  std::printf("create 64 MiB: free -%lld bytes\n", static_cast<long long>(start - created));
  EXPECT_GE(start - created, size - slack);
  EXPECT_LE(start - created, size + slack);
  DevicePtr va = 0;
  ASSERT_OK(engine_->Reserve(size, 0, &va));
  ASSERT_OK(engine_->Map(va, size, 0, h));
  ASSERT_OK(engine_->Release(h, nullptr));
  const uint64_t released = Free();
  std::printf("release while mapped: free %+lld bytes\n",
              static_cast<long long>(released) - static_cast<long long>(created));
  EXPECT_LE(released, created + slack) << "a release while mapped frees nothing";
  ASSERT_OK(engine_->Unmap(va, size, nullptr));
  const uint64_t unmapped = Free();
  std::printf("unmap: free %+lld bytes\n",
              static_cast<long long>(unmapped) - static_cast<long long>(released));
  EXPECT_GE(unmapped, released + size - slack) << "the last unmap frees it";
  ASSERT_OK(engine_->Free(va, size));
  AllocHandle host;
  const uint64_t before_host = Free();
  if (engine_->Create(Props(size, MemLocation::kHost), &host).ok()) {
    const uint64_t after_host = Free();
    std::printf("create 64 MiB of host memory: device free %+lld bytes\n",
                static_cast<long long>(after_host) - static_cast<long long>(before_host));
    EXPECT_LE(before_host - std::min(before_host, after_host), slack)
        << "host memory is not device memory";
    ASSERT_OK(engine_->Release(host, nullptr));
  }
}

TEST_F(CudaQueriesTest, AReserveHintIsHonouredWhereFreeAndMovedWhereTaken) {
  DevicePtr span = 0;
  ASSERT_OK(engine_->Reserve(4 * gran_, 0, &span));
  ASSERT_OK(engine_->Free(span, 4 * gran_));
  DevicePtr a = 0, b = 0, c = 0;
  ASSERT_OK(engine_->Reserve(gran_, 0, span, &a));
  ASSERT_OK(engine_->Reserve(gran_, 0, a + gran_, &b));
  ASSERT_OK(engine_->Reserve(gran_, 0, a, &c));  // a taken hint is not an error
  std::printf("hint at a freed span: %s; right after it: %s; on a live range: %s\n",
              a == span ? "honoured" : "moved", b == a + gran_ ? "honoured" : "moved",
              c == a ? "honoured (!)" : "moved");
  EXPECT_EQ(a, span);
  EXPECT_EQ(b, a + gran_);
  EXPECT_NE(c, a);
  // Right after a fresh reservation (no span freed first): what the H200 does, for the docs.
  DevicePtr d = 0, e = 0;
  ASSERT_OK(engine_->Reserve(gran_, 0, &d));
  ASSERT_OK(engine_->Reserve(gran_, 0, d + gran_, &e));
  std::printf("hint right after a fresh reservation: %s\n", e == d + gran_ ? "honoured" : "moved");
  for (DevicePtr va : {a, b, c, d, e}) ASSERT_OK(engine_->Free(va, gran_));
}

TEST_F(CudaQueriesTest, GranularityOfEachLocation) {
  for (MemLocation where : {MemLocation::kDevice, MemLocation::kHost, MemLocation::kHostNuma}) {
    uint64_t minimum = 0, recommended = 0;
    const Status s = engine_->Granularity(Props(0, where), GranularityKind::kMinimum, &minimum);
    if (!s.ok()) {
      std::printf("granularity of %s memory: %s\n", MemLocationName(where), s.message().c_str());
      EXPECT_NE(where, MemLocation::kDevice);
      continue;
    }
    ASSERT_OK(engine_->Granularity(Props(0, where), GranularityKind::kRecommended, &recommended));
    std::printf("granularity of %s memory: minimum %llu, recommended %llu\n",
                MemLocationName(where), static_cast<unsigned long long>(minimum),
                static_cast<unsigned long long>(recommended));
    EXPECT_EQ(minimum & (minimum - 1), 0u);
    EXPECT_EQ(recommended % minimum, 0u);
    if (where == MemLocation::kDevice) {
      EXPECT_EQ(minimum, engine_->info().granularity_min);
    }
  }
}

}  // namespace
}  // namespace vmm::testing_cuda
