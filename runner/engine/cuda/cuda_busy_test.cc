// GPU tests of the busy kernel (binary vmm_gpu_tests, label "gpu"; skipped without a device): it
// runs for its duration on the device, then writes its pattern everywhere, and an unmap that waits
// sees it in flight. Unmapping under it without the wait faults the context, so that is tested in
// a child process only (tests/e2e_isolate_test.cc, scenarios/unmap_race.yaml).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "runner/engine/cuda/cuda_test_util.h"
#include "runner/engine/cuda/driver_api.h"
#include "runner/engine/engine.h"

namespace vmm::testing_cuda {
namespace {

std::vector<uint32_t> ReadWords(Engine& engine, DevicePtr va, uint64_t count) {
  std::vector<uint32_t> out(count);
  EXPECT_TRUE(engine.CopyToHost(va, count * 4, out.data()).ok());
  return out;
}

TEST_F(CudaEngineTest, BusyRunsForItsDurationThenWritesEveryElement) {
  const uint64_t count = 3 * gran_ / 4 + 17;  // not a multiple of the block
  DevicePtr va = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &va));
  OpTiming timing;
  ASSERT_OK(engine_->Busy(va, count, 50000000, 0xB05EB05Eu, kernels::BusyTouch::kEnd, -1,
                          &timing));  // 50 ms
  EXPECT_GE(timing.gpu_us, 49000.0);
  EXPECT_LT(timing.gpu_us, 500000.0);
  const std::vector<uint32_t> words = ReadWords(*engine_, va, count);
  uint64_t wrong = 0;
  for (uint32_t w : words) wrong += w != 0xB05EB05Eu;
  EXPECT_EQ(wrong, 0u);
}

// touch: read runs for its duration and changes nothing; touch: write leaves its pattern in every
// element, as the host twin's (host_busy_test.cc).
TEST_F(CudaEngineTest, BusyReadsOrWritesPassAfterPassForItsDuration) {
  const uint64_t count = gran_ / 4;
  DevicePtr va = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &va));
  ASSERT_OK(engine_->Memset(va, count, 3, nullptr));
  OpTiming timing;
  ASSERT_OK(
      engine_->Busy(va, count, 20000000, 7, kernels::BusyTouch::kRead, -1, &timing));  // 20 ms
  EXPECT_GE(timing.gpu_us, 19000.0);
  std::vector<uint32_t> words = ReadWords(*engine_, va, count);
  uint64_t wrong = 0;
  for (uint32_t w : words) wrong += w != 3u;
  EXPECT_EQ(wrong, 0u);
  ASSERT_OK(engine_->Busy(va, count, 20000000, 9, kernels::BusyTouch::kWrite, -1, &timing));
  EXPECT_GE(timing.gpu_us, 19000.0);
  words = ReadWords(*engine_, va, count);
  wrong = 0;
  for (uint32_t w : words) wrong += w != 9u;
  EXPECT_EQ(wrong, 0u);
}

TEST_F(CudaEngineTest, AWaitingUnmapWaitsForABusyKernelInFlight) {
  DevicePtr va = 0;
  AllocHandle h;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(gran_, &va, &h));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_OK(engine_->Busy(va, gran_ / 4, 200000000, 7, kernels::BusyTouch::kEnd, -1,
                          nullptr));  // 200 ms, left running
  const double launch_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(launch_ms, 100.0);  // the launch did not wait
  SyncNote note;  // wait = true: the default every scenario outside isolate blocks gets
  ASSERT_OK(engine_->Unmap(va, gran_, &note));
  EXPECT_TRUE(note.waited);
  EXPECT_GE(note.wait_us, 100000.0);
  // The memory is still the allocation's: map it back and read what the kernel wrote.
  ASSERT_OK(engine_->Map(va, gran_, 0, h));
  ASSERT_OK(engine_->SetAccess(va, gran_, Access::kReadWrite));
  EXPECT_EQ(ReadWords(*engine_, va, 4), std::vector<uint32_t>(4, 7u));
  // A release that is asked not to wait reports that it did not (nothing runs now anyway).
  ASSERT_OK(engine_->Unmap(va, gran_, &note));
  SyncNote no_wait;
  no_wait.wait = false;
  ASSERT_OK(engine_->Release(h, &no_wait));
  EXPECT_FALSE(no_wait.waited);
  EXPECT_FALSE(no_wait.wait);
}

