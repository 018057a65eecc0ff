// `vmm-run diff BASE NEW`: compare reports (two files, or two directories paired by scenario name)
// and fail on regressions. The comparison lives in runner/report (diff.h, diff_run.h); this file
// parses flags, reads the --config file (runner/scenario) and decides on colour.
//
// Exit codes: 0 no difference of a --fail-on kind, 1 at least one, 2 usage error, unreadable or
// malformed report or config, 3 internal error. See docs/diffing.md.
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace vmm {

struct DiffOptions {
  std::string base, now;  // BASE and NEW
  bool json = false;      // --json: schemas/diff.schema.json document
  bool markdown = false;  // --markdown: job-summary table
  bool explain = false;   // --explain: each row's reason
  std::string fail_on = "regression,missing";
  std::string config;  // --config FILE (YAML, schemas/diff-config.schema.json)
  bool ignore_device = false;
  bool allow_duplicates = false;  // --allow-duplicates
};

void SetupDiffCommand(CLI::App& app, DiffOptions& options);
// Writes results to `out` and errors to `err`; returns the exit code (runner/base/exit_code.h).
int RunDiffCommand(const DiffOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vmm
