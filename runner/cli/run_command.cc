#include "runner/cli/run_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/base/format.h"
#include "runner/base/input_file.h"
#include "runner/base/stop_signal.h"
#include "runner/cli/console_log.h"
#include "runner/cli/expand_command.h"
#include "runner/cli/progress_line.h"
#include "runner/cli/sweep_summary.h"
#include "runner/pipeline/run_scenario.h"
#include "runner/report/atomic_file.h"
#include "runner/report/graph_dot_files.h"
#include "runner/report/junit.h"
#include "runner/report/report_io.h"
#include "runner/report/report_path.h"
#include "runner/scenario/parse.h"

namespace vmm {
namespace {

namespace fs = std::filesystem;

// <report-dir>/<safe name>.<backend>.json (report/report_path.h): always inside report_dir. A
// sweep point adds its values to the name: <scenario>.<axis>=<value>,... (made safe the same way).
std::string DefaultReportPath(const RunOptions& options, const report::Report& report,
                              const SweepPoint* point) {
  const std::string name =
      report.scenario_name + (point != nullptr ? "." + SweepPointText(*point) : "");
  return (fs::path(options.report_dir) / report::DefaultReportFileName(name, report.backend))
      .string();
}

// The report paths claimed so far in this run (lexically normalised) and the scenario file that
// claimed each: a second scenario whose report would land on one of them is refused.
using ClaimedPaths = std::map<std::string, std::string>;

// Picks and prepares the report path before anything runs: the path is not claimed by an earlier
// scenario of this run, its directory exists, and it is absent or a regular file (never a link,
// FIFO, device or directory). Prints the error and returns false otherwise.
bool PrepareReportPath(const RunOptions& options, const std::string& scenario_path,
                       const report::Report& report, const SweepPoint* point, ClaimedPaths* claimed,
                       std::string* chosen, std::ostream& err) {
  const std::string path =
      options.report.empty() ? DefaultReportPath(options, report, point) : options.report;
  const std::string key = fs::path(path).lexically_normal().string();
  // The JUnit file is written at the end: a report there would be replaced by it.
  if (!options.junit.empty() && fs::path(options.junit).lexically_normal().string() == key) {
    err << scenario_path << ": error: the report of scenario '" << report.scenario_name
        << "' would be written to '" << path
        << "', the --junit file, which the run writes at its end; give them different paths\n";
    return false;
  }
  if (auto it = claimed->find(key); it != claimed->end()) {
    err << scenario_path << ": error: the report of scenario '" << report.scenario_name
        << "' would be written to '" << path << "', where '" << it->second
        << "' already wrote its report in this run; give the scenarios different names or "
           "run them separately\n";
    return false;
  }
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) {
    err << path << ": error: cannot create the report directory '" << parent.string()
        << "': " << ec.message() << "\n";
    return false;
  }
  if (Status target = report::CheckReplaceableTarget(path); !target.ok()) {
    err << scenario_path << ": error: " << target.message() << "\n";
    return false;
  }
  (*claimed)[key] = scenario_path;
  *chosen = path;
  return true;
}

// The sweep table's CSV path; its Markdown twin replaces ".csv" with ".md" (sweep_summary.h).
std::string SweepTablePath(const RunOptions& options, const report::Report& report) {
  return (fs::path(options.report_dir) /
          (report.scenario_name + ".sweep." + report.backend + ".csv"))
      .string();
}

// A sweep's outputs from an earlier run are removed once, when the first point is ready to run
// (only then are the scenario's name and backend known): a point that fails to validate, or is
// not reached because the run was stopped, never leaves an older report looking current.
struct StaleSweepOutputs {
  const std::vector<SweepPoint>* points = nullptr;
  bool removed = false;
};

void RemoveStaleSweepOutputs(const RunOptions& options, const report::Report& report,
                             const ClaimedPaths& claimed, StaleSweepOutputs* stale) {
  if (stale == nullptr || stale->removed || !options.report.empty()) return;
  stale->removed = true;
  auto remove = [&](const std::string& path) {
    // A path another scenario of this run already claimed holds that scenario's new report.
    if (claimed.count(fs::path(path).lexically_normal().string()) == 0) ::unlink(path.c_str());
  };
  for (const SweepPoint& point : *stale->points) remove(DefaultReportPath(options, report, &point));
  const std::string csv = SweepTablePath(options, report);
  remove(csv);
  remove(csv.substr(0, csv.size() - 4) + ".md");
}

// Validates, runs and reports one scenario (`text`, the contents of `path`) through the pipeline
// (pipeline/run_scenario.h); returns its exit code and appends its report.
int RunOne(const RunOptions& options, const ExpandOptions& expand, const std::string& path,
           const std::string& text, const SweepPoint* point, StaleSweepOutputs* stale,
           ClaimedPaths* claimed, std::vector<report::Report>* reports, std::ostream& out,
           std::ostream& err) {
  RunRequest request;
  request.path = path;
  request.text = text;
  request.expand = expand;
  if (point != nullptr) request.point = *point;
  ParseBackendKind(options.backend, &request.backend);  // CLI11 already checked the value
  request.device = options.device;
  request.host_devices = options.host_devices;
  request.driver_dot = options.driver_dot;
  request.argv = options.argv;
  PrepareOutcome prepared = PrepareRun(std::move(request));
  if (!prepared.diagnostics.empty()) {
    err << FormatDiagnostics(prepared.diagnostics);
    err << path << ": " << prepared.diagnostics.size()
        << " error(s); nothing was run (fix them, or check with `vmm-run validate`)\n";
    return prepared.exit_code;
  }
  if (!prepared.run) {
    err << path << ": error: " << prepared.error << "\n";
    return prepared.exit_code;
  }
  PreparedRun& run = *prepared.run;

  RemoveStaleSweepOutputs(options, run.report, *claimed, stale);
  std::string report_path;
  if (!PrepareReportPath(options, path, run.report, point, claimed, &report_path, err))
    return kExitInputError;
  // From here on a report at report_path is this run's: an earlier one is removed now, so that an
  // interrupted or crashed run never leaves it looking current. The new one appears, complete,
  // when the run ends (WriteFileAtomically).
  ::unlink(report_path.c_str());

  if (!options.quiet) ConsoleLog::PrintHeader(run.report, out);
  ConsoleLog log(run.plan, out);
  StepObserver* observer = options.quiet ? nullptr : &log;
  std::optional<ProgressLine> progress;  // a live status line, on a terminal only
  if (observer != nullptr && isatty(STDOUT_FILENO) == 1) {
    progress.emplace(run.plan, &log, out, [] {
      return std::chrono::duration<double, std::micro>(
                 std::chrono::steady_clock::now().time_since_epoch())
          .count();
    });
    observer = &*progress;
  }
  report::Report report = ExecuteRun(run, observer);

  // Each captured graph's DOT text beside the report (a failure costs the file, not the report).
  if (Status dots = report::WriteGraphDotFiles(report_path, &report); !dots.ok())
    err << "vmm-run: warning: cannot write a graph's DOT file: " << dots.message() << "\n";
  Status written = report::WriteReport(report, report_path);
  if (!options.quiet) out << "\n";
  ConsoleLog::PrintSummary(report, written.ok() ? report_path : "", out);
  out.flush();
  int code = report.summary.exit_code;
  if (!written.ok()) {
    err << report_path << ": error: cannot write the report: " << written.message() << "\n";
    code = WorseExit(code, kExitStepFailed);
  }
  reports->push_back(std::move(report));
  return code;
}

// Runs `path` once, or once per point of its `sweep:` and then prints the sweep's table (and
// writes it as CSV beside the reports). Returns the worst exit code.
int RunFile(const RunOptions& options, const ExpandOptions& expand, const std::string& path,
            ClaimedPaths* claimed, std::vector<report::Report>* reports, std::ostream& out,
            std::ostream& err) {
  StatusOr<std::string> text = ReadInputFile(path, Limit::kInputBytes);
  if (!text.ok()) {
    err << path << ": error: " << text.status().message() << "\n";
    return kExitInputError;
  }
  std::vector<Diagnostic> diagnostics;
  std::optional<std::vector<SweepPoint>> points =
      ReadSweepPoints(*text, path, expand.set, &diagnostics);
  if (!diagnostics.empty() || (points && points->size() > 1 && !options.report.empty())) {
    err << FormatDiagnostics(diagnostics);
    if (diagnostics.empty())
      err << path << ": error: --report names one file but the sweep has " << points->size()
          << " points; use --report-dir instead\n";
    return kExitInputError;
  }
  if (!points || points->empty())
    return RunOne(options, expand, path, *text, nullptr, nullptr, claimed, reports, out, err);
  int worst = 0;
  StaleSweepOutputs stale{&*points};
  const size_t first = reports->size();
  for (const SweepPoint& point : *points) {
    if (StopRequested()) break;  // the points not started are not run
    ExpandOptions at = expand;
    at.set.insert(at.set.end(), point.begin(), point.end());
    worst = WorseExit(worst,
                      RunOne(options, at, path, *text, &point, &stale, claimed, reports, out, err));
    if (!options.quiet) out << "\n";
  }
  std::vector<const report::Report*> ran;
  for (size_t i = first; i < reports->size(); ++i) ran.push_back(&(*reports)[i]);
  if (ran.empty()) return worst;
  const std::string csv = SweepTablePath(options, *ran.front());
  Status written = WriteSweepSummary(ran, csv, out);
  if (!written.ok()) {
    err << csv << ": error: cannot write the sweep table: " << written.message() << "\n";
    worst = WorseExit(worst, kExitStepFailed);
  }
  return worst;
}

}  // namespace

