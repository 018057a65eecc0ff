#include "runner/cli/run_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <map>

#include "runner/base/exit_code.h"
#include "runner/base/format.h"
#include "runner/base/input_file.h"
#include "runner/base/stop_signal.h"
#include "runner/cli/console_log.h"
#include "runner/cli/provenance.h"
#include "runner/engine/select/engine_select.h"
#include "runner/exec/executor.h"
#include "runner/plan/plan.h"
#include "runner/report/atomic_file.h"
#include "runner/report/junit.h"
#include "runner/report/report_io.h"
#include "runner/report/report_path.h"
#include "runner/scenario/parse.h"

namespace vmm {
namespace {

namespace fs = std::filesystem;

// <report-dir>/<safe name>.<backend>.json (report/report_path.h): always inside report_dir.
std::string DefaultReportPath(const RunOptions& options, const report::Report& report) {
  return (fs::path(options.report_dir) /
          report::DefaultReportFileName(report.scenario_name, report.backend))
      .string();
}

// The report paths claimed so far in this run (lexically normalised) and the scenario file that
// claimed each: a second scenario whose report would land on one of them is refused.
using ClaimedPaths = std::map<std::string, std::string>;

// Picks and prepares the report path before anything runs: the path is not claimed by an earlier
// scenario of this run, its directory exists, and it is absent or a regular file (never a link,
// FIFO, device or directory). Prints the error and returns false otherwise.
bool PrepareReportPath(const RunOptions& options, const std::string& scenario_path,
                       const report::Report& report, ClaimedPaths* claimed, std::string* out) {
  const std::string path =
      options.report.empty() ? DefaultReportPath(options, report) : options.report;
  const std::string key = fs::path(path).lexically_normal().string();
  if (auto it = claimed->find(key); it != claimed->end()) {
    std::cerr << scenario_path << ": error: the report of scenario '" << report.scenario_name
              << "' would be written to '" << path << "', where '" << it->second
              << "' already wrote its report in this run; give the scenarios different names or "
                 "run them separately\n";
    return false;
  }
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) {
    std::cerr << path << ": error: cannot create the report directory '" << parent.string()
              << "': " << ec.message() << "\n";
    return false;
  }
  if (Status target = report::CheckReplaceableTarget(path); !target.ok()) {
    std::cerr << scenario_path << ": error: " << target.message() << "\n";
    return false;
  }
  (*claimed)[key] = scenario_path;
  *out = path;
  return true;
}

// Validates, runs and reports one scenario; returns its exit code and appends its report.
int RunOne(const RunOptions& options, const std::string& path, ClaimedPaths* claimed,
           std::vector<report::Report>* reports) {
  StatusOr<std::string> read = ReadInputFile(path, kMaxInputFileBytes);
  if (!read.ok()) {
    std::cerr << path << ": error: " << read.status().message() << "\n";
    return kExitInputError;
  }
  const std::string& text = *read;
  std::vector<Diagnostic> diagnostics;
  std::optional<Scenario> scenario = ParseScenario(text, path, &diagnostics);
  Plan plan;
  if (scenario) plan = BuildPlan(*scenario, &diagnostics);
  if (!diagnostics.empty()) {
    std::cerr << FormatDiagnostics(diagnostics);
    std::cerr << path << ": " << diagnostics.size()
              << " error(s); nothing was run (fix them, or check with `vmm-run validate`)\n";
    return kExitInputError;
  }

  EngineRequest request;
  ParseBackendKind(options.backend, &request.kind);  // CLI11 already checked the value
  request.device = options.device;
  request.granularity = plan.granularity;
  StatusOr<EngineChoice> choice = SelectEngine(request);
  if (!choice.ok()) {
    std::cerr << path << ": error: " << choice.status().message() << "\n";
    return choice.status().code() == Code::kUnavailable ? kExitUnavailable : kExitStepFailed;
  }
  Engine& engine = *choice->engine;
  const DeviceInfo& info = engine.info();
  if (info.granularity_min == 0 || plan.granularity % info.granularity_min != 0) {
    std::cerr << path << ": error: the scenario's granularity " << FormatBytes(plan.granularity)
              << " is not a multiple of the " << info.backend << " device's minimum granularity "
              << FormatBytes(info.granularity_min) << "; set `granularity:` to a multiple of it\n";
    return kExitInputError;
  }

  report::Report report;
  ProvenanceInput provenance{options.argv,     path,          text, scenario->name,
                             plan.granularity, choice->reason};
  FillProvenance(provenance, info, &report);
  std::string report_path;
  if (!PrepareReportPath(options, path, report, claimed, &report_path)) return kExitInputError;
  // From here on a report at report_path is this run's: an earlier one is removed now, so that an
  // interrupted or crashed run never leaves it looking current. The new one appears, complete,
  // when the run ends (WriteFileAtomically).
  ::unlink(report_path.c_str());

  if (!options.quiet) ConsoleLog::PrintHeader(report, std::cout);
  ConsoleLog log(plan, std::cout);
  RunOutcome outcome = RunPlan(plan, engine, options.quiet ? nullptr : &log);
  choice->engine.reset();  // release everything still alive before reporting
  report.steps = std::move(outcome.steps);
  report.summary = outcome.summary;

  Status written = report::WriteReport(report, report_path);
  if (!options.quiet) std::cout << "\n";
  ConsoleLog::PrintSummary(report, written.ok() ? report_path : "", std::cout);
  std::cout.flush();
  int code = report.summary.exit_code;
  if (!written.ok()) {
    std::cerr << report_path << ": error: cannot write the report: " << written.message() << "\n";
    code = WorseExit(code, kExitStepFailed);
  }
  reports->push_back(std::move(report));
  return code;
}

}  // namespace

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
  run->add_option("--device", options.device, "CUDA device ordinal")->capture_default_str();
  run->add_option(
      "--report", options.report,
      "Report path (one scenario only; default <report-dir>/<scenario>.<backend>.json)");
  run->add_option("--report-dir", options.report_dir, "Directory for default report paths")
      ->capture_default_str();
  run->add_option("--junit", options.junit, "Also write JUnit XML (one testcase per check)");
  run->add_flag("-q,--quiet", options.quiet, "Print only the summary line per scenario");
}

