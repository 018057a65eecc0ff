// `vmm-run expand FILE [--set NAME=VALUE]...`: prints the scenario after variables, loops and
// includes, as YAML, exactly as it will run (docs/scenario-language.md, "Variables, loops and
// includes"). The expanded form is validated like `vmm-run validate` does (schema, then the
// VMM/graph rules) and printed only when valid; errors point at the source. Exit 0 when printed,
// 2 otherwise.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "runner/engine/select/engine_select.h"

namespace CLI {
class App;
}

namespace vmm {

struct ExpandCommandOptions {
  std::string file;
  std::vector<std::string> set;            // NAME=VALUE
  std::vector<std::string> include_roots;  // --include-root
};

void SetupExpandCommand(CLI::App& app, ExpandCommandOptions& options);
int RunExpandCommand(const ExpandCommandOptions& options, std::ostream& out, std::ostream& err);

// The scenario in `file` expanded and validated, as `vmm-run expand` prints it (a header comment,
// then YAML that expands to itself); the errors go to `err` and nullopt comes back.
// A scenario that names a device fact (device_memory, device_free) gets them from the device
// `backend` picks (runner/pipeline/device_facts.h), with the values in the header's vars.
struct ExpandOptions;
std::optional<std::string> ExpandToText(const std::string& file, const ExpandOptions& expand,
                                        std::ostream& err,
                                        BackendKind backend = BackendKind::kAuto);

// `--set NAME=VALUE` for run, validate and expand: parses `args` into *options; prints the first
// bad one to `err` and returns false.
bool ParseSetOptions(const std::vector<std::string>& args, ExpandOptions* options,
                     std::ostream& err);
// `--include-root DIR` for run, validate and expand: a folder outside the scenario's own that
// `include:` may read from (docs/limits-and-safety.md).
void AddIncludeRootOption(CLI::App* command, std::vector<std::string>& roots);

}  // namespace vmm
