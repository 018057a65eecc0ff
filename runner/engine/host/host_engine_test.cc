// The host engine's VMM semantics, rule by rule, and its resource hygiene.
#include "runner/engine/host/host_engine.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "kernels/datagen.h"
#include "runner/base/format.h"

namespace vmm {
namespace {

constexpr uint64_t kG = 64 * 1024;  // granularity used by these tests

class HostEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine({kG});
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    engine_ = std::move(engine).value();
  }
  DevicePtr Reserve(uint64_t size) {
    DevicePtr va = 0;
    EXPECT_TRUE(engine_->Reserve(size, 0, &va).ok());
    return va;
  }
  AllocHandle Create(uint64_t size) {
    AllocHandle h;
    EXPECT_TRUE(engine_->Create(size, &h).ok());
    return h;
  }
  // Reserve + create + map + set_access(read_write) of one buffer of `size` bytes.
  DevicePtr Buffer(uint64_t size, AllocHandle* handle = nullptr) {
    DevicePtr va = Reserve(size);
    AllocHandle h = Create(size);
    EXPECT_TRUE(engine_->Map(va, size, 0, h).ok());
    EXPECT_TRUE(engine_->SetAccess(va, size, Access::kReadWrite).ok());
    if (handle != nullptr) *handle = h;
    return va;
  }
  std::string Msg(Status s) { return s.message(); }

  std::unique_ptr<Engine> engine_;
  SyncNote note_;
};

TEST(HostEngineCreate, RejectsAGranularityThatIsNotAPowerOfTwoPageMultiple) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine({3 * page});
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), Code::kInvalidInput);
  EXPECT_EQ(engine.status().message(), "host backend: granularity " + FormatBytes(3 * page) +
                                           " is not a power-of-two multiple of the page size " +
                                           FormatBytes(page));
  StatusOr<std::unique_ptr<Engine>> defaulted = CreateHostEngine({});
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ((*defaulted)->info().granularity_recommended, page);
}

