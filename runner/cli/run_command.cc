#include "runner/cli/run_command.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "runner/base/exit_code.h"
#include "runner/base/format.h"
#include "runner/cli/console_log.h"
#include "runner/cli/provenance.h"
#include "runner/engine/select/engine_select.h"
#include "runner/exec/executor.h"
#include "runner/plan/plan.h"
#include "runner/report/junit.h"
#include "runner/report/report_io.h"
#include "runner/scenario/parse.h"

namespace vmm {
namespace {

// Reads a whole file; false when it cannot be read.
bool ReadText(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  *out = text.str();
  return !in.bad();
}

std::string DefaultReportPath(const RunOptions& options, const report::Report& report) {
  return (std::filesystem::path(options.report_dir) /
          (report.scenario_name + "." + report.backend + ".json"))
      .string();
}

// Validates, runs and reports one scenario; returns its exit code and appends its report.
int RunOne(const RunOptions& options, const std::string& path, std::vector<report::Report>* reports,
           std::ostream& out, std::ostream& err) {
  std::string text;
  if (!ReadText(path, &text)) {
    err << path << ": error: cannot read the file (" << std::strerror(errno) << ")\n";
    return kExitInputError;
  }
  std::vector<Diagnostic> diagnostics;
  std::optional<Scenario> scenario = ParseScenario(text, path, &diagnostics);
  Plan plan;
  if (scenario) plan = BuildPlan(*scenario, &diagnostics);
  if (!diagnostics.empty()) {
    err << FormatDiagnostics(diagnostics);
    err << path << ": " << diagnostics.size()
        << " error(s); nothing was run (fix them, or check with `vmm-run validate`)\n";
    return kExitInputError;
  }

  EngineRequest request;
  ParseBackendKind(options.backend, &request.kind);  // CLI11 already checked the value
  request.device = options.device;
  request.granularity = plan.granularity;
  StatusOr<EngineChoice> choice = SelectEngine(request);
  if (!choice.ok()) {
    err << path << ": error: " << choice.status().message() << "\n";
    return ExitForStatus(choice.status());
  }
  Engine& engine = *choice->engine;
  const DeviceInfo& info = engine.info();

  report::Report report;
  ProvenanceInput provenance{options.argv,     path,          text, scenario->name,
                             plan.granularity, choice->reason};
  FillProvenance(provenance, info, &report);
  if (!options.quiet) ConsoleLog::PrintHeader(report, out);
  ConsoleLog log(plan, out);
  RunOutcome outcome = RunPlan(plan, engine, options.quiet ? nullptr : &log);
  choice->engine.reset();  // release everything still alive before reporting
  report.steps = std::move(outcome.steps);
  report.summary = outcome.summary;

  std::string report_path =
      options.report.empty() ? DefaultReportPath(options, report) : options.report;
  std::error_code ec;
  std::filesystem::path parent = std::filesystem::path(report_path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
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

int RunRunCommand(const RunOptions& options, std::ostream& out, std::ostream& err) {
  if (!options.report.empty() && options.files.size() > 1) {
    err << "error: --report names one file but " << options.files.size()
        << " scenarios were given; use --report-dir instead\n";
    return kExitInputError;
  }
  int worst = 0;
  std::vector<report::Report> reports;
  for (const std::string& file : options.files) {
    int code = RunOne(options, file, &reports, out, err);
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
  return worst;
}

}  // namespace vmm
