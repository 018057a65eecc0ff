// TraceScenario: one process's call trace (call_trace.h) as a scenario of the same VMM calls, in
// the same order, with the same sizes, offsets, access and devices (docs/recording.md says what
// each call becomes):
//   - each reservation a buffer (R<i>, its size), addresses offsets into it;
//   - each allocation handle a named alloc (h<i>), released as the program released it;
//   - each kernel launch handed reserved addresses a stand-in that touches the same mappings: a
//     memset of each mapping it was given (a view V<i> over the mapping, a value of its own),
//     checked (check_value) before the mapping is unmapped; stated in a comment on each step;
//   - synchronisations that order stand-in work, a synchronize.
// Failed calls, queries, graph calls, exports and imports are not replayed; the header counts
// each kind. The scenario ends clean: what the trace leaves mapped, allocated or reserved is
// given back.
#pragma once

#include <cstdint>
#include <string>

#include "runner/base/status.h"
#include "runner/trace/call_trace.h"

namespace vmm::trace {

struct TraceImportOptions {
  std::string name;    // the scenario's name
  std::string source;  // the file, for the header
  int64_t pid = -1;    // the process to import; -1: the only one that made VMM calls
  bool data = true;    // the stand-ins for the program's kernels
};

// The scenario text, or an error: no process with VMM calls, several without `pid`, a size the
// scenario's 2 MiB granularity cannot express.
StatusOr<std::string> TraceScenario(const CallTrace& trace, const TraceImportOptions& options);

}  // namespace vmm::trace
