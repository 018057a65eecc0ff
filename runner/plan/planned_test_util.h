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

}  // namespace vmm