void AddDeviceOptions(CLI::App* command, int& device, int& host_devices) {
  command
      ->add_option("--device", device,
                   "The run's device ordinal: the scenario's device 0 (device i is the i-th after "
                   "it, wrapping around)")
      ->capture_default_str();
  command
      ->add_option("--host-devices", host_devices,
                   "Devices the host backend emulates (for scenarios with 'requires: devices')")
      ->check(CLI::Range(1, 32))
      ->capture_default_str();
}

void SetupRunCommand(CLI::App& app, RunOptions& options) {
  CLI::App* run = app.add_subcommand(
      "run", "Run scenarios, verify every check, and write a JSON report for each");
  run->add_option("files", options.files, "Scenario files (YAML)")
      ->required()
      ->check(CLI::ExistingFile);
  run->add_option("--backend", options.backend,
                  "auto: CUDA when a VMM-capable device exists, else host")
      ->check(CLI::IsMember({"auto", "host", "cuda"}))
      ->capture_default_str();
  AddDeviceOptions(run, options.device, options.host_devices);
  run->add_option(
      "--report", options.report,
      "Report path (one scenario only; default <report-dir>/<scenario>.<backend>.json)");
  run->add_option("--report-dir", options.report_dir, "Directory for default report paths")
      ->capture_default_str();
  run->add_option("--junit", options.junit, "Also write JUnit XML (one testcase per check)");
  run->add_flag("-q,--quiet", options.quiet, "Print only the summary line per scenario");
  run->add_option("--set", options.set, "Override a variable of 'vars:' (NAME=VALUE)");
  AddIncludeRootOption(run, options.include_roots);
  run->add_flag("--driver-dot", options.driver_dot,
                "On CUDA, write each graph's DOT file from cudaGraphDebugDotPrint (the driver's "
                "verbose view, about 0.35 ms a graph, inside the run's time) instead of from the "
                "structure the report records");
}

