// A long burst of VMM steps, helped by a second thread while its calls run (internal to
// runner/exec): the thread compiles the burst's later steps ahead of the calls, then builds the
// records of the steps the calls have finished.
//
// A burst runs its engine calls back to back (RunVmmSteps). Before the first call every step used
// to be found and compiled (CompileVmmStep) on the run's thread: about 60 ns a step, the plan's
// steps being 440 bytes apart and cold, so 0.3 ms before a burst of 5,000 steps could start. And
// each step's record (~600 bytes, its details and addresses as text) is built from the compiled
// step once the call is done: built on the run's thread after the burst, that work lands between
// the run's calls and the next, on caches the driver has just emptied, and it was about a percent
// of a page cycle's time on the H200. A BurstRecorder does both on the process's background
// thread instead: the compile a long way ahead of the calls, the records a chunk behind them.
//
// Contract:
//   - Compiling ahead (optional, `compile` given): the run's thread has compiled steps
//     [0, compiled) itself. The recorder's thread calls `compile(k)` for k = compiled, compiled
//     + 1, ... until it returns false (step k is not part of the burst: the burst has k steps),
//     and publishes the count compiled so far through BurstProgress every 32 steps and at the end.
//     RunVmmSteps reads that count (AwaitCompiled) when it reaches the end of what it knew to be
//     compiled, so it never runs a step before its compile is visible. The thread stops compiling
//     early once the burst has ended (a call failed). `compile(k)` may read the plan and write
//     compiled step k only.
//   - RunVmmSteps publishes, through BurstProgress, how many steps of the burst have finished with
//     success and have their final wall_us (a release store per chunk of steps). The recorder's
//     thread, once done compiling, builds the records of published steps only, in order, through
//     the caller's `build(k)`, and never touches a step the burst is still running.
//   - `build(k)` runs on the recorder's thread, one call at a time, in order of k. It may read the
//     plan, the compiled step k and run-state facts no later call of the burst writes, and write
//     what the run's thread does not touch until Finish returns (the records, the summary's
//     counts, state.step_address). The executor uses a recorder only for bursts whose records
//     read nothing else: every create in them is `bare` (memory_burst.cc checks it).
//   - Finish(done) is called by the run's thread once the burst has ended, with RunVmmSteps'
//     return value: the recorder builds every step before `done` (all succeeded), gives the
//     thread back and returns `done`. An exception thrown by `build` (std::bad_alloc) is thrown
//     again from Finish, on the run's thread.
//   - The records are built on the process's BackgroundThread, parked between bursts: a burst
//     costs the run's thread one wake at its start, one at its end and the wait for the last of
//     its records. In between the recorder's thread looks for finished steps every 200 µs (a
//     timed sleep), so the calls pay nothing for it.
//   - Not copyable; the destructor finishes what Finish did not.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>

#include "runner/base/background_thread.h"

namespace vmm {

// How far a running burst has got: the count of steps done (with their final times), and a flag
// (the top bit) once the burst has ended. One word, so that a waiter sees the end even when the
// count did not change. And how far its compile has got, in a second word of the same form on a
// line of its own (the two are written by different threads).
class BurstProgress {
 public:
  static constexpr uint64_t kEnded = uint64_t{1} << 63;
  // `compiled` steps are compiled; with `all`, those are all the burst's steps (the default: a
  // burst compiled before its first call).
  explicit BurstProgress(size_t compiled = 0, bool all = true)
      : compiled_(compiled | (all ? kEnded : 0)) {}
  // Steps [0, done) finished. A plain store: the recorder looks every kPollEvery, so the burst's
  // calls make no system call for it (a wake cost the run's thread a few µs on a VM).
  void Publish(size_t done) { word_.store(done, std::memory_order_release); }
  // The burst has ended after `done` steps: wakes the recorder at once.
  void End(size_t done) {
    word_.store(done | kEnded, std::memory_order_release);
    { std::lock_guard<std::mutex> lock(mu_); }  // the recorder is asleep or has yet to look
    ended_.notify_one();
  }
  // The word as last stored.
  uint64_t Load() const { return word_.load(std::memory_order_acquire); }
  // By the recorder: sleeps kPollEvery, or less when the burst ends meanwhile.
  void Sleep() {
    std::unique_lock<std::mutex> lock(mu_);
    ended_.wait_for(lock, kPollEvery, [this] { return (Load() & kEnded) != 0; });
  }

  // By the compiling thread: steps [0, compiled) are compiled (`all`: and the burst has no more).
  void PublishCompiled(size_t compiled, bool all) {
    compiled_.store(compiled | (all ? kEnded : 0), std::memory_order_release);
    compiled_.notify_one();
  }
  // By the run's thread, which has run steps [0, i) and knows of no more compiled: the count
  // compiled now, once it is above i, or i when the burst has no step i.
  size_t AwaitCompiled(size_t i) const {
    for (;;) {
      const uint64_t word = compiled_.load(std::memory_order_acquire);
      const size_t compiled = word & ~kEnded;
      if (compiled > i) return compiled;
      if ((word & kEnded) != 0) return i;
      compiled_.wait(word, std::memory_order_acquire);
    }
  }

 private:
  static constexpr std::chrono::microseconds kPollEvery{200};
  alignas(64) std::atomic<uint64_t> word_{0};
  alignas(64) std::atomic<uint64_t> compiled_;
  std::mutex mu_;  // with ended_: the recorder's sleep, cut short by End
  std::condition_variable ended_;
};

class BurstRecorder {
 public:
  // Hands the building (and, given `compile`, the compile of steps from `compiled` on) to the
  // process's BackgroundThread; started() is false when that thread is busy with another run's
  // burst or cannot be started (the caller then compiles and builds the records itself).
  explicit BurstRecorder(std::function<void(size_t)> build,
                         std::function<bool(size_t)> compile = nullptr, size_t compiled = 0);
  bool started() const { return thread_ != nullptr; }
  ~BurstRecorder();
  BurstRecorder(const BurstRecorder&) = delete;
  BurstRecorder& operator=(const BurstRecorder&) = delete;

  BurstProgress& progress() { return progress_; }
  // See the contract above; returns `done`. Only when started().
  size_t Finish(size_t done);

 private:
  void Build();
  void CompileAhead(size_t from);

  std::function<void(size_t)> build_;
  std::function<bool(size_t)> compile_;
  BurstProgress progress_;
  std::exception_ptr failure_;  // written by the thread, read after its Wait
  BackgroundThread* thread_;    // held from construction to Finish (or the destructor)
  bool finished_ = false;
};

// How many bursts of this process had their records built by a BurstRecorder, and how many of
// those had their later steps compiled by it too (tests and bench/runner_overhead_bench read them,
// to know which path a run took).
uint64_t BurstsRecordedAside();
uint64_t BurstsCompiledAhead();

// Bursts at least this long have their records built by a BurstRecorder (a shorter one costs
// less to build here than the wakes and the wait for its last records).
inline constexpr size_t kRecordAsideMinSteps = 256;

}  // namespace vmm
