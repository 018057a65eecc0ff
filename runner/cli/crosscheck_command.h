// `vmm-run crosscheck [FILE...] [--seed S] [--count N] [--reference cuda] [--model host] [--out
// DIR]` (docs/generator.md): runs generated scenarios (or FILEs) on two backends in this process,
// diffs each pair of reports as a cross-machine diff does, shrinks every disagreement and writes it
// to DIR/<name>/ (the shrunk scenario, the original, both reports, the differences). Prints one
// line per scenario (only disagreements with -q) and a summary: outcomes, step records by op,
// refusals by VMM rule, time per backend.
//
// Exit codes (runner/base/exit_code.h): 0 every scenario agreed; 1 a disagreement; 2 a usage
// error or a FILE that does not validate; 3 a backend is not available here; 70 a generated
// scenario that does not validate or an internal error (a vmm-run bug: the summary names it).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "runner/crosscheck/crosscheck.h"

namespace CLI {
class App;
}

namespace vmm {

struct CrosscheckCommandOptions {
  CrosscheckOptions run;
  std::string max_tensor = "1MiB";
  std::string reference = "cuda", model = "host";
  std::string out_dir = "vmm-crosscheck";
  bool no_shrink = false;
  bool quiet = false;
};

void SetupCrosscheckCommand(CLI::App& app, CrosscheckCommandOptions& options);
int RunCrosscheckCommand(const CrosscheckCommandOptions& options, std::ostream& out,
                         std::ostream& err);

}  // namespace vmm
