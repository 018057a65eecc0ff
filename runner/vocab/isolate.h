// Words of isolate blocks (`{isolate: {expect: ...}, steps: [...]}`): what a block expects of its
// child process, the signals it may name, and how a CUDA error name is read out of an engine
// message. Pure C++; the process machinery is in runner/isolate.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vmm {

// What an isolate block expects its child to end with.
enum class BlockExpect : uint8_t {
  kOk,       // the child exits 0: every step ran and every check passed
  kError,    // the child's first failed step failed with exactly this CUDA error
  kSignal,   // the child was killed by this signal (not by vmm-run's time limit)
  kTimeout,  // the child was still running at the time limit and vmm-run killed it (SIGKILL)
  kObserve,  // whatever happens is recorded, not judged (`vmm-run pin` writes it back)
};

// A block's expectation, decided by the validator from the scenario's words.
struct BlockExpectation {
  BlockExpect kind = BlockExpect::kOk;
  std::string error;      // kError: "CUDA_ERROR_ILLEGAL_ADDRESS"
  int signal = 0;         // kSignal: the signal's number
  uint64_t limit_ns = 0;  // when vmm-run kills the child (kTimeout: the expected timeout)
  std::string at;         // kError, kSignal: the step that must be the one that fails ("": any)
  // The record's `expected`: "ok", "CUDA_ERROR_ILLEGAL_ADDRESS", "signal SIGSEGV", "timeout 5s",
  // with " at 'STEP'" after an error or a signal when `at` is set.
  std::string Text() const;
  // Whether the validator lets the block's steps touch memory they have no access to: true for
  // every expectation but kOk (the fault is what such a block is about).
  bool AllowsFaults() const { return kind != BlockExpect::kOk; }
};

// " at 'STEP'" for a step's name, "" for none: how a block's record names the step that failed.
std::string AtText(const std::string& step);

// The signals a block may expect, by name ("SIGSEGV" -> 11); 0 for a name not in the list.
int SignalNumber(std::string_view name);
// "SIGSEGV" for 11; "signal N" for a number not in the list.
std::string SignalText(int signal_number);
// The names in the list, comma-separated (for messages and the schema test).
std::string SignalNames();

// A duration for people: "200ms", "5s", "1500us", "7ns" (the largest unit that divides it).
std::string DurationText(uint64_t ns);

// The CUDA error name in an engine message (how a child's failed step names its error): the first
// word of it that runner/vocab/cuda_errors.h knows, a CUresult name ("CUDA_ERROR_ILLEGAL_ADDRESS")
// or a runtime name by the CUresult it stands for ("cudaErrorIllegalAddress" ->
// "CUDA_ERROR_ILLEGAL_ADDRESS"): the one vocabulary of expect_error. "" when it names none.
std::string CudaErrorNameIn(std::string_view message);

}  // namespace vmm
