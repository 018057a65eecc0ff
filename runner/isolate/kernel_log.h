// KernelLog: the kernel's log (/dev/kmsg) read from a point on, to find the GPU driver's MMU fault
// line for a child process: on the H200 a write through a read-only mapping shows as
//   NVRM: Xid (PCI:0000:1b:00): 31, pid=4242, name=vmm-run, ... MMU Fault: ... FAULT_RO_VIOLATION
//   ACCESS_TYPE_VIRT_WRITE
// and an unmap under a running kernel as Xid 31 ... FAULT_PDE.
//
// OpenAtEnd() opens /dev/kmsg and skips everything already logged, so only lines logged while the
// child ran are read afterwards. Reading needs privileges (root, or CAP_SYSLOG where
// kernel.dmesg_restrict is set); where /dev/kmsg cannot be opened the reason is kept and no line is
// ever found. Not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/base/unique_fd.h"

namespace vmm::isolate {

class KernelLog {
 public:
  // Opens /dev/kmsg (non-blocking) positioned after the last record logged so far.
  static KernelLog OpenAtEnd();
  // A log whose records come from `fd` (tests: a pipe of records), or none (fd -1, `why`).
  KernelLog(UniqueFd fd, std::string why) : fd_(std::move(fd)), why_(std::move(why)) {}

  bool readable() const { return static_cast<bool>(fd_); }
  // Why the log cannot be read ("" when it can).
  const std::string& why_unreadable() const { return why_; }

  // The messages logged since the last call (or since OpenAtEnd), in order.
  std::vector<std::string> ReadNew();

 private:
  UniqueFd fd_;
  std::string why_;
};

// The message text of one /dev/kmsg record ("6,1234,5678,-;NVRM: Xid ..." -> "NVRM: Xid ...");
// continuation lines (" KEY=value") are dropped.
std::string KmsgMessage(const std::string& record);

// The first of `messages` that is an NVRM Xid line for process `pid` ("pid=<pid>," or
// "pid=<pid> "), else nullopt.
std::optional<std::string> XidLineForPid(const std::vector<std::string>& messages, long pid);

}  // namespace vmm::isolate