int RunRunCommand(const RunOptions& options, std::ostream& out, std::ostream& err) {
  if (!options.report.empty() && options.files.size() > 1) {
    err << "error: --report names one file but " << options.files.size()
        << " scenarios were given; use --report-dir instead\n";
    return kExitInputError;
  }
  if (!options.junit.empty()) {
    if (Status target = report::CheckReplaceableTarget(options.junit); !target.ok()) {
      err << "error: --junit: " << target.message() << "\n";
      return kExitInputError;
    }
  }
  ExpandOptions expand;
  if (!ParseSetOptions(options.set, &expand, err)) return kExitInputError;
  expand.include_roots = options.include_roots;
  InstallStopHandlers();
  int worst = kExitPass;
  std::vector<report::Report> reports;
  ClaimedPaths claimed;
  for (const std::string& file : options.files) {
    if (StopRequested()) break;  // the scenarios not started are not run (and not reported)
    int code = RunFile(options, expand, file, &claimed, &reports, out, err);
    worst = WorseExit(worst, code);
    if (options.files.size() > 1 && !options.quiet) out << "\n";
  }
  if (!options.junit.empty()) {
    Status s = report::WriteJUnit(reports, options.junit);
    if (!s.ok()) {
      err << options.junit << ": error: cannot write JUnit XML: " << s.message() << "\n";
      worst = WorseExit(worst, kExitStepFailed);
    }
  }
  if (StopRequested()) {
    err << "vmm-run: stopped by " << SignalName(StopSignal()) << "\n";
    worst = WorseExit(worst, ExitForSignal(StopSignal()));
  }
  return worst;
}

}  // namespace vmm
