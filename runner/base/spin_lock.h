// SpinLock: a lock for critical sections of a few dozen instructions that many threads enter at
// once (the CUDA engine's VMM tables, entered around every driver call of a threads group). A
// waiter spins with the CPU's pause hint, yielding now and then, instead of sleeping in the kernel:
// std::mutex's sleep and wake (two system calls) cost more than such a section, and put them on
// the path of every call the threads race. Never hold it across a call that can block or take
// long. BasicLockable and Lockable, so std::lock_guard<SpinLock> works.
#pragma once

#include <atomic>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace vmm {

class SpinLock {
 public:
  // The uncontended path is one exchange, inlined where the lock is taken; the wait is out of line.
  void lock() noexcept {
    if (!held_.exchange(true, std::memory_order_acquire)) [[likely]]
      return;
    LockContended();
  }
  bool try_lock() noexcept {
    return !held_.load(std::memory_order_relaxed) &&
           !held_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpinsPerYield = 128;

  [[gnu::noinline]] void LockContended() noexcept {
    while (held_.exchange(true, std::memory_order_acquire)) {
      // Wait reading (the line stays shared) until it looks free, then try again.
      for (int spins = 1; held_.load(std::memory_order_relaxed); ++spins) {
        if (spins % kSpinsPerYield == 0) {
          std::this_thread::yield();  // the holder may have lost its CPU
        } else {
          Pause();
        }
      }
    }
  }
  static void Pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  std::atomic<bool> held_{false};
};

}  // namespace vmm
