#include "runner/engine/host/host_stream.h"

namespace vmm::host {

HostStream::HostStream() : worker_([this] { Work(); }) {}

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
    cancelled_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  worker_.join();
}

void HostStream::Enqueue(Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  wake_.notify_one();
}

Status HostStream::Drain(bool* was_busy) {
  std::unique_lock<std::mutex> lock(mu_);
  if (was_busy != nullptr) *was_busy = running_ || !queue_.empty();
  idle_.wait(lock, [this] { return !running_ && queue_.empty(); });
  return sticky_;
}

bool HostStream::Idle() {
  std::lock_guard<std::mutex> lock(mu_);
  return !running_ && queue_.empty();
}

std::string HostStream::FaultNote() {
  std::lock_guard<std::mutex> lock(mu_);
  return sticky_note_;
}

void HostStream::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return closing_ || !queue_.empty(); });
    if (closing_) return;
    Task task = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    const bool poisoned = !sticky_.ok();
    lock.unlock();
    std::string note;
    Status status = poisoned ? Status::Ok() : task(&note);  // after an error, work is dropped
    lock.lock();
    running_ = false;
    if (!status.ok() && sticky_.ok()) {
      sticky_ = std::move(status);
      sticky_note_ = std::move(note);
    }
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace vmm::host
