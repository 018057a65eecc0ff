#include "runner/cli/steps_command.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "runner/scenario/parse.h"

namespace vmm {

void SetupStepsCommand(CLI::App& app, StepsOptions& options) {
  CLI::App* steps =
      app.add_subcommand("steps", "Document every step type and its fields (from the schema)");
  steps->add_option("op", options.op, "Show only this op, e.g. map");
  steps->add_flag("--schema", options.schema, "Print the scenario JSON Schema");
}

int RunStepsCommand(const StepsOptions& options) {
  if (options.schema) {
    std::cout << ScenarioSchemaText();
    return 0;
  }
  if (options.op.empty()) {
    std::cout << DescribeSteps();
    return 0;
  }
  std::string error;
  std::string text = DescribeStep(options.op, &error);
  if (!error.empty()) {
    std::cerr << "error: " << error << "\n";
    return 2;
  }
  std::cout << text;
  return 0;
}

}  // namespace vmm
