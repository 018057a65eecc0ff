// HostStream: the host twin's in-order stream for work that is left in flight (busy with async).
// One worker thread runs the enqueued tasks in order; the engine's thread calls Drain before
// anything the stream orders after them (kernels, copies, synchronize, a waiting unmap or
// release), so the work runs in the order it was issued, as on a CUDA stream. VMM calls that do
// not wait (map, set_access, and unmap/release with wait: false) go ahead while a task runs:
// that is the race isolate blocks exist to show.
//
// Errors are sticky, as a CUDA context's are: the first task that fails (a trapped fault) makes
// every later Drain return its Status, and later tasks are dropped unrun.
//
// Thread safety: Enqueue and Idle are called by the engine's one thread, Drain by it or by any
// other (KernelRunner::WaitInFlight, for a threads group); the worker only
// runs tasks. Destruction cancels what has not started, asks a running task to stop early
// (Cancelled() turns true) and joins the worker.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "runner/base/status.h"

namespace vmm::host {

class HostStream {
 public:
  HostStream();
  ~HostStream();
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  // A task returns its Status; a failing one may also leave an account of what happened in
  // *note (kept with the sticky error: FaultNote()).
  using Task = std::function<Status(std::string* note)>;
  void Enqueue(Task task);

  // Waits until every task enqueued so far has run. *was_busy (when given) says whether one was
  // still queued or running. Returns the sticky error, if any.
  Status Drain(bool* was_busy);
  // True when nothing is queued or running.
  bool Idle();
  // The note of the task whose error is sticky ("" when none).
  std::string FaultNote();
  // For tasks that wait: true once the stream is being destroyed.
  bool Cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  void Work();

  std::mutex mu_;
  std::condition_variable wake_;  // the worker: a task was queued, or the stream is closing
  std::condition_variable idle_;  // Drain: the queue ran empty
  std::deque<Task> queue_;
  bool running_ = false;  // the worker is inside a task
  bool closing_ = false;
  std::atomic<bool> cancelled_{false};
  Status sticky_;
  std::string sticky_note_;
  std::thread worker_;  // last: started after every member above exists
};

}  // namespace vmm::host
