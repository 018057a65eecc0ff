// `vmm-run pin REPORT [--scenario FILE] [-o OUT | --in-place]`: writes the outcomes that a report's
// `expect: observe` isolate blocks recorded back into the scenario as their expectations
// (runner/pipeline/pin_outcomes.h). The scenario is the one the report names unless --scenario
// says otherwise; it must be unchanged since the run. The result goes to stdout, to OUT, or over
// the scenario (--in-place), and is validated first. Exit 0 when written, 2 otherwise.
#pragma once

#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace vmm {

struct PinOptions {
  std::string report;
  std::string scenario;  // "": the report's scenario_path
  std::string out;       // "": stdout (unless in_place)
  bool in_place = false;
};

void SetupPinCommand(CLI::App& app, PinOptions& options);
int RunPinCommand(const PinOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vmm
