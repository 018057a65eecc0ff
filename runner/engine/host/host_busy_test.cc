// The host twin's in-flight work and faults: a busy kernel left running on the stream's worker,
// what waits for it and what does not, and (trap mode, as in an isolate block's child) kernels
// that fault for real and poison the engine with CUDA_ERROR_ILLEGAL_ADDRESS.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <chrono>
#include <thread>
#include <vector>

#include "runner/engine/host/fault_trap.h"
#include "runner/engine/host/host_engine.h"

namespace vmm {
namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kWords = 2 * kMiB / 4;

std::unique_ptr<Engine> NewEngine(bool trap) {
  HostEngineOptions options;
  options.granularity = 2 * kMiB;
  options.trap_faults = trap;
  return std::move(CreateHostEngine(options)).value();
}

// One 2 MiB page with `access`.
DevicePtr Page(Engine& engine, Access access, AllocHandle* handle = nullptr) {
  DevicePtr va = 0;
  AllocHandle h;
  EXPECT_TRUE(engine.Reserve(2 * kMiB, 0, &va).ok());
  EXPECT_TRUE(engine.Create(2 * kMiB, &h).ok());
  EXPECT_TRUE(engine.Map(va, 2 * kMiB, 0, h).ok());
  EXPECT_TRUE(engine.SetAccess(va, 2 * kMiB, access).ok());
  if (handle != nullptr) *handle = h;
  return va;
}

uint32_t Word(Engine& engine, DevicePtr va, uint64_t index) {
  uint32_t w = 0;
  EXPECT_TRUE(engine.CopyToHost(va + index * 4, 4, &w).ok());
  return w;
}

TEST(HostBusyTest, AWaitedBusyRunsForItsDurationThenWrites) {
  std::unique_ptr<Engine> engine = NewEngine(false);
  const DevicePtr va = Page(*engine, Access::kReadWrite);
  OpTiming timing;
  ASSERT_TRUE(
      engine->Busy(va, kWords, 20000000, 0x3F800000u, kernels::BusyTouch::kEnd, -1, &timing).ok());
  EXPECT_GE(timing.gpu_us, 20000.0);
  EXPECT_EQ(Word(*engine, va, 0), 0x3F800000u);
  EXPECT_EQ(Word(*engine, va, kWords - 1), 0x3F800000u);
}

TEST(HostBusyTest, AWaitingUnmapWaitsForABusyLeftRunning) {
  std::unique_ptr<Engine> engine = NewEngine(false);
  AllocHandle h;
  const DevicePtr va = Page(*engine, Access::kReadWrite, &h);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(engine->Busy(va, kWords, 100000000, 7, kernels::BusyTouch::kEnd, -1, nullptr).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
  SyncNote note;
  ASSERT_TRUE(engine->Unmap(va, 2 * kMiB, &note).ok());
  EXPECT_TRUE(note.waited);
  EXPECT_GE(note.wait_us, 30000.0);
  ASSERT_TRUE(engine->Map(va, 2 * kMiB, 0, h).ok());
  ASSERT_TRUE(engine->SetAccess(va, 2 * kMiB, Access::kRead).ok());
  EXPECT_EQ(Word(*engine, va, kWords - 1), 7u);
  // Nothing in flight now: the next waiting call says so.
  ASSERT_TRUE(engine->Unmap(va, 2 * kMiB, &note).ok());
  EXPECT_FALSE(note.waited);
}

TEST(HostBusyTest, LaterKernelsRunAfterTheBusyInStreamOrder) {
  std::unique_ptr<Engine> engine = NewEngine(false);
  const DevicePtr va = Page(*engine, Access::kReadWrite);
  ASSERT_TRUE(engine->Busy(va, kWords, 50000000, 7, kernels::BusyTouch::kEnd, -1, nullptr).ok());
  ASSERT_TRUE(engine->Memset(va, kWords, 9, nullptr).ok());  // waits for the busy first
  EXPECT_EQ(Word(*engine, va, 0), 9u);
}

// The race itself: the unmap goes out under the running kernel, whose write then hits the
// re-reserved PROT_NONE range. The worker's fault is trapped (never a crash, even outside trap
// mode) and every later call returns it.
TEST(HostBusyTest, AnUnmapThatDoesNotWaitFaultsTheKernelUnderIt) {
  std::unique_ptr<Engine> engine = NewEngine(false);
  const DevicePtr va = Page(*engine, Access::kReadWrite);
  ASSERT_TRUE(engine->Busy(va, kWords, 100000000, 7, kernels::BusyTouch::kEnd, -1, nullptr).ok());
  SyncNote note;
  note.wait = false;
  ASSERT_TRUE(engine->Unmap(va, 2 * kMiB, &note).ok());
  EXPECT_FALSE(note.waited);
  Status sync = engine->Synchronize();
  ASSERT_FALSE(sync.ok());
  EXPECT_NE(sync.message().find("vmm_busy_u32: CUDA_ERROR_ILLEGAL_ADDRESS: the kernel faulted: "
                                "SIGSEGV"),
            std::string::npos)
      << sync.message();
  EXPECT_NE(engine->FaultNote().find("SIGSEGV"), std::string::npos);
  DevicePtr other = 0;
  EXPECT_EQ(engine->Reserve(2 * kMiB, 0, &other).message(), sync.message());  // poisoned
}

// touch: read keeps reading and writes nothing; read access is enough for it. touch: write keeps
// writing and leaves the pattern everywhere.
TEST(HostBusyTest, AReaderInFlightWritesNothingAndAWriterLeavesItsPattern) {
  std::unique_ptr<Engine> engine = NewEngine(false);
  const DevicePtr va = Page(*engine, Access::kReadWrite);
  ASSERT_TRUE(engine->Memset(va, kWords, 3, nullptr).ok());
  ASSERT_TRUE(engine->SetAccess(va, 2 * kMiB, Access::kRead).ok());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(engine->Busy(va, kWords, 30000000, 7, kernels::BusyTouch::kRead, -1, nullptr).ok());
  ASSERT_TRUE(engine->Synchronize().ok());
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(30));
  EXPECT_EQ(Word(*engine, va, 0), 3u);
  EXPECT_EQ(Word(*engine, va, kWords - 1), 3u);
  // A reader on a read-only page is legal; a writer there is refused before it runs.
  Status refused = engine->Busy(va, kWords, 1000, 7, kernels::BusyTouch::kWrite, -1, nullptr);
  EXPECT_STREQ(refused.cuda_error(), "CUDA_ERROR_ILLEGAL_ADDRESS") << refused.message();
  ASSERT_TRUE(engine->SetAccess(va, 2 * kMiB, Access::kReadWrite).ok());
  OpTiming timing;
  ASSERT_TRUE(engine->Busy(va, kWords, 1000, 9, kernels::BusyTouch::kWrite, -1, &timing).ok());
  EXPECT_EQ(Word(*engine, va, 0), 9u);
  EXPECT_EQ(Word(*engine, va, kWords - 1), 9u);
}

// The reader's race: an unmap that does not wait lands while the kernel still reads, and its next
// load faults, as the H200's reader does.
TEST(HostBusyTest, AnUnmapThatDoesNotWaitFaultsAReaderUnderIt) {
  std::unique_ptr<Engine> engine = NewEngine(false);
  const DevicePtr va = Page(*engine, Access::kRead);
  ASSERT_TRUE(engine->Busy(va, kWords, 200000000, 0, kernels::BusyTouch::kRead, -1, nullptr).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // it is reading by now
  SyncNote note;
  note.wait = false;
  ASSERT_TRUE(engine->Unmap(va, 2 * kMiB, &note).ok());
  Status sync = engine->Synchronize();
  EXPECT_NE(sync.message().find("CUDA_ERROR_ILLEGAL_ADDRESS: the kernel faulted: SIGSEGV"),
            std::string::npos)
      << sync.message();
}

// A release that does not wait is harmless on its own: the mapping keeps the memory alive, so the
// kernel under it finishes its writes.
TEST(HostBusyTest, AReleaseThatDoesNotWaitLeavesTheMappingAlive) {
  std::unique_ptr<Engine> engine = NewEngine(false);
  AllocHandle h;
  const DevicePtr va = Page(*engine, Access::kReadWrite, &h);
  ASSERT_TRUE(engine->Busy(va, kWords, 50000000, 5, kernels::BusyTouch::kEnd, -1, nullptr).ok());
  SyncNote note;
  note.wait = false;
  ASSERT_TRUE(engine->Release(h, &note).ok());
  EXPECT_FALSE(note.waited);
  ASSERT_TRUE(engine->Synchronize().ok());
  EXPECT_EQ(Word(*engine, va, kWords - 1), 5u);
}

TEST(HostBusyTest, InTrapModeAWriteThroughReadOnlyFaultsForReal) {
  std::unique_ptr<Engine> engine = NewEngine(true);
  EXPECT_TRUE(host::FaultTrapInstalled());
  const DevicePtr va = Page(*engine, Access::kRead);
  OpTiming timing;
  Status fill = engine->Fill(va, kWords, 1, &timing);
  ASSERT_FALSE(fill.ok());
  EXPECT_NE(fill.message().find("vmm_fill_f32: CUDA_ERROR_ILLEGAL_ADDRESS: the kernel faulted: "
                                "SIGSEGV (SEGV_ACCERR"),
            std::string::npos)
      << fill.message();
#if defined(__x86_64__)
  EXPECT_NE(engine->FaultNote().find(", write at 0x"), std::string::npos) << engine->FaultNote();
#endif
  // Poisoned, like a CUDA context after a device fault.
  EXPECT_FALSE(engine->Synchronize().ok());
  EXPECT_FALSE(engine->Memset(va, 1, 0, nullptr).ok());
}

TEST(HostBusyTest, InTrapModeAFaultOfAKernelNobodyWaitsForComesAtTheNextCall) {
  std::unique_ptr<Engine> engine = NewEngine(true);
  const DevicePtr va = Page(*engine, Access::kNone);
  EXPECT_TRUE(engine->Memset(va, kWords, 1, nullptr).ok());  // launched: the fault is not seen yet
  Status next = engine->Synchronize();
  ASSERT_FALSE(next.ok());
  EXPECT_NE(next.message().find("cuMemsetD32Async: CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos)
      << next.message();
  // Reads fault too (no access at all).
  std::unique_ptr<Engine> reader = NewEngine(true);
  const DevicePtr none = Page(*reader, Access::kNone);
  uint64_t hash = 0;
  Status sum = reader->Checksum(none, kWords, &hash);
  EXPECT_NE(sum.message().find("vmm_checksum_u32: CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos)
      << sum.message();
}

TEST(HostBusyTest, OutsideTrapModeAFaultingKernelIsRefusedAndTheEngineStaysUsable) {
  std::unique_ptr<Engine> engine = NewEngine(false);
  const DevicePtr va = Page(*engine, Access::kRead);
  Status fill = engine->Fill(va, kWords, 1, nullptr);
  EXPECT_NE(fill.message().find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos);
  EXPECT_EQ(fill.message().find("faulted"), std::string::npos);  // proven, not run
  EXPECT_TRUE(engine->Synchronize().ok());
}

TEST(FaultTrapTest, ATrappedFaultIsReturnedAndTheThreadGoesOn) {
  host::InstallFaultTrap();
  void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  volatile int* guarded = static_cast<int*>(page);
  auto read_it = [&] { (void)*guarded; };
  host::FaultInfo fault;
  EXPECT_FALSE(host::RunTrapped(read_it, &fault));
  EXPECT_EQ(fault.address, reinterpret_cast<uintptr_t>(page));
  EXPECT_NE(fault.Describe().find("SIGSEGV (SEGV_ACCERR"), std::string::npos) << fault.Describe();
#if defined(__x86_64__)
  EXPECT_EQ(fault.write, 0);
#endif
  munmap(page, 4096);
  int value = 0;
  auto fine = [&] { value = 1; };
  EXPECT_TRUE(host::RunTrapped(fine, &fault));
  EXPECT_EQ(value, 1);
}

// A busy left running until a flag stops soon after SetFlag, long before its duration, and the
// flag says it was in time; one whose duration ran out first says it expired (set_flag's failure).
TEST(HostBusyTest, ABusyUntilAFlagStopsWhenItIsSetAndSaysWhenItWasLate) {
  std::unique_ptr<Engine> engine = NewEngine(false);
  const DevicePtr va = Page(*engine, Access::kReadWrite);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(engine->Busy(va, kWords, 10000000000ull, 5, kernels::BusyTouch::kWrite, 3, nullptr)
                  .ok());  // 10 s at most
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  bool expired = true;
  ASSERT_TRUE(engine->SetFlag(3, &expired).ok());
  EXPECT_FALSE(expired);
  ASSERT_TRUE(engine->Synchronize().ok());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(ms, 2000.0) << "the busy ran on after its flag was set";
  EXPECT_EQ(Word(*engine, va, kWords - 1), 5u);
  // 1 ms at most, the flag set 50 ms later: expired.
  ASSERT_TRUE(engine->Busy(va, kWords, 1000000, 0, kernels::BusyTouch::kRead, 4, nullptr).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(engine->SetFlag(4, &expired).ok());
  EXPECT_TRUE(expired);
  EXPECT_FALSE(engine->SetFlag(kernels::kMaxBusyFlags, &expired).ok());
}

}  // namespace
}  // namespace vmm
