// `vmm-run reduce FILE [-o OUT] [--backend B] [--budget N] [--keep OP]... [--set NAME=VALUE]...`
// (docs/generator.md, "Reducing a failing scenario"): cuts a scenario that fails down to a small
// one that fails the same way on the same backend (runner/crosscheck/reduce.h), and writes it to
// OUT (default: <file's stem>.reduced.yaml in the current folder). Loops, variables and includes
// are expanded first. Prints the outcome kept and the reduction (steps before and after, nested
// ones included).
//
// Exit codes: 0 written; 2 a usage error, a scenario that does not validate or does not fail, or
// an OUT that cannot be written; 3 the backend is not available here.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace vmm {

struct ReduceCommandOptions {
  std::string file;
  std::string out;                         // -o
  std::string backend = "auto";            // --backend
  int device = 0;                          // --device
  int host_devices = 2;                    // --host-devices
  int budget = 400;                        // --budget: candidates run at most
  std::vector<std::string> set;            // --set NAME=VALUE
  std::vector<std::string> keep_ops;       // --keep OP: ops every candidate keeps a step of
  bool prescreen = true;                   // --no-prescreen: every candidate on --backend only
  std::vector<std::string> include_roots;  // --include-root
};

void SetupReduceCommand(CLI::App& app, ReduceCommandOptions& options);
int RunReduceCommand(const ReduceCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vmm
