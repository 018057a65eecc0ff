#include "runner/cli/expand_command.h"

#include <CLI/CLI.hpp>
#include <ostream>

#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"
#include "runner/yaml/yaml_writer.h"

namespace vmm {

bool ParseSetOptions(const std::vector<std::string>& args, ExpandOptions* options,
                     std::ostream& err) {
  for (const std::string& arg : args) {
    VarOverride set;
    std::string error;
    if (!ParseVarOverride(arg, &set, &error)) {
      err << "error: " << error << "\n";
      return false;
    }
    options->set.push_back(std::move(set));
  }
  return true;
}

void AddIncludeRootOption(CLI::App* command, std::vector<std::string>& roots) {
  command
      ->add_option("--include-root", roots,
                   "A folder besides the scenario's own that 'include:' may read files from")
      ->check(CLI::ExistingDirectory);
}

void SetupExpandCommand(CLI::App& app, ExpandCommandOptions& options) {
  CLI::App* expand = app.add_subcommand(
      "expand", "Print a scenario after variables, loops and includes, exactly as it will run");
  expand->add_option("file", options.file, "Scenario file (YAML)")->required();
  expand->add_option("--set", options.set, "Override a variable of 'vars:' (NAME=VALUE)");
  AddIncludeRootOption(expand, options.include_roots);
}

int RunExpandCommand(const ExpandCommandOptions& options, std::ostream& out, std::ostream& err) {
  ExpandOptions expand;
  if (!ParseSetOptions(options.set, &expand, err)) return 2;
  expand.include_roots = options.include_roots;
  std::vector<Diagnostic> diagnostics;
  Expansion expansion;
  std::optional<Scenario> scenario =
      LoadScenarioFile(options.file, expand, &diagnostics, &expansion);
  if (scenario) BuildPlan(*scenario, &diagnostics);
  if (!diagnostics.empty()) {
    CollapseRepeats(&diagnostics);
    err << FormatDiagnostics(diagnostics);
    return 2;
  }
  out << "# " << options.file << " expanded by vmm-run expand: " << scenario->steps.size()
      << " top-level steps";
  for (size_t i = 0; i < scenario->vars.size(); ++i)
    out << (i == 0 ? "; vars: " : ", ") << scenario->vars[i].first << "="
        << scenario->vars[i].second;
  out << "\n" << WriteYaml(expansion.document);
  return 0;
}

}  // namespace vmm
