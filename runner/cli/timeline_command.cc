#include "runner/cli/timeline_command.h"

#include <CLI/CLI.hpp>
#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/report/atomic_file.h"
#include "runner/report/report_io.h"
#include "runner/timeline/timeline.h"
#include "runner/timeline/timeline_render.h"

namespace vmm {

void SetupTimelineCommand(CLI::App& app, TimelineOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "timeline", "Draw a report's address-space timeline as a self-contained HTML page or SVG");
  sub->add_option("report", options.report, "A report written by `vmm-run run`")->required();
  sub->add_option("-o,--output", options.output,
                  "Output file (default: the report's path with .timeline.html or .timeline.svg)");
  sub->add_flag("--svg", options.svg, "Write a bare SVG instead of an HTML page");
}

int RunTimelineCommand(const TimelineOptions& options, std::ostream& out, std::ostream& err) {
  StatusOr<report::Report> report = report::ReadReport(options.report);
  if (!report.ok()) {
    err << "error: " << report.status().message() << "\n";
    return ExitForStatus(report.status());
  }
  StatusOr<timeline::Timeline> t = timeline::BuildTimeline(*report);
  if (!t.ok()) {
    err << options.report << ": error: " << t.status().message() << "\n";
    return ExitForStatus(t.status());
  }
  std::string path = options.output;
  if (path.empty()) {
    path = options.report;
    if (path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0)
      path.resize(path.size() - 5);
    path += options.svg ? ".timeline.svg" : ".timeline.html";
  }
  const std::string text = options.svg ? timeline::RenderSvg(*t) : timeline::RenderHtml(*t);
  Status written = report::WriteFileAtomically(path, text);
  if (!written.ok()) {
    err << path << ": error: " << written.message() << "\n";
    return kExitInputError;
  }
  out << "timeline: " << path << " (" << t->lanes.size() << " lanes, " << t->blocks.size()
      << " mappings, " << t->marks.size() << " marks, " << t->columns.size() << " steps)\n";
  return kExitPass;
}

}  // namespace vmm
