#include "runner/cli/validate_command.h"

#include <CLI/CLI.hpp>
#include <optional>
#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/base/format.h"
#include "runner/base/input_file.h"
#include "runner/base/limits.h"
#include "runner/cli/expand_command.h"
#include "runner/pipeline/device_facts.h"
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
  validate->add_option("--set", options.set, "Override a variable of 'vars:' (NAME=VALUE)");
  AddIncludeRootOption(validate, options.include_roots);
}

namespace {

// Runs valijson over `text`, the contents of `file`; prints its verdict and returns false when it
// rejects the file.
bool CrossCheck(const ValijsonOracle& oracle, const std::string& text, const std::string& file,
                bool ours_valid, std::ostream& out, std::ostream& err) {
  std::vector<Diagnostic> theirs = oracle.Validate(text, file);
  const bool schema_valid = theirs.empty();
  if (!schema_valid) err << FormatDiagnostics(theirs);
  out << file << ": valijson " << (schema_valid ? "accepts" : "rejects") << " the file"
      << (schema_valid == ours_valid || ours_valid == false
              ? ""
              : "; vmm-run's validator accepted it: please report this disagreement")
      << "\n";
  return schema_valid;
}

// Validates every point of the `sweep:` of `file` (the scenario as `vmm-run run` will run it
// there); prints the errors of each bad point under its name. Returns the number of points (0
// without a sweep), or -1 when some point is invalid.
int ValidateSweepPoints(const std::string& text, const std::string& file,
                        const ExpandOptions& expand, size_t steps, std::ostream& err) {
  std::vector<Diagnostic> diagnostics;
  std::optional<std::vector<SweepPoint>> points =
      ReadSweepPoints(text, file, expand.set, &diagnostics);
  if (!points) {
    err << FormatDiagnostics(diagnostics);
    return -1;
  }
  // Counted before any point is built: every point expands about as the vars' values do.
  // Steps (every point's, added up) one `validate` plans at most across a sweep's points.
  const uint64_t max_steps = LimitValue(Limit::kSweepValidateSteps);
  if (points->size() > 1 && steps > max_steps / points->size()) {
    err << file << ": error: validating the sweep's " << points->size() << " points would plan "
        << points->size() << " x " << steps << " steps, past " << max_steps
        << "; validate some points with --set, or sweep fewer"
        << RaiseHint(Limit::kSweepValidateSteps) << "\n";
    return -1;
  }
  bool valid = true;
  for (const SweepPoint& point : *points) {
    ExpandOptions at = expand;
    at.set.insert(at.set.end(), point.begin(), point.end());
    std::optional<Scenario> scenario = ParseScenario(text, file, at, &diagnostics);
    if (scenario) BuildPlan(*scenario, &diagnostics, PlannedSteps::kDrop);
    if (diagnostics.empty()) continue;
    CollapseRepeats(&diagnostics);
    err << file << ": at sweep point " << SweepPointText(point) << ":\n"
        << FormatDiagnostics(diagnostics);
    diagnostics.clear();
    valid = false;
  }
  return valid ? static_cast<int>(points->size()) : -1;
}

}  // namespace

int RunValidateCommand(const ValidateOptions& options, std::ostream& out, std::ostream& err) {
  std::optional<ValijsonOracle> oracle;
  if (options.valijson) {
    StatusOr<ValijsonOracle> made = ValijsonOracle::Create(ScenarioSchemaText());
    if (!made.ok()) {
      err << "error: valijson cannot load the scenario schema: " << made.status().message() << "\n";
      return kExitInternal;
    }
    oracle.emplace(std::move(made).value());
  }
  ExpandOptions expand;
  if (!ParseSetOptions(options.set, &expand, err)) return kExitInputError;
  expand.include_roots = options.include_roots;
  int code = 0;
  for (const std::string& file : options.files) {
    // Read once (a regular file within the size limit), then parse, cross-check and sweep it.
    StatusOr<std::string> text = ReadInputFile(file, Limit::kInputBytes);
    if (!text.ok()) {
      err << FormatDiagnostic(Diagnostic{SourceLoc{file, 0, 0}, text.status().message()}) << "\n";
      code = kExitInputError;
      continue;
    }
    // A scenario that names device_memory or device_free is validated with the numbers of the
    // device a run would use (this machine's: the GPU, or the host twin).
    ExpandOptions with_facts = expand;
    EngineRequest device;
    Status facts = ApplyHostMemoryEnvironment(&device);
    if (facts.ok()) facts = ReadDeviceFacts(*text, device, &with_facts);
    if (!facts.ok()) {
      err << file << ": error: cannot read the device's memory for device_memory / device_free: "
          << facts.message() << "\n";
      code = kExitInputError;
      continue;
    }
    std::vector<Diagnostic> diagnostics;
    PartialScenario partial;
    std::optional<Scenario> scenario =
        ParseScenario(*text, file, with_facts, &diagnostics, nullptr, &partial);
    Plan plan;  // judged step by step, its steps dropped as they are planned (a long scenario's
                // plan need not fit in memory to be validated)
    if (scenario) plan = BuildPlan(*scenario, &diagnostics, PlannedSteps::kDrop);
    const size_t steps = scenario ? scenario->steps.size() : 0;  // the plan's, one per step
    AddStateErrors(partial, &diagnostics);  // the schema's and the state's errors in one pass
    CollapseRepeats(&diagnostics);
    const bool valid = diagnostics.empty();
    if (!valid) err << FormatDiagnostics(diagnostics);
    if (oracle && !CrossCheck(*oracle, *text, file, valid, out, err)) code = kExitInputError;
    if (!valid) {
      code = kExitInputError;
      continue;
    }
    const int points = ValidateSweepPoints(*text, file, with_facts, steps, err);
    if (points < 0) {
      code = kExitInputError;
      continue;
    }
    if (!options.quiet) {
      out << file << ": ok · scenario '" << plan.scenario_name << "' · " << steps
          << " steps · granularity " << FormatBytes(plan.granularity);
      if (points > 0) out << " · " << points << " sweep points valid";
      out << "\n";
    }
  }
  return code;
}

}  // namespace vmm
