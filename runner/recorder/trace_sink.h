// TraceSink: where one recorded process writes its records (the file named by VMMRUN_TRACE,
// opened for appending so that the processes of one program share it; each record is one line,
// written whole by one write(2)). Records are numbered in the order they are written. Records of
// kernel launches are buffered and written with the next other record, at exit or after 64 KiB;
// every other record is written at once, so a program that dies leaves every VMM call it made.
//
// Thread-safe: the driver calls back from any of the program's threads.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace vmm::recorder {

// One record's text, built key by key (call_trace.h says the format).
class RecordLine {
 public:
  RecordLine(const char* call, int result);
  RecordLine& Hex(const char* key, uint64_t value);
  RecordLine& Dec(const char* key, uint64_t value);
  RecordLine& Text(const char* key, std::string_view value);  // percent-encodes ' ', '%', ','
                                                              // and non-ASCII bytes
  RecordLine& Raw(const char* key, std::string_view value);   // a value already in the format
  const std::string& words() const { return words_; }
  const char* call() const { return call_; }
  int result() const { return result_; }

 private:
  const char* call_;
  int result_;
  std::string words_;  // " key=value" each
};

class TraceSink {
 public:
  // Opens `path` (writes the trace's first line when the file is empty); false when it cannot.
  bool Open(const char* path);
  // Writes the record (buffered when `buffered` and nothing failed).
  void Write(const RecordLine& line, bool buffered);
  void Comment(std::string_view text);  // "# text", written at once
  void Flush();
  // Around fork() (pthread_atfork): BeforeFork writes what is buffered and holds the lock through
  // the fork, so the child starts with an empty buffer and a free lock; AfterFork releases it.
  void BeforeFork();
  void AfterFork();

 private:
  void FlushLocked();
  std::mutex mutex_;
  int fd_ = -1;
  uint64_t seq_ = 0;
  uint64_t start_ns_ = 0;
  std::string buffer_;
};

uint64_t MonotonicNs();
uint64_t ThreadId();

}  // namespace vmm::recorder
