#include "runner/cli/steps_command.h"

#include <CLI/CLI.hpp>
#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/scenario/parse.h"

namespace vmm {

void SetupStepsCommand(CLI::App& app, StepsOptions& options) {
  CLI::App* steps =
      app.add_subcommand("steps", "Document every step type and its fields (from the schema)");
  steps->add_option("op", options.op, "Show only this op, e.g. map");
  steps->add_flag("--schema", options.schema, "Print the scenario JSON Schema");
}

int RunStepsCommand(const StepsOptions& options, std::ostream& out, std::ostream& err) {
  if (options.schema) {
    out << ScenarioSchemaText();
    return 0;
  }
  if (options.op.empty()) {
    out << DescribeSteps();
    return 0;
  }
  std::string error;
  std::string text = DescribeStep(options.op, &error);
  if (!error.empty()) {
    err << "error: " << error << "\n";
    return kExitInputError;
  }
  out << text;
  return 0;
}

}  // namespace vmm