TEST_F(HostEngineTest, DescribesTheHost) {
  struct utsname uts;
  ASSERT_EQ(uname(&uts), 0);
  const DeviceInfo& info = engine_->info();
  EXPECT_EQ(info.backend, "host");
  EXPECT_EQ(info.name.rfind("host CPU (", 0), 0u) << info.name;
  EXPECT_EQ(info.driver_version, uts.release);
  EXPECT_TRUE(info.vmm_supported);
  EXPECT_EQ(info.granularity_min, static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(info.granularity_recommended, kG);
  EXPECT_GT(info.total_memory, 0u);
}

TEST_F(HostEngineTest, ReserveAlignsAndChecksItsArguments) {
  DevicePtr va = 0;
  ASSERT_TRUE(engine_->Reserve(kG, 1 << 24, &va).ok());
  EXPECT_EQ(va % (1 << 24), 0u);
  EXPECT_EQ(Msg(engine_->Reserve(0, 0, &va)),
            "cuMemAddressReserve: CUDA_ERROR_INVALID_VALUE: size is 0");
  EXPECT_EQ(Msg(engine_->Reserve(kG + 4096, 0, &va)),
            "cuMemAddressReserve: CUDA_ERROR_INVALID_VALUE: size 0x11000 is not a multiple of the "
            "granularity 0x10000");
  EXPECT_EQ(
      Msg(engine_->Reserve(kG, 3 * kG, &va)),
      "cuMemAddressReserve: CUDA_ERROR_INVALID_VALUE: alignment 0x30000 is not a power of two");
  AllocHandle h;
  EXPECT_EQ(Msg(engine_->Create(kG / 2, &h)),
            "cuMemCreate: CUDA_ERROR_INVALID_VALUE: size 0x8000 is not a multiple of the "
            "granularity 0x10000");
}

TEST_F(HostEngineTest, MapEnforcesTheDriverRules) {
  const DevicePtr va = Reserve(4 * kG);
  const AllocHandle h = Create(2 * kG);
  const std::string e = "cuMemMap: CUDA_ERROR_INVALID_VALUE: ";
  const std::string ns = "cuMemMap: CUDA_ERROR_NOT_SUPPORTED: ";
  EXPECT_EQ(Msg(engine_->Map(va + 4096, 2 * kG, 0, h)),
            e + "address " + Hex(va + 4096) + " is not a multiple of the granularity 0x10000");
  EXPECT_EQ(Msg(engine_->Map(va, 0, 0, h)), e + "size is 0");
  EXPECT_EQ(Msg(engine_->Map(va, kG + 4096, 0, h)),
            ns + "size 0x11000 is not a multiple of the granularity 0x10000");
  EXPECT_EQ(Msg(engine_->Map(va, 2 * kG, 4096, h)),
            ns + "offset 0x1000 is not a multiple of the granularity 0x10000");
  EXPECT_EQ(Msg(engine_->Map(va, kG, 0, AllocHandle{999})), e + "unknown or released handle 0x3e7");
  EXPECT_EQ(
      Msg(engine_->Map(va, 2 * kG, kG, h)),
      ns + "offset 0x10000 + size 0x20000 exceeds the size 0x20000 of handle " + Hex(h.value));
  EXPECT_EQ(Msg(engine_->Map(va, kG, kG, h)),
            ns + "offset 0x10000, size 0x10000 is only part of handle " + Hex(h.value) +
                " (0x20000 bytes); the driver maps whole handles only");
  EXPECT_EQ(Msg(engine_->Map(va + 3 * kG, 2 * kG, 0, h)),
            e + "[" + Hex(va + 3 * kG) + ", +0x20000) extends past the end of the reservation [" +
                Hex(va) + ", +0x40000)");
  const DevicePtr outside = va + (uint64_t{1} << 40);
  EXPECT_EQ(Msg(engine_->Map(outside, 2 * kG, 0, h)),
            e + "[" + Hex(outside) + ", +0x20000) is not inside a reservation");
  ASSERT_TRUE(engine_->Map(va + kG, 2 * kG, 0, h).ok());
  EXPECT_EQ(Msg(engine_->Map(va, 2 * kG, 0, h)),
            e + "[" + Hex(va) + ", +0x20000) overlaps the mapping [" + Hex(va + kG) +
                ", +0x20000) of handle " + Hex(h.value));
  ASSERT_TRUE(engine_->Release(h, &note_).ok());
  EXPECT_EQ(Msg(engine_->Map(va + 3 * kG, kG, 0, h)),
            e + "unknown or released handle " + Hex(h.value));
  EXPECT_EQ(Msg(engine_->Release(h, &note_)),
            "cuMemRelease: CUDA_ERROR_INVALID_VALUE: unknown or released handle " + Hex(h.value));
}

TEST_F(HostEngineTest, ANewMappingHasNoAccessUntilSetAccess) {
  const DevicePtr va = Reserve(kG);
  ASSERT_TRUE(engine_->Map(va, kG, 0, Create(kG)).ok());
  EXPECT_EQ(Msg(engine_->Fill(va, 16, 1, nullptr)),
            "vmm_fill_f32: CUDA_ERROR_ILLEGAL_ADDRESS: write of 'dst' [" + Hex(va) +
                ", +0x40) touches " + Hex(va) + " with access 'none' (needs 'read_write')");
  float out[4];
  EXPECT_EQ(Msg(engine_->CopyToHost(va + 8, sizeof out, out)),
            "cuMemcpyDtoH: CUDA_ERROR_INVALID_VALUE: read of 'src' [" + Hex(va + 8) +
                ", +0x10) touches " + Hex(va + 8) + " with access 'none' (needs 'read')");
  ASSERT_TRUE(engine_->SetAccess(va, kG, Access::kReadWrite).ok());
  EXPECT_TRUE(engine_->Fill(va, 16, 1, nullptr).ok());
}

TEST_F(HostEngineTest, AccessIsEnforcedPerMapping) {
  const DevicePtr va = Reserve(3 * kG);
  ASSERT_TRUE(engine_->Map(va, kG, 0, Create(kG)).ok());
  ASSERT_TRUE(engine_->Map(va + kG, kG, 0, Create(kG)).ok());
  ASSERT_TRUE(engine_->SetAccess(va, 2 * kG, Access::kReadWrite).ok());
  ASSERT_TRUE(engine_->Fill(va, 2 * kG / 4, 9, nullptr).ok());
  ASSERT_TRUE(engine_->SetAccess(va + kG, kG, Access::kRead).ok());  // second mapping read-only
  float x = 0;
  EXPECT_TRUE(engine_->CopyToHost(va + kG, 4, &x).ok());
  EXPECT_EQ(x, datagen::FillValue(9, kG / 4));
  // A write that starts in the writable mapping and runs into the read-only one names where.
  EXPECT_EQ(Msg(engine_->Fill(va + kG - 8, 4, 1, nullptr)),
            "vmm_fill_f32: CUDA_ERROR_ILLEGAL_ADDRESS: write of 'dst' [" + Hex(va + kG - 8) +
                ", +0x10) touches " + Hex(va + kG) + " with access 'read' (needs 'read_write')");
  EXPECT_TRUE(engine_->Fill(va, kG / 4, 1, nullptr).ok());
  ASSERT_TRUE(engine_->SetAccess(va + kG, kG, Access::kNone).ok());
  uint64_t hash = 0;
  EXPECT_EQ(Msg(engine_->Checksum(va, 2 * kG / 4, &hash)),
            "vmm_checksum_u32: CUDA_ERROR_ILLEGAL_ADDRESS: read of 'src' [" + Hex(va) +
                ", +0x20000) touches " + Hex(va + kG) + " with access 'none' (needs 'read')");
  DataCompareResult cmp;
  EXPECT_EQ(Msg(engine_->CompareData(va, DataRef::Device(va + 2 * kG), 4, {}, &cmp)),
            "vmm_compare_count: CUDA_ERROR_ILLEGAL_ADDRESS: read of 'b' [" + Hex(va + 2 * kG) +
                ", +0x10) touches the unmapped address " + Hex(va + 2 * kG));
  EXPECT_EQ(Msg(engine_->CompareValue(va + kG, 0, 4, 4, &cmp)),
            "vmm_value_count: CUDA_ERROR_ILLEGAL_ADDRESS: read of 'a' [" + Hex(va + kG) +
                ", +0x10) touches " + Hex(va + kG) + " with access 'none' (needs 'read')");
  ASSERT_TRUE(engine_->SetAccess(va + kG, kG, Access::kRead).ok());
  EXPECT_TRUE(engine_->Checksum(va, 2 * kG / 4, &hash).ok());  // read-only suffices to read
}

TEST_F(HostEngineTest, UnmapTakesOnlyWholeMappings) {
  const DevicePtr va = Reserve(4 * kG);
  ASSERT_TRUE(engine_->Map(va, 2 * kG, 0, Create(2 * kG)).ok());
  ASSERT_TRUE(engine_->Map(va + 2 * kG, kG, 0, Create(kG)).ok());
  const std::string e = "cuMemUnmap: CUDA_ERROR_INVALID_VALUE: ";
  EXPECT_EQ(Msg(engine_->Unmap(va, kG, &note_)),
            e + "[" + Hex(va) + ", +0x10000) ends inside the mapping [" + Hex(va) +
                ", +0x20000); cuMemUnmap takes whole mappings only");
  EXPECT_EQ(Msg(engine_->Unmap(va + kG, 2 * kG, &note_)),
            e + "[" + Hex(va + kG) + ", +0x20000) starts inside the mapping [" + Hex(va) +
                ", +0x20000); cuMemUnmap takes whole mappings only");
  // As on the driver, unmapped space in the range is skipped: nothing mapped is not an error.
  EXPECT_TRUE(engine_->Unmap(va + 3 * kG, kG, &note_).ok());
  note_.waited = true;
  EXPECT_TRUE(engine_->Unmap(va, 4 * kG, &note_).ok());  // two whole mappings and a hole
  EXPECT_FALSE(note_.waited);
  AllocHandle h = Create(4 * kG);
  EXPECT_TRUE(engine_->Map(va, 4 * kG, 0, h).ok());  // all of it was unmapped
}

TEST_F(HostEngineTest, SetAccessTakesWholeMappedMappings) {
  const DevicePtr va = Reserve(4 * kG);
  ASSERT_TRUE(engine_->Map(va, 2 * kG, 0, Create(2 * kG)).ok());
  ASSERT_TRUE(engine_->Map(va + 2 * kG, kG, 0, Create(kG)).ok());
  const std::string e = "cuMemSetAccess: CUDA_ERROR_INVALID_VALUE: ";
  EXPECT_EQ(Msg(engine_->SetAccess(va, kG, Access::kRead)),
            e + "[" + Hex(va) + ", +0x10000) ends inside the mapping [" + Hex(va) +
                ", +0x20000); cuMemSetAccess takes whole mappings only");
  EXPECT_EQ(Msg(engine_->SetAccess(va, 4 * kG, Access::kRead)),
            e + "[" + Hex(va) + ", +0x40000) includes the unmapped address " + Hex(va + 3 * kG));
  EXPECT_EQ(Msg(engine_->SetAccess(va, 0, Access::kRead)), e + "size is 0");
  EXPECT_TRUE(engine_->SetAccess(va, 3 * kG, Access::kReadWrite).ok());  // two whole mappings
  EXPECT_TRUE(engine_->Fill(va, 3 * kG / 4, 1, nullptr).ok());
}

TEST_F(HostEngineTest, FreeNeedsAWholeUnmappedReservation) {
  AllocHandle h;
  const DevicePtr va = Buffer(2 * kG, &h);
  const std::string e = "cuMemAddressFree: CUDA_ERROR_INVALID_VALUE: ";
  EXPECT_EQ(Msg(engine_->Free(va, 2 * kG)), e + "the reservation [" + Hex(va) +
                                                ", +0x20000) still has 1 mapping [" + Hex(va) +
                                                ", +0x20000); unmap first");
  ASSERT_TRUE(engine_->Unmap(va, 2 * kG, &note_).ok());
  EXPECT_EQ(Msg(engine_->Free(va + kG, kG)), e + Hex(va + kG) + " is inside the reservation [" +
                                                 Hex(va) + ", +0x20000), not at its start");
  EXPECT_EQ(Msg(engine_->Free(va, kG)),
            e + "size of the reservation at " + Hex(va) + ": expected 0x20000, got 0x10000");
  EXPECT_TRUE(engine_->Free(va, 2 * kG).ok());
  EXPECT_EQ(Msg(engine_->Free(va, 2 * kG)), e + Hex(va) + " is not the start of a reservation");
  EXPECT_TRUE(engine_->Release(h, &note_).ok());
}

TEST_F(HostEngineTest, RemapKeepsTheAddressAndShowsTheNewData) {
  AllocHandle first;
  const DevicePtr va = Buffer(kG, &first);
  ASSERT_TRUE(engine_->Fill(va, kG / 4, 1, nullptr).ok());
  uint64_t before = 0, after = 0;
  ASSERT_TRUE(engine_->Checksum(va, kG / 4, &before).ok());
  ASSERT_TRUE(engine_->Unmap(va, kG, &note_).ok());
  ASSERT_TRUE(engine_->Release(first, &note_).ok());
  const AllocHandle second = Create(kG);
  ASSERT_TRUE(engine_->Map(va, kG, 0, second).ok());  // same VA: the reservation is still there
  ASSERT_TRUE(engine_->SetAccess(va, kG, Access::kReadWrite).ok());
  std::vector<float> fresh(kG / 4, 1.0f);
  ASSERT_TRUE(engine_->CopyToHost(va, kG, fresh.data()).ok());
  EXPECT_EQ(fresh[0], 0.0f);  // new physical memory starts zeroed
  ASSERT_TRUE(engine_->Fill(va, kG / 4, 2, nullptr).ok());
  ASSERT_TRUE(engine_->CopyToHost(va, kG, fresh.data()).ok());
  for (uint64_t i = 0; i < fresh.size(); ++i) ASSERT_EQ(fresh[i], datagen::FillValue(2, i)) << i;
  ASSERT_TRUE(engine_->Checksum(va, kG / 4, &after).ok());
  EXPECT_NE(before, after);
}

TEST_F(HostEngineTest, ReleaseWhileMappedKeepsTheDataUntilUnmap) {
  AllocHandle h;
  const DevicePtr va = Buffer(kG, &h);
  ASSERT_TRUE(engine_->Fill(va, kG / 4, 5, nullptr).ok());
  note_.waited = true;
  ASSERT_TRUE(engine_->Release(h, &note_).ok());
  EXPECT_FALSE(note_.waited);
  std::vector<float> out(kG / 4);
  ASSERT_TRUE(engine_->CopyToHost(va, kG, out.data()).ok());
  EXPECT_EQ(out[kG / 4 - 1], datagen::FillValue(5, kG / 4 - 1));
  ASSERT_TRUE(engine_->Unmap(va, kG, &note_).ok());
  EXPECT_EQ(Msg(engine_->CopyToHost(va, 4, out.data())),
            "cuMemcpyDtoH: CUDA_ERROR_INVALID_VALUE: read of 'src' [" + Hex(va) +
                ", +0x4) touches the unmapped address " + Hex(va));
}

TEST_F(HostEngineTest, OneHandleMappedTwiceSharesItsMemory) {
  const AllocHandle h = Create(kG);
  const DevicePtr a = Reserve(kG), b = Reserve(kG);
  for (DevicePtr va : {a, b}) {
    ASSERT_TRUE(engine_->Map(va, kG, 0, h).ok());
    ASSERT_TRUE(engine_->SetAccess(va, kG, Access::kReadWrite).ok());
  }
  ASSERT_TRUE(engine_->Fill(a, kG / 4, 3, nullptr).ok());
  DataCompareResult cmp{1, {}, 0, 0};
  ASSERT_TRUE(engine_->CompareData(a, DataRef::Device(b), kG / 4, {}, &cmp).ok());
  EXPECT_EQ(cmp.mismatches, 0u);
  ASSERT_TRUE(engine_->Fill(b, 1, 4, nullptr).ok());
  ASSERT_TRUE(engine_->CompareData(a, DataRef::Device(b), kG / 4, {}, &cmp).ok());
  EXPECT_EQ(cmp.mismatches, 0u);  // a write through b shows through a
}

// --- Resource hygiene ---

int OpenFdCount() {
  int n = 0;
  DIR* dir = opendir("/proc/self/fd");
  while (dirent* e = readdir(dir))
    if (e->d_name[0] != '.') ++n;
  closedir(dir);
  return n - 1;  // the directory's own fd
}

struct VaRange {
  uint64_t lo, hi;
};

// Lines of /proc/self/maps that mention one of our memfds or overlap one of `ranges`.
int OurMappings(const std::vector<VaRange>& ranges) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int n = 0;
  while (std::getline(maps, line)) {
    uint64_t start = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
    uint64_t end = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    bool ours = line.find("vmm-run:alloc") != std::string::npos;
    for (const VaRange& r : ranges) ours = ours || (start < r.hi && r.lo < end);
    if (ours) ++n;
  }
  return n;
}

