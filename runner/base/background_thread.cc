#include "runner/base/background_thread.h"

#include <pthread.h>
#include <signal.h>

#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace vmm {
namespace {

std::mutex g_start_mu;                             // guards the start of the thread
std::atomic<BackgroundThread*> g_thread{nullptr};  // the process's, once started (never freed)
std::once_flag g_atfork_once;

}  // namespace

BackgroundThread* BackgroundThread::TryAcquire() {
  BackgroundThread* thread = g_thread.load(std::memory_order_acquire);
  if (thread == nullptr) {
    std::lock_guard<std::mutex> lock(g_start_mu);
    thread = g_thread.load(std::memory_order_acquire);
    if (thread == nullptr) {
      std::call_once(g_atfork_once, [] {
        // The child of a fork has only the forking thread: it starts its own at first use.
        pthread_atfork(nullptr, nullptr,
                       [] { g_thread.store(nullptr, std::memory_order_relaxed); });
      });
      thread = new BackgroundThread;  // lives as long as the process (its thread never ends)
      // The thread starts with every signal blocked (it inherits this thread's mask, restored
      // after): stop signals keep going to the threads that poll for them, as before it existed.
      sigset_t all, before;
      sigfillset(&all);
      pthread_sigmask(SIG_BLOCK, &all, &before);
      try {
        std::thread([thread] { thread->Loop(); }).detach();
      } catch (const std::system_error&) {
        pthread_sigmask(SIG_SETMASK, &before, nullptr);
        delete thread;
        return nullptr;
      }
      pthread_sigmask(SIG_SETMASK, &before, nullptr);
      g_thread.store(thread, std::memory_order_release);
    }
  }
  bool idle = false;
  if (!thread->held_.compare_exchange_strong(idle, true, std::memory_order_acquire)) return nullptr;
  return thread;
}

void BackgroundThread::Run(std::function<void()> job) {
  job_ = std::move(job);
  posted_.fetch_add(1, std::memory_order_release);
  posted_.notify_one();
}

void BackgroundThread::Wait() {
  const uint32_t target = posted_.load(std::memory_order_relaxed);
  for (uint32_t seen = finished_.load(std::memory_order_acquire); seen != target;
       seen = finished_.load(std::memory_order_acquire)) {
    finished_.wait(seen, std::memory_order_acquire);
  }
  job_ = nullptr;
  held_.store(false, std::memory_order_release);
}

void BackgroundThread::Loop() {
  uint32_t done = 0;
  for (;;) {
    posted_.wait(done, std::memory_order_acquire);
    const uint32_t posted = posted_.load(std::memory_order_acquire);
    job_();  // one holder at a time, who waits before the next Run: one job was posted
    done = posted;
    finished_.store(done, std::memory_order_release);
    finished_.notify_one();
  }
}

}  // namespace vmm
