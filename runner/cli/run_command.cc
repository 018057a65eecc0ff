#include "runner/cli/run_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "runner/base/exit_code.h"
#include "runner/base/format.h"
#include "runner/cli/console_log.h"
#include "runner/cli/expand_command.h"
#include "runner/cli/progress_line.h"
#include "runner/cli/provenance.h"
#include "runner/cli/requirements.h"
#include "runner/cli/sweep_summary.h"
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

// <report_dir>/<scenario>.<backend>.json; a sweep point adds its values:
// <scenario>.<axis>=<value>,....<backend>.json.
std::string DefaultReportPath(const RunOptions& options, const report::Report& report,
                              const SweepPoint* point) {
  const std::string at = point != nullptr ? "." + SweepPointText(*point) : "";
  return (std::filesystem::path(options.report_dir) /
          (report.scenario_name + at + "." + report.backend + ".json"))
      .string();
}

// Validates, runs and reports one scenario; returns its exit code and appends its report.
int RunOne(const RunOptions& options, const ExpandOptions& expand, const std::string& path,
           const SweepPoint* point, std::vector<report::Report>* reports, std::ostream& out,
           std::ostream& err) {
  std::string text;
  if (!ReadText(path, &text)) {
    err << path << ": error: cannot read the file (" << std::strerror(errno) << ")\n";
    return kExitInputError;
  }
  std::vector<Diagnostic> diagnostics;
  std::optional<Scenario> scenario = ParseScenario(text, path, expand, &diagnostics);
  Plan plan;
  if (scenario) plan = BuildPlan(*scenario, &diagnostics);
  if (!diagnostics.empty()) {
    CollapseRepeats(&diagnostics);
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
  StepObserver* observer = options.quiet ? nullptr : &log;
  std::optional<ProgressLine> progress;  // a live status line, on a terminal only
  if (observer != nullptr && isatty(STDOUT_FILENO) == 1) {
    progress.emplace(plan, &log, out, [] {
      return std::chrono::duration<double, std::micro>(
                 std::chrono::steady_clock::now().time_since_epoch())
          .count();
    });
    observer = &*progress;
  }
  const std::string unmet = UnmetRequirement(scenario->requires_, info);
  RunOutcome outcome = unmet.empty() ? RunPlan(plan, engine, observer) : SkipPlan(plan, unmet);
  choice->engine.reset();  // release everything still alive before reporting
  report.steps = std::move(outcome.steps);
  report.vars = scenario->vars;
  if (point != nullptr)
    for (const VarOverride& v : *point) report.sweep_point.emplace_back(v.name, v.value);
  report.summary = outcome.summary;

  std::string report_path =
      options.report.empty() ? DefaultReportPath(options, report, point) : options.report;
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

// Runs `path` once, or once per point of its `sweep:` and then prints the sweep's table (and
// writes it as CSV beside the reports). Returns the worst exit code.
int RunFile(const RunOptions& options, const ExpandOptions& expand, const std::string& path,
            std::vector<report::Report>* reports, std::ostream& out, std::ostream& err) {
  std::string text;
  std::vector<Diagnostic> diagnostics;
  std::optional<std::vector<SweepPoint>> points;
  if (ReadText(path, &text)) points = ReadSweepPoints(text, path, expand.set, &diagnostics);
  if (!diagnostics.empty() || (points && points->size() > 1 && !options.report.empty())) {
    err << FormatDiagnostics(diagnostics);
    if (diagnostics.empty())
      err << path << ": error: --report names one file but the sweep has " << points->size()
          << " points; use --report-dir instead\n";
    return kExitInputError;
  }
  if (!points || points->empty()) return RunOne(options, expand, path, nullptr, reports, out, err);
  int worst = 0;
  const size_t first = reports->size();
  for (const SweepPoint& point : *points) {
    ExpandOptions at = expand;
    at.set.insert(at.set.end(), point.begin(), point.end());
    worst = WorseExit(worst, RunOne(options, at, path, &point, reports, out, err));
    if (!options.quiet) out << "\n";
  }
  std::vector<const report::Report*> ran;
  for (size_t i = first; i < reports->size(); ++i) ran.push_back(&(*reports)[i]);
  if (ran.empty()) return worst;
  const std::string csv = (std::filesystem::path(options.report_dir) /
                           (ran.front()->scenario_name + ".sweep." + ran.front()->backend + ".csv"))
                              .string();
  Status written = WriteSweepSummary(ran, csv, out);
  if (!written.ok()) {
    err << csv << ": error: cannot write the sweep table: " << written.message() << "\n";
    worst = WorseExit(worst, kExitStepFailed);
  }
  return worst;
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
  run->add_option("--set", options.set, "Override a variable of 'vars:' (NAME=VALUE)");
}

int RunRunCommand(const RunOptions& options, std::ostream& out, std::ostream& err) {
  if (!options.report.empty() && options.files.size() > 1) {
    err << "error: --report names one file but " << options.files.size()
        << " scenarios were given; use --report-dir instead\n";
    return kExitInputError;
  }
  ExpandOptions expand;
  if (!ParseSetOptions(options.set, &expand, err)) return kExitInputError;
  int worst = 0;
  std::vector<report::Report> reports;
  for (const std::string& file : options.files) {
    int code = RunFile(options, expand, file, &reports, out, err);
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
