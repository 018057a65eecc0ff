#include "runner/cli/diff_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <ostream>

#include "runner/report/diff_config_parse.h"
#include "runner/report/diff_run.h"

namespace vmm {
namespace {

// Colour only for a terminal, and never when NO_COLOR is set to anything (https://no-color.org).
bool UseColor() {
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) && (no_color == nullptr || no_color[0] == '\0');
}

}  // namespace

void SetupDiffCommand(CLI::App& app, DiffOptions& options) {
  CLI::App* diff = app.add_subcommand(
      "diff", "Compare two reports (or two directories of reports) and fail on regressions");
  diff->add_option("base", options.base, "Baseline: a report file or a directory of reports")
      ->required();
  diff->add_option("new", options.now, "Reports to check, of the same kind as BASE")->required();
  CLI::Option* json = diff->add_flag("--json", options.json, "Print a JSON document");
  diff->add_flag("--markdown", options.markdown, "Print a Markdown job-summary table")
      ->excludes(json);
  diff->add_flag("--explain", options.explain, "Say why each row is what it is");
  diff->add_option("--fail-on", options.fail_on,
                   "Row kinds that fail (exit 1): regression, missing, added, ambiguous")
      ->capture_default_str();
  diff->add_option("--config", options.config, "Thresholds (YAML; see docs/diffing.md)");
  diff->add_flag("--ignore-device", options.ignore_device,
                 "Do not fail when backend or device differ");
  diff->add_flag("--allow-duplicates", options.allow_duplicates,
                 "Do not fail when a directory holds two reports of one scenario and backend");
}

int RunDiffCommand(const DiffOptions& options, std::ostream& out, std::ostream& err) {
  report::DiffRequest request;
  request.base = options.base;
  request.now = options.now;
  request.output = options.json       ? report::DiffOutput::kJson
                   : options.markdown ? report::DiffOutput::kMarkdown
                                      : report::DiffOutput::kTable;
  request.format.explain = options.explain;
  request.format.color = request.output == report::DiffOutput::kTable && UseColor();

  StatusOr<report::FailOn> fail_on = report::ParseFailOn(options.fail_on);
  if (!fail_on.ok()) {
    err << "error: " << fail_on.status().message() << "\n";
    return report::kDiffBadInput;
  }
  request.format.fail_on = *fail_on;

  if (!options.config.empty()) {
    std::vector<Diagnostic> diagnostics;
    std::optional<report::DiffConfig> config = LoadDiffConfigFile(options.config, &diagnostics);
    if (!config) {
      err << FormatDiagnostics(diagnostics);
      return report::kDiffBadInput;
    }
    request.format.config = *config;
  }
  if (options.ignore_device) request.format.config.ignore_device = true;
  request.format.config.allow_duplicates = options.allow_duplicates;

  std::string text, errors;
  const int code = report::RunDiff(request, &text, &errors);
  out << text << std::flush;
  err << errors;
  return code;
}

}  // namespace vmm
