#include "runner/engine/host/kernel_runner.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "kernels/launch_config.h"
#include "runner/base/stopwatch.h"

namespace vmm::host {
namespace {

uint64_t Bytes4(uint64_t count) { return count > UINT64_MAX / 4 ? UINT64_MAX : count * 4; }

// A busy's flag words (none: both null): the host sets `stop`; the busy sets `expired` when it
// stopped at its duration without seeing `stop`.
struct BusyFlag {
  const std::atomic<uint32_t>* stop = nullptr;
  std::atomic<uint32_t>* expired = nullptr;
};

void FillWords(DevicePtr dst, uint64_t count, uint32_t pattern) {
  std::fill_n(reinterpret_cast<uint32_t*>(dst), count, pattern);
}

// Busy's body, as the CUDA kernel's (kernels/busy.cu): kEnd waits then writes once; kRead and
// kWrite pass over every word (volatile: each pass really touches memory), at least once. Each
// stops when the time is up, its flag is set, or (when `stream` is given) the stream is
// cancelled; a kEnd wait looks every millisecond.
void BusyBody(DevicePtr dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
              kernels::BusyTouch touch, BusyFlag flag, const HostStream* stream) {
  enum { kRunning, kTimeUp, kStopped } state = kRunning;
  const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(duration_ns);
  volatile uint32_t* words = reinterpret_cast<uint32_t*>(dst);
  uint32_t seen = 0;
  do {
    if (touch == kernels::BusyTouch::kRead) {
      for (uint64_t i = 0; i < count; ++i) seen ^= words[i];
    } else if (touch == kernels::BusyTouch::kWrite) {
      for (uint64_t i = 0; i < count; ++i) words[i] = pattern;
    } else {
      std::this_thread::sleep_until(
          std::min(end, std::chrono::steady_clock::now() + std::chrono::milliseconds(1)));
    }
    if ((flag.stop != nullptr && flag.stop->load() != 0) ||
        (stream != nullptr && stream->Cancelled())) {
      state = kStopped;
    } else if (std::chrono::steady_clock::now() >= end) {
      state = kTimeUp;
    }
  } while (state == kRunning);
  (void)seen;
  if (state == kTimeUp && flag.expired != nullptr) flag.expired->store(1);
  if (touch == kernels::BusyTouch::kEnd && !(stream != nullptr && stream->Cancelled()))
    FillWords(dst, count, pattern);
}

}  // namespace

KernelRunner::KernelRunner(const AddressSpace& space, bool trap) : space_(space), trap_(trap) {
  if (trap_) InstallFaultTrap();
}

Status KernelRunner::Check(const std::string& fn, const Operand& o, int device) const {
  return space_.CheckAccess(fn, kIllegalAddress, o.name, o.va, o.bytes, o.need, device);
}

bool KernelRunner::AnotherDeviceMay(const std::string& fn, const Operand& o, int device) const {
  for (int d = 0; d < space_.device_count(); ++d)
    if (d != device && Check(fn, o, d).ok()) return true;
  return false;
}

Status KernelRunner::Faulted(const std::string& fn, const FaultInfo& fault) {
  Status faulted = CudaError(fn, kIllegalAddress, "the kernel faulted: " + fault.Describe());
  Poison(faulted, fault.Describe());
  return faulted;
}

void KernelRunner::Poison(const Status& status, const std::string& note) {
  if (!poisoned_.ok()) return;
  poisoned_ = status;
  fault_note_ = note;
}

Status KernelRunner::Launched(Status status, const OpTiming* timing) const {
  if (!status.ok() && trap_ && timing == nullptr && !poisoned_.ok()) return Status::Ok();
  return status;
}

Status KernelRunner::Ordered(bool* was_busy) {
  if (was_busy != nullptr) *was_busy = false;
  VMM_RETURN_IF_ERROR(poisoned_);
  if (stream_ == nullptr) return Status::Ok();
  Status status = stream_->Drain(was_busy);
  if (!status.ok()) Poison(status, stream_->FaultNote());
  return status;
}

Status KernelRunner::WaitIfAsked(SyncNote* note) {
  SyncNote result;
  result.wait = note == nullptr || note->wait;
  if (result.wait) {
    Stopwatch watch;
    VMM_RETURN_IF_ERROR(Ordered(&result.waited));
    if (result.waited) result.wait_us = watch.ElapsedUs();
  } else {
    VMM_RETURN_IF_ERROR(poisoned_);
  }
  if (note != nullptr) *note = result;
  return Status::Ok();
}

HostStream& KernelRunner::Stream() {
  if (stream_ == nullptr) {
    InstallFaultTrap();  // the worker always runs trapped: a fault there is a sticky error
    stream_ = std::make_unique<HostStream>();
    published_.store(stream_.get(), std::memory_order_release);
  }
  return *stream_;
}

bool KernelRunner::WaitInFlight() {
  HostStream* stream = published_.load(std::memory_order_acquire);
  if (stream == nullptr) return false;
  bool was_busy = false;
  (void)stream->Drain(&was_busy);  // a sticky error is the next waiting call's to report
  return was_busy;
}

bool KernelRunner::IdleWithin(uint32_t limit_ms) {
  HostStream* stream = published_.load(std::memory_order_acquire);
  if (stream == nullptr) return true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
  while (!stream->Idle()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

Status KernelRunner::SetFlag(int flag, bool* expired) {
  if (flag < 0 || flag >= kernels::kMaxBusyFlags)
    return RuntimeError("SetFlag(flag=" + std::to_string(flag) + "): no such flag");
  *expired = flags_[kernels::kMaxBusyFlags + flag].load() != 0;
  flags_[flag].store(1);
  return Status::Ok();
}

Status KernelRunner::Busy(DevicePtr dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
                          kernels::BusyTouch touch, int flag, OpTiming* timing, int device) {
  const char* fn = kernels::kBusyKernelName;
  if (flag >= kernels::kMaxBusyFlags)
    return RuntimeError("Busy(flag=" + std::to_string(flag) + "): no such flag");
  BusyFlag words;
  if (flag >= 0) words = {&flags_[flag], &flags_[kernels::kMaxBusyFlags + flag]};
  const Access need = touch == kernels::BusyTouch::kRead ? Access::kRead : Access::kReadWrite;
  if (timing != nullptr) {  // waited for: runs here, like the other kernels
    timing->gpu_us = -1;
    VMM_RETURN_IF_ERROR(Ordered());
    Stopwatch watch;
    auto kernel = [&] { BusyBody(dst, count, duration_ns, pattern, touch, words, nullptr); };
    VMM_RETURN_IF_ERROR(Guarded(fn, device, {{"dst", dst, Bytes4(count), need}}, kernel));
    timing->gpu_us = watch.ElapsedUs();
    return Status::Ok();
  }
  // Left in flight: the stream's worker runs it, trapped. Outside trap mode the launch proves its
  // access now (what is accessible at launch; only a call that does not wait changes it later).
  VMM_RETURN_IF_ERROR(poisoned_);
  if (!trap_) VMM_RETURN_IF_ERROR(Check(fn, {"dst", dst, Bytes4(count), need}, device));
  HostStream& stream = Stream();
  stream.Enqueue([fn, dst, count, duration_ns, pattern, touch, words, &stream](std::string* note) {
    auto kernel = [&] { BusyBody(dst, count, duration_ns, pattern, touch, words, &stream); };
    FaultInfo fault;
    if (RunTrapped(kernel, &fault)) return Status::Ok();
    *note = fault.Describe();
    return CudaError(fn, kIllegalAddress, "the kernel faulted: " + fault.Describe());
  });
  return Status::Ok();
}

}  // namespace vmm::host
