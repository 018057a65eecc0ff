#include "runner/engine/host/fault_trap.h"

#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>

#include <atomic>
#include <cstdio>

namespace vmm::host {
namespace {

std::atomic<bool> g_installed{false};
// The innermost RunTrapped of this thread, and what its fault was. Plain thread-locals of the
// executable (static TLS): reading and writing them in the handler is a few loads and stores.
thread_local sigjmp_buf* t_jump = nullptr;
thread_local FaultInfo* t_fault = nullptr;

int WriteFlag(void* context) {
#if defined(__x86_64__)
  const auto* uc = static_cast<const ucontext_t*>(context);
  return (uc->uc_mcontext.gregs[REG_ERR] & 0x2) != 0 ? 1 : 0;  // page-fault error code: W bit
#else
  (void)context;
  return -1;
#endif
}

void OnFault(int signal_number, siginfo_t* info, void* context) {
  sigjmp_buf* jump = t_jump;
  // Not a trapped kernel, or a signal someone sent: die of it as if there were no handler.
  if (jump == nullptr || info->si_code <= 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(signal_number, &dfl, nullptr);
    if (info->si_code <= 0) raise(signal_number);
    return;  // the faulting instruction runs again and now kills the process
  }
  t_jump = nullptr;
  t_fault->signal = signal_number;
  t_fault->code = info->si_code;
  t_fault->address = reinterpret_cast<uintptr_t>(info->si_addr);
  t_fault->write = WriteFlag(context);
  siglongjmp(*jump, 1);
}

const char* CodeText(int signal_number, int code) {
  if (signal_number == SIGSEGV) {
    if (code == SEGV_MAPERR) return "SEGV_MAPERR: no mapping at the address";
    if (code == SEGV_ACCERR) return "SEGV_ACCERR: access not permitted by the page's protection";
  } else if (signal_number == SIGBUS) {
    if (code == BUS_ADRERR) return "BUS_ADRERR: no backing memory at the address";
    if (code == BUS_ADRALN) return "BUS_ADRALN: misaligned address";
  }
  return nullptr;
}

}  // namespace

std::string FaultInfo::Describe() const {
  char buf[160];
  const char* code_text = CodeText(signal, code);
  const char* access = write == 1 ? "write" : write == 0 ? "read" : "access";
  std::snprintf(buf, sizeof buf, "%s (%s), %s at 0x%llx", signal == SIGBUS ? "SIGBUS" : "SIGSEGV",
                code_text != nullptr ? code_text : "?", access,
                static_cast<unsigned long long>(address));
  return buf;
}

void InstallFaultTrap() {
  if (g_installed.exchange(true)) return;
  struct sigaction action {};
  action.sa_sigaction = OnFault;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &action, nullptr);
  sigaction(SIGBUS, &action, nullptr);
}

bool FaultTrapInstalled() { return g_installed.load(); }

bool RunTrapped(void (*fn)(void*), void* arg, FaultInfo* fault) {
  sigjmp_buf jump;
  // sigsetjmp(..., 1) saves the signal mask, so the jump out of the handler restores it (the
  // handler's own signal is not left blocked). The handler writes the caller's record, which
  // lives outside this frame.
  if (sigsetjmp(jump, 1) != 0) return false;
  t_fault = fault;
  t_jump = &jump;
  fn(arg);
  t_jump = nullptr;
  t_fault = nullptr;
  return true;
}

}  // namespace vmm::host
