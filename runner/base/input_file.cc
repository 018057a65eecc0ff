#include "runner/base/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runner/base/format.h"

namespace vmm {
namespace {

Status CannotRead(const std::string& why) { return InvalidInput("cannot read the file: " + why); }

std::string SizeLimitText(size_t max_bytes, const std::string& hint) {
  return "the limit is " + FormatBytes(max_bytes) + hint;
}

StatusOr<std::string> ReadBounded(const std::string& path, size_t max_bytes,
                                  const std::string& hint);

}  // namespace

std::string DescribeFileType(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

StatusOr<std::string> ReadInputFile(const std::string& path, size_t max_bytes) {
  return ReadBounded(path, max_bytes, " (see docs/limits-and-safety.md)");
}

StatusOr<std::string> ReadInputFile(const std::string& path, Limit limit) {
  return ReadBounded(path, LimitValue(limit), RaiseHint(limit));
}

namespace {

StatusOr<std::string> ReadBounded(const std::string& path, size_t max_bytes,
                                  const std::string& hint) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return CannotRead(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return CannotRead(std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return CannotRead("it is " + DescribeFileType(st.st_mode) + "; expected a regular file");
  }
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    ::close(fd);
    return InvalidInput("the file is " + std::to_string(st.st_size) + " bytes; " +
                        SizeLimitText(max_bytes, hint));
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t have = 0;
  for (;;) {
    if (have == text.size()) {
      if (text.size() > max_bytes) break;  // grew past the limit while being read
      text.resize(std::min(max_bytes + 1, text.size() + 4096));
    }
    const ssize_t n = ::read(fd, text.data() + have, text.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return CannotRead(std::strerror(err));
    }
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  if (have > max_bytes) {
    return InvalidInput("the file grew past " + FormatBytes(max_bytes) + " while it was read; " +
                        SizeLimitText(max_bytes, hint));
  }
  text.resize(have);
  return text;
}

}  // namespace
}  // namespace vmm
