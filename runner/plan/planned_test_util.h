// Planned: a scenario text parsed and planned for plan and executor tests, the Scenario kept alive
// beside the Plan (which points into it). `errors` holds the diagnostics, "" when it planned
// cleanly.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"

namespace vmm {

struct Planned {
  explicit Planned(const std::string& text) {
    std::vector<Diagnostic> diagnostics;
    std::optional<Scenario> parsed = ParseScenario(text, "test.yaml", &diagnostics);
    if (parsed) {
      scenario = std::make_unique<Scenario>(std::move(*parsed));
      plan = BuildPlan(*scenario, &diagnostics);
    }
    errors = FormatDiagnostics(diagnostics);
  }
  std::unique_ptr<Scenario> scenario;
  Plan plan;
  std::string errors;
};

// A scenario of one buffer A reserved once, page cycles on it (create p, map, set_access, unmap,
// release, each a 2 MiB page) in runs of `runs[i]` cycles with a synchronize between two runs
// (it ends a burst), its free, and then `then`: with no observer and one run, one burst of
// 5 * cycles + 2 memory steps.
inline std::string PageCycleRuns(const std::vector<int>& runs, const std::string& then = "") {
  std::string text =
      "version: 1\nname: cycles\ngranularity: 2MiB\nbuffers: {A: {shape: [1024]}}\nsteps:\n"
      "  - {op: reserve, buffer: A, size: 2MiB}\n";
  for (size_t r = 0; r < runs.size(); ++r) {
    if (r > 0) text += "  - {op: synchronize}\n";
    for (int i = 0; i < runs[r]; ++i) {
      text +=
          "  - {op: create, alloc: p, size: 2MiB}\n  - {op: map, buffer: A, alloc: p}\n"
          "  - {op: set_access, buffer: A}\n  - {op: unmap, buffer: A}\n"
          "  - {op: release, alloc: p}\n";
    }
  }
  return text + "  - {op: free, buffer: A}\n" + then;
}

inline std::string PageCycleScenario(int cycles) { return PageCycleRuns({cycles}); }

}  // namespace vmm
