// `vmm-run timeline REPORT [-o FILE] [--svg]`: draws the run's address-space timeline (a lane per
// reservation, mapped blocks coloured by access over the steps, reads/writes/check marks; see
// runner/timeline/) as one self-contained HTML page (default) or a bare SVG. Without -o the page
// goes to <REPORT without .json>.timeline.html (or .svg). Exit 0 when written; 2 for an
// unreadable or malformed report, one written before report format 1.1, or an unwritable output.
#pragma once

#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace vmm {

struct TimelineOptions {
  std::string report;  // REPORT (a vmm-run JSON report)
  std::string output;  // -o FILE
  bool svg = false;    // --svg: a bare SVG instead of an HTML page
};

void SetupTimelineCommand(CLI::App& app, TimelineOptions& options);
int RunTimelineCommand(const TimelineOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vmm
