#include "runner/cli/validate_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>

#include "runner/base/format.h"
#include "runner/base/input_file.h"
#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"
#include "runner/yaml/valijson_oracle.h"

namespace vmm {

void SetupValidateCommand(CLI::App& app, ValidateOptions& options) {
  CLI::App* validate = app.add_subcommand(
      "validate", "Check scenarios against the schema and the VMM/graph rules; run nothing");
  validate->add_option("files", options.files, "Scenario files (YAML)")->required();
  validate->add_flag("-q,--quiet", options.quiet, "Print errors only");
  validate->add_flag("--valijson", options.valijson,
                     "Cross-check the schema part with valijson (slower; reports agreement)");
}

namespace {

// Runs valijson over `file`; prints its verdict and returns false when it rejects the file.
bool CrossCheck(const ValijsonOracle& oracle, const std::string& file, bool ours_valid) {
  // Unreadable files (a FIFO, a device, too large) were reported by LoadScenarioFile already.
  StatusOr<std::string> text = ReadInputFile(file, kMaxInputFileBytes);
  if (!text.ok()) return false;
  std::vector<Diagnostic> theirs = oracle.Validate(*text, file);
  const bool schema_valid = theirs.empty();
  if (!schema_valid) std::cerr << FormatDiagnostics(theirs);
  std::cout << file << ": valijson " << (schema_valid ? "accepts" : "rejects") << " the file"
            << (schema_valid == ours_valid || ours_valid == false
                    ? ""
                    : "; vmm-run's validator accepted it: please report this disagreement")
            << "\n";
  return schema_valid;
}

}  // namespace

int RunValidateCommand(const ValidateOptions& options) {
  std::optional<ValijsonOracle> oracle;
  if (options.valijson) {
    StatusOr<ValijsonOracle> made = ValijsonOracle::Create(ScenarioSchemaText());
    if (!made.ok()) {
      std::cerr << "error: valijson cannot load the scenario schema: " << made.status().message()
                << "\n";
      return 3;
    }
    oracle.emplace(std::move(made).value());
  }
  int code = 0;
  for (const std::string& file : options.files) {
    std::vector<Diagnostic> diagnostics;
    std::optional<Scenario> scenario = LoadScenarioFile(file, &diagnostics);
    Plan plan;
    if (scenario) plan = BuildPlan(*scenario, &diagnostics);
    const bool valid = diagnostics.empty();
    if (!valid) std::cerr << FormatDiagnostics(diagnostics);
    if (oracle && !CrossCheck(*oracle, file, valid)) code = 2;
    if (!valid) {
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
