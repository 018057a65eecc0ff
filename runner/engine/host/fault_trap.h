// The host twin's device fault: a CPU kernel that touches memory it may not raises SIGSEGV (or
// SIGBUS); inside an isolate block's child the twin catches it here and reports it as the GPU
// reports its MMU fault, CUDA_ERROR_ILLEGAL_ADDRESS, so both backends reach the same verdict.
//
// Contract:
//   - InstallFaultTrap() installs one process-wide handler for SIGSEGV and SIGBUS (idempotent).
//     Only the child process of an isolate block calls it (runner/isolate): the parent never
//     faults on purpose, and there a fault should stay a crash.
//   - RunTrapped(fn, arg, &fault) runs fn(arg) on the calling thread. A fault raised by that thread
//     inside fn ends fn at once (siglongjmp): RunTrapped returns false with `fault` filled. So fn
//     must be a kernel loop over raw memory: no destructor of its frames runs and nothing it
//     locked is unlocked (an allocation it made leaks; the child exits soon after anyway).
//   - A fault outside RunTrapped, or on another thread, gets the default action: the process dies
//     of the signal, as it would without the trap (an isolate block may expect exactly that).
//     So does a SIGSEGV/SIGBUS sent with kill().
//   - The handler reads a thread-local jump target and writes a thread-local record: it takes no
//     lock and allocates nothing (async-signal-safe).
#pragma once

#include <cstdint>
#include <string>

namespace vmm::host {

struct FaultInfo {
  int signal = 0;         // SIGSEGV or SIGBUS
  int code = 0;           // si_code: SEGV_MAPERR, SEGV_ACCERR, BUS_ADRERR, ...
  uintptr_t address = 0;  // the faulting address (si_addr)
  int write = -1;         // 1 a write, 0 a read, -1 unknown (known on x86-64)
  // "SIGSEGV (SEGV_ACCERR: access not permitted by the page's protection), write at 0x7f..."
  std::string Describe() const;
};

void InstallFaultTrap();
// Whether InstallFaultTrap() ran in this process.
bool FaultTrapInstalled();

bool RunTrapped(void (*fn)(void*), void* arg, FaultInfo* fault);

// RunTrapped for a callable (called by reference; it must outlive the call).
template <typename Fn>
bool RunTrapped(Fn& fn, FaultInfo* fault) {
  return RunTrapped([](void* f) { (*static_cast<Fn*>(f))(); }, &fn, fault);
}

}  // namespace vmm::host
