// BackgroundThread: one thread per process that runs a job handed to it, started at its first use
// and parked (a futex wait) between jobs, so that a job costs a wake rather than a thread's start
// and join (about 100 µs together on the CI machine's VM).
//
// Contract:
//   - TryAcquire() gives the process's thread to one holder at a time: nullptr while another
//     holder has it (several runs in one process: crosscheck's jobs), or when no thread can be
//     started. The holder calls Run once, then Wait, which gives the thread back.
//   - Run(job) returns at once; `job` runs on the thread and must not throw (std::terminate).
//     Everything the holder wrote before Run is visible to the job; everything the job wrote is
//     visible to the holder after Wait.
//   - After fork() the child has no such thread: its first TryAcquire starts its own (the parent's
//     object is left behind in the child's memory, unused).
//   - The thread lives until the process ends (detached, parked); it holds no lock while parked
//     and blocks every signal (SIGINT and the like reach the process's other threads).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace vmm {

class BackgroundThread {
 public:
  static BackgroundThread* TryAcquire();
  void Run(std::function<void()> job);
  void Wait();

 private:
  BackgroundThread() = default;
  void Loop();

  std::atomic<bool> held_{false};
  std::atomic<uint32_t> posted_{0};    // jobs handed over
  std::atomic<uint32_t> finished_{0};  // jobs that returned
  std::function<void()> job_;          // written by the holder before posted_, read by the thread
};

}  // namespace vmm
