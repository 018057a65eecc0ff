// `vmm-run steps [OP]`: the scenario language reference, generated from the embedded JSON Schema.
// `--schema` prints the schema itself (for editors and other tools).
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace vmm {

struct StepsOptions {
  std::string op;  // empty: every op
  bool schema = false;
};

void SetupStepsCommand(CLI::App& app, StepsOptions& options);
// Writes results to `out` and errors to `err`; returns the exit code (runner/base/exit_code.h).
int RunStepsCommand(const StepsOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vmm
