// `vmm-run validate FILE...`: parse and plan each scenario without touching any backend.
// Exit 0 when every file is valid, 2 otherwise; every error of every file is printed. With
// --valijson, a file valijson rejects is invalid too (its errors are printed, in its own words).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace vmm {

struct ValidateOptions {
  std::vector<std::string> files;
  bool quiet = false;
  // Also validate each file with valijson (a reference JSON Schema implementation) and report
  // whether it agrees. Off by default: valijson costs ~13 us per step over yaml-cpp.
  bool valijson = false;
  std::vector<std::string> set;            // --set NAME=VALUE: overrides of the scenarios' vars
  std::vector<std::string> include_roots;  // --include-root
};

void SetupValidateCommand(CLI::App& app, ValidateOptions& options);
// Writes results to `out` and errors to `err`; returns the exit code (runner/base/exit_code.h).
int RunValidateCommand(const ValidateOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vmm
