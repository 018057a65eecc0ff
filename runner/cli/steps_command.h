// `vmm-run steps [OP]`: the scenario language reference, generated from the embedded JSON Schema.
// `--schema` prints the schema itself (for editors and other tools).
#pragma once

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
int RunStepsCommand(const StepsOptions& options);

}  // namespace vmm
