// libFuzzer target: call-trace bytes -> ReadCallTrace -> TraceScenario (each process with VMM
// calls) -> the scenario validator, and CompareVmmCalls of the trace with itself. Contracts under
// test: the reader never crashes on any byte string and says why it refuses; an import the
// importer accepts always validates (one that does not is `import-trace`'s exit 70); a trace
// matches itself in full.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"
#include "runner/trace/call_trace.h"
#include "runner/trace/trace_compare.h"
#include "runner/trace/trace_scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vmm::trace;
  const std::string text(reinterpret_cast<const char*>(data), size);
  vmm::StatusOr<CallTrace> trace = ReadCallTrace(text, "fuzz.trace");
  if (!trace.ok()) {
    if (trace.status().message().empty()) std::abort();  // refused without saying why
    return 0;
  }
  std::set<uint64_t> pids;
  for (const TraceRecord& r : trace->records) pids.insert(r.pid);
  for (uint64_t pid : pids) {
    for (bool data_on : {true, false}) {
      TraceImportOptions options;
      options.name = "fuzz";
      options.source = "fuzz.trace";
      options.pid = static_cast<int64_t>(pid);
      options.data = data_on;
      vmm::StatusOr<std::string> scenario = TraceScenario(*trace, options);
      if (!scenario.ok()) continue;
      std::vector<vmm::Diagnostic> diagnostics;
      std::optional<vmm::Scenario> parsed =
          vmm::ParseScenario(*scenario, "imported.yaml", &diagnostics);
      if (parsed) vmm::BuildPlan(*parsed, &diagnostics);
      if (!parsed || !diagnostics.empty()) std::abort();  // the importer wrote an invalid scenario
    }
    const TraceComparison self = CompareVmmCalls(*trace, pid, *trace, pid);
    if (self.matched != self.a_calls) std::abort();
  }
  return 0;
}
