// SharedEngine: one engine called by the host threads of a threads group. It forwards every call
// to the engine it wraps, one call at a time (a mutex), with two exceptions that keep what the
// threads race for real:
//   - where the wrapped engine says ConcurrentVmm() (CUDA), the VMM calls (reserve, free, create,
//     map, set_access, unmap, release) go to the driver at once, from their own thread, beside the
//     other threads' calls, waiting for the stream themselves where they wait: the driver's own
//     serialisation is what a latency figure then shows (the executor sends these straight to
//     such an engine, RunState::vmm_engine, one virtual call sooner; the forwarding here serves
//     any other caller);
//   - any other call that waits for work in flight (synchronize; on an engine that is not
//     concurrent, unmap, release and set_access that wait, and the kernels, copies and checks
//     that the twin runs after the stream's work) first waits outside the lock
//     (Engine::WaitForWork), so that a thread waiting for a kernel does not hold back another
//     thread's calls (which may be the unmap that faults the kernel, or the set_flag that ends
//     it). Busy and SetFlag never wait.
// Work left in flight runs beside all of it (the GPU; the twin's stream worker). Thread-safe; the
// wrapped engine must outlive it.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>

#include "runner/engine/engine.h"
#include "runner/engine/fault_engine.h"

namespace vmm {

class SharedEngine final : public Engine {
 public:
  explicit SharedEngine(Engine& inner) : inner_(inner), concurrent_vmm_(inner.ConcurrentVmm()) {}

  const DeviceInfo& info() const override { return inner_.info(); }
  std::string FaultNote() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return inner_.FaultNote();
  }
  uint64_t host_calls() const override { return inner_.host_calls(); }
  bool ConcurrentVmm() const override { return concurrent_vmm_; }
  bool WaitForWork() override { return inner_.WaitForWork(); }
  void PrepareThread(bool with_context) override { inner_.PrepareThread(with_context); }
  void HoldContext(bool hold) override { inner_.HoldContext(hold); }
  bool Checkpointed() const override { return inner_.Checkpointed(); }
  void EndHelpers() override { inner_.EndHelpers(); }
  Status SelectDevice(int device) override {
    std::lock_guard<std::mutex> lock(mu_);
    return inner_.SelectDevice(device);
  }
  Status DescribeDevice(int ordinal, DeviceInfo* out) override {
    std::lock_guard<std::mutex> lock(mu_);
    return inner_.DescribeDevice(ordinal, out);
  }

#define VMMRUN_ENGINE_CALL(name, fault_kind, params, args)                                       \
  Status name params override {                                                                  \
    return Forward(FaultKind::fault_kind, #name, NoteOf args, [&] { return inner_.name args; }); \
  }
#include "runner/engine/engine_calls.def"
#undef VMMRUN_ENGINE_CALL
  using Engine::Create;
  using Engine::Reserve;
  using Engine::SetAccess;

 private:
  // The SyncNote argument of a call that has one (unmap, release, set_access).
  struct NoteArg {
    bool present = false;
    SyncNote* note = nullptr;  // null: the call waits
    bool Waits() const { return present && (note == nullptr || note->wait); }
  };
  template <typename... A>
  static NoteArg NoteOf(const A&... args) {
    NoteArg found;
    (Find(args, &found), ...);
    return found;
  }
  static void Find(SyncNote* note, NoteArg* found) { *found = NoteArg{true, note}; }
  template <typename T>
  static void Find(const T&, NoteArg*) {}
  // Known where each forwarder is compiled (its kind is a constant there), so that a VMM call on an
  // engine that takes them concurrently goes straight to it, with no call in between.
  static constexpr bool IsVmm(FaultKind kind) {
    switch (kind) {
      case FaultKind::kReserve:
      case FaultKind::kFree:
      case FaultKind::kCreate:
      case FaultKind::kRelease:
      case FaultKind::kMap:
      case FaultKind::kSetAccess:
      case FaultKind::kUnmap:
        return true;
      default:
        return false;
    }
  }
  // A call the twin (an engine that is not concurrent) runs only after the stream's work: its
  // kernels but Busy and SetFlag, its copies and data checks.
  static bool RunsAfterWork(FaultKind kind, std::string_view name);

  template <typename Call>
  Status Forward(FaultKind kind, std::string_view name, NoteArg note, Call&& call) {
    if (concurrent_vmm_ && IsVmm(kind)) return call();
    const bool waits = kind == FaultKind::kSynchronize || note.Waits() ||
                       (!concurrent_vmm_ && RunsAfterWork(kind, name));
    if (!waits) {
      std::lock_guard<std::mutex> lock(mu_);
      return call();
    }
    // The wait happens here, unlocked; the call then finds the stream idle, so its note is told
    // what this wait found.
    const auto start = std::chrono::steady_clock::now();
    const bool was_busy = inner_.WaitForWork();
    const double wait_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    std::lock_guard<std::mutex> lock(mu_);
    Status status = call();
    if (note.note != nullptr && was_busy) {
      note.note->waited = true;
      note.note->wait_us += wait_us;
    }
    return status;
  }

  Engine& inner_;
  const bool concurrent_vmm_;
  mutable std::mutex mu_;
};

}  // namespace vmm
