// A call trace: the driver calls a program made, one record per line, as `vmm-run record` writes
// them (runner/recorder, format in docs/recording.md):
//
//   # vmm-trace 1
//   12 cuMemMap result=0 t_ns=1830211 pid=4711 tid=4711 ptr=0x7f3a00000000 size=2097152 ...
//
// A record is its sequence number, the call (a row of trace_calls.def), then key=value words:
// result, t_ns, pid and tid, then the call's own keys, each exactly once. Lines starting with '#'
// are comments. ReadCallTrace checks every line and fails on the first bad one with its line
// number, what is wrong and what it expected; the file is untrusted input, bounded by the
// trace_bytes (the caller) and trace_records limits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/base/status.h"

namespace vmm::trace {

enum class CallFamily : uint8_t { kVmm, kQuery, kGraph, kOrder, kLaunch };

enum class TraceCall : uint8_t {
#define TRACE_CALL(name, family, keys) k_##name,
#include "runner/trace/trace_calls.def"
#undef TRACE_CALL
};

struct TraceCallInfo {
  TraceCall call;
  const char* name;  // "cuMemMap"
  CallFamily family;
  std::vector<std::string> keys;  // the call's own keys, in the table's order
};

const std::vector<TraceCallInfo>& AllTraceCalls();
const TraceCallInfo& InfoOf(TraceCall call);
std::optional<TraceCall> TraceCallNamed(std::string_view name);

// One call. Numbers (decimal or 0x hex in the file) are read into `numbers`, in the order of the
// call's keys; `access` and `ptrs` are lists and `kernel` text, kept apart.
struct TraceRecord {
  int line = 0;  // in the trace file
  uint64_t seq = 0;
  TraceCall call = TraceCall::k_cuCtxSynchronize;
  int result = 0;  // the CUresult the call returned (0: CUDA_SUCCESS)
  uint64_t t_ns = 0, pid = 0, tid = 0;
  std::vector<uint64_t> numbers;                 // the numeric keys, by position among the keys
  std::vector<std::pair<int, unsigned>> access;  // cuMemSetAccess: (device, flags)
  std::vector<uint64_t> ptrs;                    // cuLaunchKernel: reserved addresses it was given
  std::string kernel;                            // cuLaunchKernel: the kernel's (mangled) name

  // The value of a numeric key of this record's call; the key must be one (checked on reading).
  uint64_t Number(std::string_view key) const;
  const TraceCallInfo& info() const { return InfoOf(call); }
};

struct CallTrace {
  std::vector<TraceRecord> records;   // in the file's order
  std::vector<std::string> comments;  // the '#' lines after the first, without the '# '
};

// The trace in `text` (from `file`, for messages: "trace.txt:12: ..."), or the first error.
StatusOr<CallTrace> ReadCallTrace(std::string_view text, std::string_view file);

}  // namespace vmm::trace
