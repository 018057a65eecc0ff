// Records of a long burst of VMM steps, built on a second thread while the burst's calls run
// (internal to runner/exec).
//
// A burst runs its engine calls back to back (RunVmmSteps); each step's record (~600 bytes, its
// details and addresses as text) is built from the compiled step once the call is done. Built on
// the run's own thread after the burst, that work lands between the run's calls and the next, on
// caches the driver has just emptied, and it was about a percent of a page cycle's time on the
// H200. A BurstRecorder builds them on the process's background thread instead, a chunk behind the
// calls.
//
// Contract:
//   - RunVmmSteps publishes, through BurstProgress, how many steps of the burst have finished with
//     success and have their final wall_us (a release store per chunk of steps). The recorder's
//     thread builds the records of published steps only, in order, through the caller's
//     `build(k)`, and never touches a step the burst is still running.
//   - `build(k)` runs on the recorder's thread, one call at a time, in order of k. It may read the
//     plan, the compiled step k and run-state facts no later call of the burst writes, and write
//     what the run's thread does not touch until Finish returns (the records, the summary's
//     counts, state.step_address). The executor uses a recorder only for bursts whose records
//     read nothing else: every create in them is `bare` (RunPlan checks it as it compiles them).
//   - Finish(done) is called by the run's thread once the burst has ended, with RunVmmSteps'
//     return value: the recorder builds every step before `done` (all succeeded), gives the
//     thread back and returns `done`. An exception thrown by `build` (std::bad_alloc) is thrown
//     again from Finish, on the run's thread.
//   - The records are built on the process's BackgroundThread, parked between bursts: a burst
//     costs one wake, a wake per 128 steps and the wait for the last of its records.
//   - Not copyable; the destructor finishes what Finish did not.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>

#include "runner/base/background_thread.h"

namespace vmm {

// How far a running burst has got: the count of steps done (with their final times), and a flag
// (the top bit) once the burst has ended. One word, so that a waiter sees the end even when the
// count did not change.
class BurstProgress {
 public:
  static constexpr uint64_t kEnded = uint64_t{1} << 63;
  // Steps [0, done) finished; wakes the recorder every kWakeEvery steps (a wake is a system
  // call: the burst publishes every chunk but pays that only this often).
  void Publish(size_t done) {
    word_.store(done, std::memory_order_release);
    if (done - woken_ >= kWakeEvery) {
      woken_ = done;
      word_.notify_one();
    }
  }
  void End(size_t done) {
    word_.store(done | kEnded, std::memory_order_release);
    word_.notify_one();
  }
  // The word as last stored (waits while it equals `seen`).
  uint64_t Load() const { return word_.load(std::memory_order_acquire); }
  void WaitWhile(uint64_t seen) const { word_.wait(seen, std::memory_order_acquire); }

 private:
  static constexpr size_t kWakeEvery = 128;
  std::atomic<uint64_t> word_{0};
  size_t woken_ = 0;  // the run's thread only
};

class BurstRecorder {
 public:
  // Hands the building to the process's BackgroundThread; started() is false when that thread is
  // busy with another run's burst or cannot be started (the caller then builds the records itself).
  explicit BurstRecorder(std::function<void(size_t)> build);
  bool started() const { return thread_ != nullptr; }
  ~BurstRecorder();
  BurstRecorder(const BurstRecorder&) = delete;
  BurstRecorder& operator=(const BurstRecorder&) = delete;

  BurstProgress& progress() { return progress_; }
  // See the contract above; returns `done`. Only when started().
  size_t Finish(size_t done);

 private:
  void Build();

  std::function<void(size_t)> build_;
  BurstProgress progress_;
  std::exception_ptr failure_;  // written by the thread, read after its Wait
  BackgroundThread* thread_;    // held from construction to Finish (or the destructor)
  bool finished_ = false;
};

// How many bursts of this process had their records built by a BurstRecorder (tests and
// bench/runner_overhead_bench read it, to know which path a run took).
uint64_t BurstsRecordedAside();

// Bursts at least this long have their records built by a BurstRecorder (a shorter one costs
// less to build here than the wakes and the wait for its last records).
inline constexpr size_t kRecordAsideMinSteps = 256;

}  // namespace vmm
