// `vmm-run run FILE...` (also `vmm-run FILE...`): validate, run, verify, report.
//
// Exit codes: runner/base/exit_code.h (with several files, the most severe by its rule).
//
// Reports (docs/limits-and-safety.md): the default path is <report-dir>/<SafeFileName(name)>.
// <backend>.json (report/report_path.h), never outside report-dir. Before a scenario runs its
// report path must be unclaimed by an earlier scenario of the same run (else exit 2 for it) and
// absent or a regular file (else exit 2); an earlier report there is then removed, and the new one
// is written atomically when the run ends, also when SIGINT/SIGTERM/SIGHUP stopped it (the
// report says "interrupted"). Scenarios not yet started when a signal arrives are not run.
#pragma once

#include <ostream>
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
  int host_devices = 2;                    // --host-devices: devices the host twin emulates
  std::string report;                      // explicit report path (one scenario only)
  std::string report_dir = "vmm-reports";  // default: <report_dir>/<scenario>.<backend>.json
  std::string junit;                       // JUnit XML path, if any
  bool quiet = false;                      // no per-step log
  std::vector<std::string> argv;           // the whole command line, for provenance
  std::vector<std::string> set;            // --set NAME=VALUE: overrides of the scenarios' vars
  std::vector<std::string> include_roots;  // --include-root
  bool driver_dot = false;  // --driver-dot: CUDA graphs' DOT files from cudaGraphDebugDotPrint
};

void SetupRunCommand(CLI::App& app, RunOptions& options);
// `--device N` and `--host-devices N` for every subcommand that runs scenarios (run, crosscheck,
// reduce): one wording, one range.
void AddDeviceOptions(CLI::App* command, int& device, int& host_devices);
// Runs every file; writes the log to `out` and errors to `err`; returns the exit code.
int RunRunCommand(const RunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vmm