int RunRunCommand(const RunOptions& options) {
  if (!options.report.empty() && options.files.size() > 1) {
    std::cerr << "error: --report names one file but " << options.files.size()
              << " scenarios were given; use --report-dir instead\n";
    return kExitInputError;
  }
  if (!options.junit.empty()) {
    if (Status target = report::CheckReplaceableTarget(options.junit); !target.ok()) {
      std::cerr << "error: --junit: " << target.message() << "\n";
      return kExitInputError;
    }
  }
  InstallStopHandlers();
  int worst = kExitPass;
  std::vector<report::Report> reports;
  ClaimedPaths claimed;
  for (const std::string& file : options.files) {
    if (StopRequested()) break;  // the scenarios not started are not run (and not reported)
    int code = RunOne(options, file, &claimed, &reports);
    worst = WorseExit(worst, code);
    if (options.files.size() > 1 && !options.quiet) std::cout << "\n";
  }
  if (!options.junit.empty()) {
    Status s = report::WriteJUnit(reports, options.junit);
    if (!s.ok()) {
      std::cerr << options.junit << ": error: cannot write JUnit XML: " << s.message() << "\n";
      worst = WorseExit(worst, kExitStepFailed);
    }
  }
  if (StopRequested()) {
    std::cerr << "vmm-run: stopped by " << SignalName(StopSignal()) << "\n";
    worst = WorseExit(worst, ExitForSignal(StopSignal()));
  }
  return worst;
}

}  // namespace vmm