TEST(HostEngineLifetime, DestroyingTheEngineReleasesEverythingStillLive) {
  const int fds_before = OpenFdCount();
  std::vector<VaRange> reserved;
  {
    std::unique_ptr<Engine> engine = std::move(CreateHostEngine({kG})).value();
    SyncNote note;
    for (int i = 0; i < 4; ++i) {
      DevicePtr va = 0;
      AllocHandle h;
      ASSERT_TRUE(engine->Reserve(2 * kG, 0, &va).ok());
      AllocHandle h2;
      ASSERT_TRUE(engine->Create(kG, &h).ok());
      ASSERT_TRUE(engine->Create(kG, &h2).ok());
      ASSERT_TRUE(engine->Map(va, kG, 0, h).ok());
      ASSERT_TRUE(engine->Map(va + kG, kG, 0, h2).ok());
      ASSERT_TRUE(engine->SetAccess(va, 2 * kG, Access::kReadWrite).ok());
      ASSERT_TRUE(engine->Fill(va, 2 * kG / 4, i, nullptr).ok());
      if (i % 2 == 1) {
        ASSERT_TRUE(engine->Release(h, &note).ok());  // mapped but released
      }
      reserved.push_back({va, va + 2 * kG});
    }
    AllocHandle unmapped;
    ASSERT_TRUE(engine->Create(kG, &unmapped).ok());
    GraphHandle graph;
    ExecHandle exec;
    ASSERT_TRUE(engine->BeginCapture().ok());
    ASSERT_TRUE(engine->Fill(reserved[0].lo, 4, 1, nullptr).ok());
    ASSERT_TRUE(engine->EndCapture(&graph).ok());
    ASSERT_TRUE(engine->Instantiate(graph, &exec).ok());
    ASSERT_TRUE(engine->BeginCapture().ok());  // destroyed mid-capture, too
    // 8 mapped allocations (a released one keeps its memfd while mapped: its memory lives on
    // and a retained handle could map it again) + `unmapped`.
    EXPECT_EQ(OpenFdCount(), fds_before + 9);
    EXPECT_GT(OurMappings(reserved), 0);
  }
  EXPECT_EQ(OpenFdCount(), fds_before);
  EXPECT_EQ(OurMappings(reserved), 0);
}

}  // namespace
}  // namespace vmm
