// SpinLock: mutual exclusion under contention (a counter that a broken lock would lose updates
// of), and try_lock's answer.
#include "runner/base/spin_lock.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace vmm {
namespace {

TEST(SpinLock, ThreadsIncrementingUnderItLoseNoUpdate) {
  SpinLock lock;
  // Plain (non-atomic) words, read and written in two steps with a yield between: without the
  // lock, other threads' increments land in between and are lost.
  uint64_t counter = 0, shadow = 0;
  constexpr int kThreads = 8, kRounds = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<SpinLock> guard(lock);
        const uint64_t seen = counter;
        if (i % 1000 == 0) std::this_thread::yield();
        counter = seen + 1;
        shadow += 2;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counter, uint64_t{kThreads} * kRounds);
  EXPECT_EQ(shadow, 2 * counter);
}

TEST(SpinLock, TryLockFailsWhileHeldAndSucceedsAfter) {
  SpinLock lock;
  ASSERT_TRUE(lock.try_lock());
  bool other = true;
  std::thread([&] { other = lock.try_lock(); }).join();
  EXPECT_FALSE(other);
  lock.unlock();
  std::thread([&] {
    other = lock.try_lock();
    if (other) lock.unlock();
  }).join();
  EXPECT_TRUE(other);
}

}  // namespace
}  // namespace vmm
