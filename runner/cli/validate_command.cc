#include "runner/cli/validate_command.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "runner/base/format.h"
#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"

namespace vmm {

void SetupValidateCommand(CLI::App& app, ValidateOptions& options) {
  CLI::App* validate = app.add_subcommand(
      "validate", "Check scenarios against the schema and the VMM/graph rules; run nothing");
  validate->add_option("files", options.files, "Scenario files (YAML)")->required();
  validate->add_flag("-q,--quiet", options.quiet, "Print errors only");
}

int RunValidateCommand(const ValidateOptions& options) {
  int code = 0;
  for (const std::string& file : options.files) {
    std::vector<Diagnostic> diagnostics;
    std::optional<Scenario> scenario = LoadScenarioFile(file, &diagnostics);
    Plan plan;
    if (scenario) plan = BuildPlan(*scenario, &diagnostics);
    if (!diagnostics.empty()) {
      std::cerr << FormatDiagnostics(diagnostics);
      code = 2;
      continue;
    }
    if (!options.quiet) {
      std::cout << file << ": ok · scenario '" << plan.scenario_name << "' · " << plan.steps.size()
                << " steps · granularity " << FormatBytes(plan.granularity) << "\n";
    }
  }
  return code;
}

}  // namespace vmm
