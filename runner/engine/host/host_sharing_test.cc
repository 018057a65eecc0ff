// The host twin's shareable handles (export as a memfd duplicate, import as a new handle of the
// same memory), its device-memory limit, and its inventory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "runner/base/unique_fd.h"
#include "runner/engine/host/host_engine.h"

namespace vmm {
namespace {

constexpr uint64_t kG = 64 * 1024;

class HostSharingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine({kG});
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    engine_ = std::move(engine).value();
  }
  AllocHandle CreateShareable(uint64_t size) {
    AllocProps props;
    props.size = size;
    props.handle_types = kHandleTypePosixFd;
    AllocHandle h;
    EXPECT_TRUE(engine_->Create(props, &h).ok());
    return h;
  }
  // Reserves `size` bytes and maps `handle` there with read_write access.
  DevicePtr MapReadWrite(AllocHandle handle, uint64_t size) {
    DevicePtr va = 0;
    EXPECT_TRUE(engine_->Reserve(size, 0, &va).ok());
    EXPECT_TRUE(engine_->Map(va, size, 0, handle).ok());
    EXPECT_TRUE(engine_->SetAccess(va, size, Access::kReadWrite).ok());
    return va;
  }
  std::unique_ptr<Engine> engine_;
};

TEST_F(HostSharingTest, AnImportedHandleIsTheSameMemoryAtAnotherAddress) {
  const AllocHandle p = CreateShareable(2 * kG);
  int raw = -1;
  ASSERT_TRUE(engine_->Export(p, &raw).ok());
  UniqueFd fd(raw);  // ours to close (Export's contract)
  AllocHandle q;
  ASSERT_TRUE(engine_->Import(fd.get(), &q).ok());
  EXPECT_NE(q.value, p.value);
  fd.reset();  // Import did not take the fd: the new handle stands on its own
  const DevicePtr a = MapReadWrite(p, 2 * kG);
  const DevicePtr b = MapReadWrite(q, 2 * kG);
  ASSERT_NE(a, b);
  const uint64_t words = 2 * kG / 4;
  ASSERT_TRUE(engine_->Fill(a, words, 5, nullptr).ok());
  DataCompareResult same;
  ASSERT_TRUE(engine_->CompareData(a, DataRef::Device(b), words, CompareOptions{}, &same).ok());
  EXPECT_EQ(same.mismatches, 0u);
  ASSERT_TRUE(engine_->Memset(b, words, 0xdeadbeef, nullptr).ok());
  std::vector<uint32_t> seen(words);
  ASSERT_TRUE(engine_->CopyToHost(a, 2 * kG, seen.data()).ok());
  EXPECT_EQ(seen.front(), 0xdeadbeefu);
  EXPECT_EQ(seen.back(), 0xdeadbeefu);
  // The exporter's handle may go first: the import keeps the memory.
  SyncNote note;
  ASSERT_TRUE(engine_->Unmap(a, 2 * kG, &note).ok());
  ASSERT_TRUE(engine_->Release(p, &note).ok());
  ASSERT_TRUE(engine_->CopyToHost(b, 4, seen.data()).ok());
  EXPECT_EQ(seen.front(), 0xdeadbeefu);
}

TEST_F(HostSharingTest, ExportNeedsThePosixFdHandleType) {
  AllocHandle plain;
  ASSERT_TRUE(engine_->Create(kG, &plain).ok());
  int fd = -1;
  Status s = engine_->Export(plain, &fd);
  EXPECT_EQ(fd, -1);
  ASSERT_NE(s.cuda_error(), nullptr);
  EXPECT_STREQ(s.cuda_error(), "CUDA_ERROR_INVALID_VALUE");
  EXPECT_NE(s.message().find("without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR"), std::string::npos)
      << s.message();
  EXPECT_STREQ(engine_->Export(AllocHandle{999}, &fd).cuda_error(), "CUDA_ERROR_INVALID_VALUE");
}

TEST_F(HostSharingTest, ImportTakesOnlyTheTwinsMemory) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  UniqueFd r(pipe_fds[0]), w(pipe_fds[1]);
  AllocHandle h;
  Status s = engine_->Import(r.get(), &h);
  EXPECT_STREQ(s.cuda_error(), "CUDA_ERROR_INVALID_VALUE");
  EXPECT_NE(s.message().find("is not a memory handle exported by vmm-run's host twin"),
            std::string::npos)
      << s.message();
  s = engine_->Import(-1, &h);
  EXPECT_EQ(s.message(),
            "cuMemImportFromShareableHandle: CUDA_ERROR_INVALID_VALUE: fd -1 is not open");
}

TEST_F(HostSharingTest, FabricHandlesNeedAnImexChannel) {
  AllocProps props;
  props.size = kG;
  props.handle_types = kHandleTypeFabric;
  AllocHandle h;
  Status s = engine_->Create(props, &h);
  EXPECT_STREQ(s.cuda_error(), "CUDA_ERROR_NOT_PERMITTED");
}

TEST_F(HostSharingTest, MoreThanTheDeclaredMemoryIsOutOfMemoryAtOnce) {
  const uint64_t total = engine_->info().total_memory;
  ASSERT_GT(total, 0u);
  AllocHandle h;
  Status s = engine_->Create((total / kG + 1) * kG, &h);  // nothing is committed to find out
  EXPECT_STREQ(s.cuda_error(), "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_NE(s.message().find("device 0 of the twin has"), std::string::npos) << s.message();
}

TEST_F(HostSharingTest, InventoryListsWhatIsLive) {
  const AllocHandle p = CreateShareable(kG);
  const DevicePtr va = MapReadWrite(p, kG);
  EngineInventory inv;
  ASSERT_TRUE(engine_->Inventory(&inv).ok());
  ASSERT_EQ(inv.reservations.size(), 1u);
  EXPECT_EQ(inv.reservations[0].va, va);
  ASSERT_EQ(inv.allocations.size(), 1u);
  EXPECT_EQ(inv.allocations[0].handle, p.value);
  EXPECT_EQ(inv.allocations[0].size, kG);
  ASSERT_EQ(inv.mappings.size(), 1u);
  EXPECT_EQ(inv.mappings[0].handle, p.value);
  // By device: the engine's own (0) was given read_write; the twin's second device has none.
  EXPECT_EQ(inv.mappings[0].access, (std::vector<Access>{Access::kReadWrite, Access::kNone}));
  EXPECT_TRUE(inv.mappings[0].access_known);
}

TEST_F(HostSharingTest, AnImportCountsNoDeviceMemoryAndReadsBackAsShareable) {
  const AllocHandle p = CreateShareable(kG);
  uint64_t free_before = 0, total = 0;
  ASSERT_TRUE(engine_->MemoryInfo(&free_before, &total).ok());
  int fd = -1;
  ASSERT_TRUE(engine_->Export(p, &fd).ok());
  UniqueFd owned(fd);
  AllocHandle q;
  ASSERT_TRUE(engine_->Import(owned.get(), &q).ok());
  uint64_t free_after = 0;
  ASSERT_TRUE(engine_->MemoryInfo(&free_after, &total).ok());
  EXPECT_EQ(free_after, free_before);  // the memory is the exporter's, counted once
  AllocProps granted;
  ASSERT_TRUE(engine_->AllocProperties(q, &granted).ok());
  EXPECT_EQ(granted.size, kG);
  EXPECT_EQ(granted.handle_types, kHandleTypePosixFd);
  SyncNote note;
  ASSERT_TRUE(engine_->Release(q, &note).ok());
  ASSERT_TRUE(engine_->Release(p, &note).ok());
}

}  // namespace
}  // namespace vmm
