// libFuzzer target: scenario text -> ParseScenario (YAML loader, schema validator, typed builder)
// -> BuildPlan (name resolution and the VMM/graph state machine) -> diagnostics as printed.
// Contract under test: any byte string is either a plan or a list of diagnostics; nothing crashes,
// hangs, leaks or trips a sanitizer, and a refused input always has at least one diagnostic.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<vmm::Diagnostic> diagnostics;
  // Breadth over size: a seed that expands to 80,000 steps (remap_replay_stress) costs seconds a
  // run under ASan; with a lower step limit its mutations still run the expansion and the limit's
  // own error path.
  vmm::ExpandOptions options;
  options.max_steps = 20000;
  std::optional<vmm::Scenario> scenario =
      vmm::ParseScenario(text, "fuzz.yaml", options, &diagnostics);
  if (!scenario) {
    if (diagnostics.empty()) std::abort();  // refused without saying why
  } else {
    vmm::Plan plan = vmm::BuildPlan(*scenario, &diagnostics);
    (void)plan;
  }
  (void)vmm::FormatDiagnostics(diagnostics);
  return 0;
}
