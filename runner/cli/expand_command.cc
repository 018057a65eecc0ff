#include "runner/cli/expand_command.h"

#include <CLI/CLI.hpp>
#include <ostream>

#include "runner/base/input_file.h"
#include "runner/base/limits.h"
#include "runner/pipeline/device_facts.h"
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

namespace {

// The expanded document is a scenario too: expanding it again must give it back. Every "${" that
// expansion left in a value (written "$${" in the source) is written "$${" again, so a second
// expansion reads it as text, not as an expression. (Keys are never expanded.)
void EscapeForExpansion(YamlValue* value) {
  if (value->IsScalar()) {
    std::string& text = value->scalar;
    for (size_t at = text.find("${"); at != std::string::npos; at = text.find("${", at + 3))
      text.insert(at, 1, '$');
  }
  for (YamlValue& item : value->items) EscapeForExpansion(&item);
  for (YamlMember& member : value->members) EscapeForExpansion(&member.value);
}

// A value as one line of the header comment: a line break in it would end the comment and start
// YAML of its own.
std::string OneLine(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out;
}

}  // namespace

std::optional<std::string> ExpandToText(const std::string& file, const ExpandOptions& expand,
                                        std::ostream& err, BackendKind backend) {
  std::vector<Diagnostic> diagnostics;
  Expansion expansion;
  StatusOr<std::string> text = ReadInputFile(file, Limit::kInputBytes);
  if (!text.ok()) {
    err << FormatDiagnostic(Diagnostic{SourceLoc{file, 0, 0}, text.status().message()}) << "\n";
    return std::nullopt;
  }
  ExpandOptions with_facts = expand;
  EngineRequest device;
  device.kind = backend;
  Status facts = ApplyHostMemoryEnvironment(&device);
  if (facts.ok()) facts = ReadDeviceFacts(*text, device, &with_facts);
  if (!facts.ok()) {
    err << file << ": error: cannot read the device's memory for device_memory / device_free: "
        << facts.message() << "\n";
    return std::nullopt;
  }
  std::optional<Scenario> scenario =
      ParseScenario(*text, file, with_facts, &diagnostics, &expansion);
  if (scenario) BuildPlan(*scenario, &diagnostics);
  if (!diagnostics.empty()) {
    CollapseRepeats(&diagnostics);
    err << FormatDiagnostics(diagnostics);
    return std::nullopt;
  }
  std::string out = "# " + file +
                    " expanded by vmm-run expand: " + std::to_string(scenario->steps.size()) +
                    " top-level steps";
  for (size_t i = 0; i < scenario->vars.size(); ++i)
    out += (i == 0 ? "; vars: " : ", ") + scenario->vars[i].first + "=" +
           OneLine(scenario->vars[i].second);
  EscapeForExpansion(&expansion.document);
  return out + "\n" + WriteYaml(expansion.document);
}

int RunExpandCommand(const ExpandCommandOptions& options, std::ostream& out, std::ostream& err) {
  ExpandOptions expand;
  if (!ParseSetOptions(options.set, &expand, err)) return 2;
  expand.include_roots = options.include_roots;
  std::optional<std::string> text = ExpandToText(options.file, expand, err);
  if (!text) return 2;
  out << *text;
  return 0;
}

}  // namespace vmm
