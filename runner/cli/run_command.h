// `vmm-run run FILE...` (also `vmm-run FILE...`): validate, run, verify, report.
//
// Exit codes (the worst over all files): 0 every check passed, 1 a check failed, 2 usage or
// scenario error (nothing ran), 3 backend unavailable, 4 a step failed at run time.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace vmm {

struct RunOptions {
  std::vector<std::string> files;
  std::string backend = "auto";
  int device = 0;
  std::string report;                      // explicit report path (one scenario only)
  std::string report_dir = "vmm-reports";  // default: <report_dir>/<scenario>.<backend>.json
  std::string junit;                       // JUnit XML path, if any
  bool quiet = false;                      // no per-step log
  std::vector<std::string> argv;           // the whole command line, for provenance
  std::vector<std::string> set;            // --set NAME=VALUE: overrides of the scenarios' vars
};

void SetupRunCommand(CLI::App& app, RunOptions& options);
int RunRunCommand(const RunOptions& options);

}  // namespace vmm
