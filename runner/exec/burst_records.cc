#include "runner/exec/burst_records.h"

#include <utility>

namespace vmm {
namespace {

std::atomic<uint64_t> g_recorded_aside{0};
std::atomic<uint64_t> g_compiled_ahead{0};

}  // namespace

uint64_t BurstsRecordedAside() { return g_recorded_aside.load(std::memory_order_relaxed); }
uint64_t BurstsCompiledAhead() { return g_compiled_ahead.load(std::memory_order_relaxed); }

BurstRecorder::BurstRecorder(std::function<void(size_t)> build, std::function<bool(size_t)> compile,
                             size_t compiled)
    : build_(std::move(build)),
      compile_(std::move(compile)),
      progress_(compiled, compile_ == nullptr),
      thread_(BackgroundThread::TryAcquire()) {
  if (thread_ != nullptr)
    thread_->Run([this, compiled] {
      if (compile_) CompileAhead(compiled);
      Build();
    });
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
  if (compile_) g_compiled_ahead.fetch_add(1, std::memory_order_relaxed);
  if (failure_) std::rethrow_exception(failure_);
  return done;
}

void BurstRecorder::CompileAhead(size_t from) {
  // Published every kPublishEvery steps: the run's thread looks only when it has caught up.
  constexpr size_t kPublishEvery = 32;
  size_t k = from;
  // The count is published as final on every way out, or the run's thread would wait for it
  // forever; a compile that throws (none does today) ends the burst there, and Finish throws.
  try {
    for (;; ++k) {
      if (k % kPublishEvery == 0) {
        if ((progress_.Load() & BurstProgress::kEnded) != 0) break;  // the burst failed: enough
        progress_.PublishCompiled(k, false);
      }
      if (!compile_(k)) break;
    }
  } catch (...) {
    failure_ = std::current_exception();
  }
  progress_.PublishCompiled(k, true);
}

void BurstRecorder::Build() {
  size_t built = 0;
  try {
    for (;;) {
      const uint64_t word = progress_.Load();
      const size_t ready = word & ~BurstProgress::kEnded;
      while (built < ready) build_(built++);
      if ((word & BurstProgress::kEnded) != 0) return;
      progress_.Sleep();
    }
  } catch (...) {
    failure_ = std::current_exception();
  }
}

}  // namespace vmm
