#include "runner/isolate/kernel_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vmm::isolate {

KernelLog KernelLog::OpenAtEnd() {
  const int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return KernelLog(UniqueFd(), std::string("cannot open /dev/kmsg: ") + strerror(errno));
  UniqueFd owned(fd);
  if (::lseek(fd, 0, SEEK_END) < 0)
    return KernelLog(UniqueFd(), std::string("cannot seek /dev/kmsg: ") + strerror(errno));
  return KernelLog(std::move(owned), "");
}

std::vector<std::string> KernelLog::ReadNew() {
  std::vector<std::string> out;
  if (!fd_) return out;
  char buf[8192];
  while (true) {
    // One record per read on /dev/kmsg; EAGAIN when there is no more, EPIPE when records were
    // overwritten before we read them (then the next read continues with the oldest left).
    const ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EPIPE)) continue;
    if (n <= 0) break;
    std::string record(buf, static_cast<size_t>(n));
    // A pipe (tests) may deliver several records in one read: one per line.
    size_t start = 0;
    while (start < record.size()) {
      size_t end = record.find('\n', start);
      if (end == std::string::npos) end = record.size();
      const std::string line = record.substr(start, end - start);
      if (!line.empty() && line[0] != ' ') out.push_back(KmsgMessage(line));
      start = end + 1;
    }
  }
  return out;
}

std::string KmsgMessage(const std::string& record) {
  const size_t semicolon = record.find(';');
  std::string message = semicolon == std::string::npos ? record : record.substr(semicolon + 1);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
  return message;
}

std::optional<std::string> XidLineForPid(const std::vector<std::string>& messages, long pid) {
  const std::string key = "pid=" + std::to_string(pid);
  for (const std::string& m : messages) {
    if (m.find("NVRM: Xid") == std::string::npos) continue;
    const size_t at = m.find(key);
    if (at == std::string::npos) continue;
    const size_t after = at + key.size();
    if (after == m.size() || m[after] == ',' || m[after] == ' ') return m;
  }
  return std::nullopt;
}

}  // namespace vmm::isolate
