#include "runner/report/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "runner/base/input_file.h"
#include "runner/base/stop_signal.h"

namespace vmm::report {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// The directory part of `path` ("." when there is none) and the file name.
std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
std::string NameOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Best effort: makes the rename itself durable. A failure here is not reported because the new
// file is already complete and visible.
void SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

// Writes all of [data, data + size) to `fd`; 0 or the errno of the first failure.
int WriteAll(int fd, const char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

Status CheckReplaceableTarget(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return InvalidInput("cannot write '" + path + "': " + ErrnoText(errno));
  }
  if (S_ISREG(st.st_mode)) return Status::Ok();
  return InvalidInput("'" + path + "' is " + DescribeFileType(st.st_mode) +
                      "; vmm-run only replaces regular files: remove it or choose another path");
}

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  return WriteFileAtomically(path, [&](const PieceWriter& write) { return write(contents); });
}

Status WriteFileAtomically(const std::string& path,
                           const std::function<Status(const PieceWriter& write)>& produce) {
  VMM_RETURN_IF_ERROR(CheckReplaceableTarget(path));
  const std::string dir = DirectoryOf(path);
  std::string tmp = (dir == "/" ? "" : dir) + "/." + NameOf(path) + ".tmp.XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return RuntimeError("cannot write '" + path + "': " + ErrnoText(errno));
  tmp.assign(name.data());
  SetCleanupPath(tmp);

  constexpr size_t kBuffer = 1 << 20;
  std::string buffer;
  int err = 0;
  auto flush = [&] {
    if (err == 0) err = WriteAll(fd, buffer.data(), buffer.size());
    buffer.clear();
    return err == 0;
  };
  auto failed = [&] { return RuntimeError("cannot write '" + path + "': " + ErrnoText(err)); };
  const PieceWriter write = [&](std::string_view piece) {
    if (err != 0) return failed();  // nothing more after a failed write
    if (buffer.size() + piece.size() > kBuffer && !flush()) return failed();
    if (piece.size() >= kBuffer) {
      err = WriteAll(fd, piece.data(), piece.size());
      return err == 0 ? Status::Ok() : failed();
    }
    buffer.append(piece);
    return Status::Ok();
  };
  Status status;
  try {
    status = produce(write);
  } catch (...) {  // (out of memory while making a piece): no temp file is left behind
    ::close(fd);
    ::unlink(tmp.c_str());
    ClearCleanupPath();
    throw;
  }
  if (status.ok() && flush()) {
    if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) err = errno;
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  if (status.ok() && err == 0) {
    status = CheckReplaceableTarget(path);  // it may have changed while we wrote
    if (status.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  }
  if (err != 0 || !status.ok()) {
    ::unlink(tmp.c_str());
    ClearCleanupPath();
    return status.ok() ? failed() : status;
  }
  ClearCleanupPath();
  SyncDirectory(dir);
  return Status::Ok();
}

StatusOr<std::string> ReadFileToString(const std::string& path) {
  StatusOr<std::string> text = ReadInputFile(path, Limit::kReportBytes);
  if (!text.ok()) return InvalidInput(path + ": " + text.status().message());
  return text;
}

}  // namespace vmm::report
