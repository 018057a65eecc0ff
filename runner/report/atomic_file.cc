#include "runner/report/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace vmm::report {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// Best effort: makes the rename itself durable. A failure here is not reported because the new
// file is already complete and visible.
void SyncParentDirectory(const std::string& path) {
  std::string dir = ".";
  if (size_t slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash + 1);
  if (FILE* d = std::fopen(dir.c_str(), "r")) {
    (void)fsync(fileno(d));
    std::fclose(d);
  }
}

}  // namespace

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return RuntimeError("cannot write '" + path + "': " + ErrnoText(errno));

  int err = 0;
  if (std::fwrite(contents.data(), 1, contents.size(), f) != contents.size()) err = errno;
  if (err == 0 && std::fflush(f) != 0) err = errno;
  if (err == 0 && fsync(fileno(f)) != 0) err = errno;
  if (std::fclose(f) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    std::remove(tmp.c_str());
    return RuntimeError("cannot write '" + path + "': " + ErrnoText(err));
  }
  SyncParentDirectory(path);
  return Status::Ok();
}

StatusOr<std::string> ReadFileToString(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return InvalidInput("cannot read '" + path + "': " + ErrnoText(errno));
  std::string contents;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) contents.append(buffer, n);
  // A directory opens fine and fails on the first read (EISDIR).
  const int err = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (err != 0) return InvalidInput("cannot read '" + path + "': " + ErrnoText(err));
  return contents;
}

}  // namespace vmm::report
