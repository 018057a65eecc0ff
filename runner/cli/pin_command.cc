#include "runner/cli/pin_command.h"

#include <CLI/CLI.hpp>
#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/base/input_file.h"
#include "runner/cli/scenario_output.h"
#include "runner/pipeline/pin_outcomes.h"
#include "runner/report/report_io.h"

namespace vmm {

void SetupPinCommand(CLI::App& app, PinOptions& options) {
  CLI::App* pin = app.add_subcommand(
      "pin", "Write what a report's 'expect: observe' blocks recorded back as their expectations");
  pin->add_option("report", options.report, "The report of a run of the scenario")->required();
  pin->add_option("--scenario", options.scenario,
                  "The scenario (default: the one the report names)");
  CLI::Option* out =
      pin->add_option("-o,--out", options.out, "Where to write it (default: stdout)");
  pin->add_flag("--in-place", options.in_place, "Write it over the scenario")->excludes(out);
}

int RunPinCommand(const PinOptions& options, std::ostream& out, std::ostream& err) {
  StatusOr<report::Report> report = report::ReadReport(options.report);
  if (!report.ok()) {
    err << "error: " << report.status().message() << "\n";
    return kExitInputError;
  }
  const std::string path = options.scenario.empty() ? report->scenario_path : options.scenario;
  StatusOr<std::string> text = ReadInputFile(path, Limit::kInputBytes);
  if (!text.ok()) {
    err << "error: " << text.status().message() << "\n";
    return kExitInputError;
  }
  StatusOr<PinResult> pinned = PinObservedOutcomes(*text, *report);
  if (!pinned.ok()) {
    err << path << ": error: " << pinned.status().message() << "\n";
    return kExitInputError;
  }
  ScenarioOutput output;
  output.target = options.in_place ? path : options.out;
  output.name = path;
  output.invalid_exit = kExitInputError;
  output.invalid_header = "error: the pinned scenario does not validate:";
  return EmitScenario(pinned->text, output,
                      "pinned " + std::to_string(pinned->pinned) + " observation(s) in", out, err);
}

}  // namespace vmm
