#include "runner/exec/burst_records.h"

#include <utility>

namespace vmm {
namespace {

std::atomic<uint64_t> g_recorded_aside{0};

}  // namespace

uint64_t BurstsRecordedAside() { return g_recorded_aside.load(std::memory_order_relaxed); }

BurstRecorder::BurstRecorder(std::function<void(size_t)> build)
    : build_(std::move(build)), thread_(BackgroundThread::TryAcquire()) {
  if (thread_ != nullptr) thread_->Run([this] { Build(); });
}

BurstRecorder::~BurstRecorder() {
  if (thread_ == nullptr || finished_) return;
  // The burst did not end normally (an exception on the run's thread): the thread builds what was
  // published and stops.
  progress_.End(progress_.Load() & ~BurstProgress::kEnded);
  thread_->Wait();
}

size_t BurstRecorder::Finish(size_t done) {
  progress_.End(done);
  thread_->Wait();
  finished_ = true;
  g_recorded_aside.fetch_add(1, std::memory_order_relaxed);
  if (failure_) std::rethrow_exception(failure_);
  return done;
}

void BurstRecorder::Build() {
  size_t built = 0;
  try {
    for (;;) {
      const uint64_t word = progress_.Load();
      const size_t ready = word & ~BurstProgress::kEnded;
      while (built < ready) build_(built++);
      if ((word & BurstProgress::kEnded) != 0) return;
      progress_.WaitWhile(word);
    }
  } catch (...) {
    failure_ = std::current_exception();
  }
}

}  // namespace vmm
