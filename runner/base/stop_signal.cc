#include "runner/base/stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "runner/base/exit_code.h"

namespace vmm {
namespace {

// Lock-free atomics are async-signal-safe; static_asserts below make sure they are lock-free.
std::atomic<int> g_signal{0};
std::atomic<bool> g_have_cleanup{false};
char g_cleanup_path[4096];

static_assert(std::atomic<int>::is_always_lock_free);
static_assert(std::atomic<bool>::is_always_lock_free);

void OnStopSignal(int signal_number) {
  int expected = 0;
  if (g_signal.compare_exchange_strong(expected, signal_number)) return;  // the first one
  const int saved_errno = errno;
  if (g_have_cleanup.load()) (void)unlink(g_cleanup_path);
  errno = saved_errno;
  _exit(ExitForSignal(signal_number));
}

}  // namespace

void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &action, nullptr);
}

bool StopRequested() { return g_signal.load(std::memory_order_relaxed) != 0; }
int StopSignal() { return g_signal.load(); }

std::string SignalName(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(signal_number);
  }
}

void RequestStop(int signal_number) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, signal_number);
}

void ClearStopRequest() { g_signal.store(0); }

void SetCleanupPath(const std::string& path) {
  g_have_cleanup.store(false);
  if (path.empty() || path.size() >= sizeof g_cleanup_path) return;
  std::memcpy(g_cleanup_path, path.c_str(), path.size() + 1);
  g_have_cleanup.store(true);
}

void ClearCleanupPath() { g_have_cleanup.store(false); }

}  // namespace vmm
