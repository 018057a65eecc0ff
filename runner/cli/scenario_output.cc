#include "runner/cli/scenario_output.h"

#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/plan/plan.h"
#include "runner/report/atomic_file.h"
#include "runner/scenario/parse.h"

namespace vmm {

int EmitScenario(const std::string& text, const ScenarioOutput& output, const std::string& what,
                 std::ostream& out, std::ostream& err) {
  std::vector<Diagnostic> diagnostics;
  std::optional<Scenario> scenario = ParseScenario(text, output.name, &diagnostics);
  if (scenario) BuildPlan(*scenario, &diagnostics);
  if (!diagnostics.empty()) {
    err << output.invalid_header << "\n" << FormatDiagnostics(diagnostics);
    return output.invalid_exit;
  }
  if (output.target.empty()) {
    out << text;
    return kExitPass;
  }
  if (Status written = report::WriteFileAtomically(output.target, text); !written.ok()) {
    err << "error: " << written.message() << "\n";
    return kExitInputError;
  }
  err << what << " " << output.target << " (" << scenario->steps.size() << " steps)\n";
  return kExitPass;
}

int EmitImportedScenario(const std::string& text, const std::string& target,
                         const std::string& input_kind, std::ostream& out, std::ostream& err) {
  ScenarioOutput output;
  output.target = target;
  output.name = target.empty() ? "<stdout>" : target;
  output.invalid_exit = kExitInternal;
  output.invalid_header =
      "internal error: the imported scenario does not validate (please report it with the " +
      input_kind + "):";
  return EmitScenario(text, output, "wrote", out, err);
}

}  // namespace vmm
