#include "runner/recorder/trace_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

namespace vmm::recorder {
namespace {

constexpr size_t kBufferBytes = 64 * 1024;
constexpr char kDigits[] = "0123456789abcdef";

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full disk loses records; the program must not stop for it
    done += static_cast<size_t>(n);
  }
}

}  // namespace

uint64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t ThreadId() { return static_cast<uint64_t>(::syscall(SYS_gettid)); }

RecordLine::RecordLine(const char* call, int result) : call_(call), result_(result) {
  words_.reserve(160);
}

RecordLine& RecordLine::Hex(const char* key, uint64_t value) {
  words_ += ' ';
  words_ += key;
  words_ += "=0x";
  char text[16];
  int n = 0;
  do {
    text[n++] = kDigits[value & 15];
    value >>= 4;
  } while (value != 0);
  while (n > 0) words_ += text[--n];
  return *this;
}

RecordLine& RecordLine::Dec(const char* key, uint64_t value) {
  words_ += ' ';
  words_ += key;
  words_ += '=';
  words_ += std::to_string(value);
  return *this;
}

RecordLine& RecordLine::Text(const char* key, std::string_view value) {
  words_ += ' ';
  words_ += key;
  words_ += '=';
  for (unsigned char c : value) {
    if (c > 0x20 && c < 0x7f && c != '%' && c != ',') {
      words_ += static_cast<char>(c);
    } else {
      words_ += '%';
      words_ += kDigits[c >> 4];
      words_ += kDigits[c & 15];
    }
  }
  return *this;
}

RecordLine& RecordLine::Raw(const char* key, std::string_view value) {
  words_ += ' ';
  words_ += key;
  words_ += '=';
  words_.append(value);
  return *this;
}

bool TraceSink::Open(const char* path) {
  std::lock_guard<std::mutex> lock(mutex_);
  fd_ = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return false;
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_size == 0) WriteAll(fd_, "# vmm-trace 1\n");
  start_ns_ = MonotonicNs();
  return true;
}

void TraceSink::Write(const RecordLine& line, bool buffered) {
  const uint64_t now = MonotonicNs();
  std::string text;
  text.reserve(line.words().size() + 80);
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return;
  text += std::to_string(++seq_);
  text += ' ';
  text += line.call();
  text += " result=" + std::to_string(line.result());
  text += " t_ns=" + std::to_string(now - start_ns_);
  text += " pid=" + std::to_string(::getpid());
  text += " tid=" + std::to_string(ThreadId());
  text += line.words();
  text += '\n';
  buffer_ += text;
  if (!buffered || line.result() != 0 || buffer_.size() >= kBufferBytes) FlushLocked();
}

void TraceSink::Comment(std::string_view text) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return;
  buffer_ += "# ";
  buffer_.append(text);
  buffer_ += '\n';
  FlushLocked();
}

void TraceSink::Flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  FlushLocked();
}

void TraceSink::FlushLocked() {
  if (fd_ >= 0 && !buffer_.empty()) WriteAll(fd_, buffer_);
  buffer_.clear();
}

void TraceSink::BeforeFork() {
  mutex_.lock();
  FlushLocked();
}

void TraceSink::AfterFork() { mutex_.unlock(); }

}  // namespace vmm::recorder
