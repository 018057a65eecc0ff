// ChildProcess: one child `vmm-run __child` started for an isolate block, and the parent's hold on
// it until it is reaped.
//
// Contract:
//   - Start uses posix_spawn (never a bare fork: the parent may have initialised CUDA, and a forked
//     copy of a CUDA process is unusable): the child runs `exe` with `args`, stdin and stdout on
//     /dev/null, stderr into a pipe the parent reads (stderr_fd), the channel socket as fd 3
//     (kChildChannelFd), an empty signal mask, default signal actions, and a process group of its
//     own (a terminal's Ctrl-C reaches the parent only; the parent decides what the child gets).
//   - The child itself asks the kernel to SIGKILL it when the parent dies (PR_SET_PDEATHSIG), so
//     a parent killed with SIGKILL leaves no child behind (runner/pipeline/isolate_child.cc).
//   - Kill() sends SIGKILL to the child's process group. Every ChildProcess is reaped: Wait*
//     collect the status; the destructor kills and reaps a child that is still there. No zombie
//     survives the object, and the parent's descriptors for the child are closed with it.
//   - Not thread-safe; move-only.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/base/unique_fd.h"

namespace vmm::isolate {

inline constexpr int kChildChannelFd = 3;

class ChildProcess {
 public:
  // Starts the child; `channel` is the child's end of the socket (the parent closes its copy).
  static StatusOr<ChildProcess> Start(const std::string& exe, const std::vector<std::string>& args,
                                      UniqueFd channel);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // The read end of the child's stderr (non-blocking); -1 once closed.
  int stderr_fd() const { return stderr_.get(); }
  void CloseStderr() { stderr_.reset(); }

  // Non-blocking: the child's wait status once it has ended (then it is reaped), else nullopt.
  std::optional<int> TryWait();
  // Blocks until the child has ended; returns its wait status.
  int Wait();
  // SIGKILL to the child's process group (harmless when it already ended).
  void Kill();
  bool reaped() const { return status_.has_value(); }

 private:
  ChildProcess(pid_t pid, UniqueFd stderr_read) : pid_(pid), stderr_(std::move(stderr_read)) {}

  pid_t pid_ = -1;
  UniqueFd stderr_;
  std::optional<int> status_;  // set once reaped
};

}  // namespace vmm::isolate
