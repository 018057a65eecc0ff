// KernelRunner: how the host twin runs its CPU kernels, in stream order, and what a fault does.
//
//   - Guarded runs a kernel on the calling thread. Outside trap mode it first proves every operand
//     is accessible (AddressSpace::CheckAccess): a kernel that would fault is refused with
//     CUDA_ERROR_ILLEGAL_ADDRESS and nothing is poisoned. In trap mode (an isolate block's child)
//     the kernel really runs under the fault trap (fault_trap.h): a fault poisons the runner.
//     Where another device's access would let the CPU through (it sees only the widest access of
//     any device), a trapped kernel's own device's access is proven first, and a refusal
//     poisons the runner as the GPU's fault would. Not caught (the twin passes where the GPU
//     faults): an operand whose pieces other devices cover only together, and a busy left in
//     flight on the stream's worker.
//   - Work left in flight (Busy without timing) goes to a HostStream's worker thread, always
//     trapped; Ordered waits for it before anything the stream orders later, and WaitIfAsked does
//     so for Unmap/Release unless SyncNote::wait is false.
//   - Poisoned: the first fault is sticky, as a CUDA context's: Poisoned() returns it, and so do
//     Ordered, WaitIfAsked and every later kernel.
// Owned by the host engine, which outlives it; the stream (and its worker) is destroyed first.
// Not thread-safe: the engine's one thread calls it.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>

#include "runner/base/status.h"
#include "runner/engine/engine.h"
#include "runner/engine/host/address_space.h"
#include "runner/engine/host/fault_trap.h"
#include "runner/engine/host/host_stream.h"

namespace vmm::host {

// A kernel operand whose access is proven before the kernel runs (outside trap mode).
struct Operand {
  const char* name;
  DevicePtr va;
  uint64_t bytes;
  Access need;
};

class KernelRunner {
 public:
  // `trap` installs the process-wide fault trap.
  KernelRunner(const AddressSpace& space, bool trap);

  const Status& Poisoned() const { return poisoned_; }
  // The fault trap's account of the fault that poisoned the runner ("" when none).
  const std::string& FaultNote() const { return fault_note_; }

  // Runs `kernel` on this thread as device `device` (an ordinal of the twin: whose access the
  // operands are proven against; see the file comment).
  template <typename Kernel>
  Status Guarded(const std::string& fn, int device, std::initializer_list<Operand> operands,
                 Kernel& kernel) {
    return Guarded(fn, device, std::span<const Operand>(operands.begin(), operands.size()), kernel);
  }
  template <typename Kernel>
  Status Guarded(const std::string& fn, int device, std::span<const Operand> operands,
                 Kernel& kernel) {
    VMM_RETURN_IF_ERROR(poisoned_);
    if (!trap_) {
      for (const Operand& o : operands) VMM_RETURN_IF_ERROR(Check(fn, o, device));
      kernel();
      return Status::Ok();
    }
    // The OS protection of a mapping is the widest access any device has, so a write that only
    // another device may make does not fault on the CPU; on the GPU each device has page tables
    // of its own and it does. So where another device's access would let the CPU through, the
    // running device's is proven first, and a kernel that lacks it faults as the GPU's would.
    for (const Operand& o : operands) {
      Status refused = Check(fn, o, device);
      if (!refused.ok() && AnotherDeviceMay(fn, o, device)) {
        Poison(refused, "device " + std::to_string(device) +
                            "'s access refused it (another device's access let the CPU through)");
        return refused;
      }
    }
    FaultInfo fault;
    if (RunTrapped(kernel, &fault)) return Status::Ok();
    return Faulted(fn, fault);
  }

  // What a kernel launch returns: in trap mode, the fault of a launch nobody waits for (no
  // timing) is reported by the next call, as the GPU reports it at the next synchronization.
  Status Launched(Status status, const OpTiming* timing) const;

  // Waits until the stream's work has run; `*was_busy` says whether there was any.
  Status Ordered(bool* was_busy = nullptr);
  // Unmap/Release: Ordered unless note->wait is false; fills the note's outputs.
  Status WaitIfAsked(SyncNote* note);
  // Engine::WaitForWork: waits for the stream's work without touching the runner's own state, so
  // any thread may call it while the engine's thread calls the rest; true when there was work.
  bool WaitInFlight();
  // True once the stream has no work queued or running, waiting at most `limit_ms` for it (a
  // checkpoint's lock); any thread.
  bool IdleWithin(uint32_t limit_ms);

  // busy over `count` words at dst for `duration_ns`, as `touch` says (kernels::BusyTouch: wait
  // then write `pattern`, or read or write them pass after pass), or until busy flag `flag` (>= 0)
  // is set; with `timing` here and timed, without it on the stream's worker (left in flight).
  Status Busy(DevicePtr dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
              kernels::BusyTouch touch, int flag, OpTiming* timing, int device);
  // Engine::SetFlag: sets busy flag `flag`; *expired when a busy given it had already stopped at
  // its duration. Any thread.
  Status SetFlag(int flag, bool* expired);

 private:
  Status Check(const std::string& fn, const Operand& o, int device) const;
  // Whether a device other than `device` has the access `o` needs (then the CPU would not fault).
  bool AnotherDeviceMay(const std::string& fn, const Operand& o, int device) const;
  Status Faulted(const std::string& fn, const FaultInfo& fault);
  void Poison(const Status& status, const std::string& note);
  HostStream& Stream();

  const AddressSpace& space_;
  const bool trap_;
  Status poisoned_;                              // the first device fault (ok: none)
  std::string fault_note_;                       // the fault trap's account of it
  std::unique_ptr<HostStream> stream_;           // made by the first Busy left in flight
  std::atomic<HostStream*> published_{nullptr};  // stream_, for WaitInFlight's other threads
  // Busy flags as the CUDA engine's: kMaxBusyFlags words the host sets, then as many a busy sets
  // when it stopped at its duration without seeing its flag.
  std::array<std::atomic<uint32_t>, 2 * kernels::kMaxBusyFlags> flags_{};
};

}  // namespace vmm::host
