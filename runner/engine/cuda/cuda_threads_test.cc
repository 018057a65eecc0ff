// GPU tests of the CUDA engine's VMM calls from several host threads: mappings are kept per
// thread (a shard each) and a thread memoizes the allocation it mapped last (cuda_engine_impl.h).
// Neither may change what the calls do: a mapping made on one thread is forgotten when another
// thread unmaps it, and a memo never maps a handle released since.
#include <gtest/gtest.h>

#include <cstdint>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "runner/engine/cuda/cuda_test_util.h"
#include "runner/engine/engine.h"

namespace vmm::testing_cuda {
namespace {

// The mappings the engine reports, as (va, size).
std::vector<std::pair<DevicePtr, uint64_t>> Mappings(Engine& engine) {
  EngineInventory inventory;
  EXPECT_TRUE(engine.Inventory(&inventory).ok());
  std::vector<std::pair<DevicePtr, uint64_t>> out;
  for (const EngineInventory::Mapping& m : inventory.mappings) out.emplace_back(m.va, m.size);
  return out;
}

TEST_F(CudaEngineTest, AMappingMadeOnOneThreadIsForgottenWhenAnotherUnmapsIt) {
  // Two pages, each mapped on a thread of its own; the main thread unmaps a range that covers
  // both at once, so the engine must look past its own (empty) shard into two others.
  DevicePtr va = 0;
  ASSERT_OK(engine_->Reserve(2 * gran_, 0, &va));
  AllocHandle pages[2];
  for (AllocHandle& h : pages) ASSERT_OK(engine_->Create(gran_, &h));
  std::vector<std::string> failures;
  for (int t = 0; t < 2; ++t) {
    std::thread mapper([&, t] {
      engine_->PrepareThread(true);
      const Status s = engine_->Map(va + t * gran_, gran_, 0, pages[t]);
      if (!s.ok()) failures.push_back(s.message());
    });
    mapper.join();
  }
  ASSERT_TRUE(failures.empty()) << failures[0];
  EXPECT_EQ(Mappings(*engine_).size(), 2u);
  SyncNote note;
  ASSERT_OK(engine_->Unmap(va, 2 * gran_, &note));
  EXPECT_TRUE(Mappings(*engine_).empty()) << "the other threads' mappings were not forgotten";
  // The pages map again at the same addresses (a forgotten mapping the engine still held would
  // be unmapped a second time when it goes, under whatever is mapped there then).
  ASSERT_OK(engine_->Map(va, gran_, 0, pages[1]));
  ASSERT_OK(engine_->SetAccess(va, gran_, Access::kReadWrite));
  ASSERT_OK(engine_->Fill(va, gran_ / 4, 3, nullptr));
  uint64_t mismatches = 0;
  const std::string diff =
      DescribeMismatches(Expected(3, gran_ / 4), Read(va, gran_ / 4), &mismatches);
  EXPECT_EQ(mismatches, 0u) << diff;
  ASSERT_OK(engine_->Unmap(va, gran_, &note));
  for (AllocHandle& h : pages) ASSERT_OK(engine_->Release(h, &note));
  ASSERT_OK(engine_->Free(va, 2 * gran_));
}

TEST_F(CudaEngineTest, AThreadsMemoNeverMapsAHandleReleasedSince) {
  // The worker maps and unmaps handle h twice (the second map from its memo), then the main
  // thread releases h, and the same worker's next map of h must be refused as unknown, as it is
  // without the memo.
  DevicePtr va = 0;
  ASSERT_OK(engine_->Reserve(gran_, 0, &va));
  AllocHandle h;
  ASSERT_OK(engine_->Create(gran_, &h));
  std::promise<void> mapped, released;
  std::string before, after;
  std::thread worker([&] {
    engine_->PrepareThread(true);
    for (int i = 0; i < 2 && before.empty(); ++i) {
      Status s = engine_->Map(va, gran_, 0, h);
      if (s.ok()) s = engine_->Unmap(va, gran_, nullptr);
      if (!s.ok()) before = s.message();
    }
    mapped.set_value();
    released.get_future().wait();
    const Status s = engine_->Map(va, gran_, 0, h);
    after = s.ok() ? "mapped" : s.message();
    if (s.ok()) (void)engine_->Unmap(va, gran_, nullptr);
  });
  mapped.get_future().wait();
  SyncNote note;
  const Status release = engine_->Release(h, &note);
  released.set_value();
  worker.join();
  ASSERT_OK(release);
  EXPECT_EQ(before, "");
  EXPECT_NE(after.find("unknown allocation handle"), std::string::npos) << after;
  EXPECT_TRUE(Mappings(*engine_).empty());
  ASSERT_OK(engine_->Free(va, gran_));
}

}  // namespace
}  // namespace vmm::testing_cuda