// A thread prepared without a context (a threads group's `context: none`) makes its VMM calls with
// none current, as a pool worker that never touched CUDA does, and a wait for a kernel in flight
// (made in the context: here set_access's, the first call that waits) leaves none current again
// before the call goes out.
TEST_F(CudaEngineTest, AThreadWithoutAContextMapsAndUnmapsWithNoneCurrent) {
  using CtxGetCurrent = CUresult (*)(CUcontext*);
  const auto get_current =
      reinterpret_cast<CtxGetCurrent>(cuda::LookUpDriverFunction("cuCtxGetCurrent", 12000));
  ASSERT_NE(get_current, nullptr);
  DevicePtr busy_va = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(gran_, &busy_va));
  ASSERT_OK(engine_->Busy(busy_va, gran_ / 4, 100000000, 0, kernels::BusyTouch::kRead, -1,
                          nullptr));  // 100 ms, left running
  std::vector<std::string> failures;
  auto expect_no_context = [&](const char* after) {
    CUcontext current = reinterpret_cast<CUcontext>(1);
    if (get_current(&current) != CUDA_SUCCESS || current != nullptr)
      failures.push_back(std::string("a context is current after ") + after);
  };
  std::thread worker([&] {
    engine_->PrepareThread(false);
    expect_no_context("PrepareThread(false)");
    DevicePtr va = 0;
    AllocHandle h;
    AllocProps props;
    props.size = gran_;
    Status s = engine_->Reserve(gran_, 0, 0, &va);
    if (s.ok()) s = engine_->Create(props, &h);
    if (s.ok()) s = engine_->Map(va, gran_, 0, h);
    const DeviceAccess rw{-1, Access::kReadWrite};
    SyncNote waited;
    if (s.ok()) s = engine_->SetAccess(va, gran_, std::span<const DeviceAccess>(&rw, 1), &waited);
    expect_no_context("a set_access that waited");
    if (!waited.waited) failures.push_back("set_access did not wait for the kernel in flight");
    if (s.ok()) s = engine_->Unmap(va, gran_, nullptr);
    expect_no_context("unmap");
    if (s.ok()) s = engine_->Release(h, nullptr);
    if (s.ok()) s = engine_->Free(va, gran_);
    expect_no_context("release and free");
    if (!s.ok()) failures.push_back(s.message());
  });
  worker.join();
  EXPECT_TRUE(failures.empty()) << ::testing::PrintToString(failures);
}

// As the twin's (host_busy_test.cc): a busy until a flag stops soon after SetFlag, writing, and
// one whose duration ran out first marks the flag expired.
TEST_F(CudaEngineTest, ABusyUntilAFlagStopsWhenItIsSetAndSaysWhenItWasLate) {
  const uint64_t count = gran_ / 4;
  DevicePtr va = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &va));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_OK(engine_->Busy(va, count, 10000000000ull, 5, kernels::BusyTouch::kWrite, 3, nullptr));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  bool expired = true;
  ASSERT_OK(engine_->SetFlag(3, &expired));
  EXPECT_FALSE(expired);
  ASSERT_OK(engine_->Synchronize());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(ms, 2000.0) << "the busy ran on after its flag was set";
  EXPECT_EQ(ReadWords(*engine_, va + (count - 1) * 4, 1), std::vector<uint32_t>(1, 5u));
  ASSERT_OK(engine_->Busy(va, count, 1000000, 0, kernels::BusyTouch::kRead, 4, nullptr));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_OK(engine_->SetFlag(4, &expired));
  EXPECT_TRUE(expired);
}

}  // namespace
}  // namespace vmm::testing_cuda
