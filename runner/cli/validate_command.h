// `vmm-run validate FILE...`: parse and plan each scenario without touching any backend.
// Exit 0 when every file is valid, 2 otherwise; every error of every file is printed.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace vmm {

struct ValidateOptions {
  std::vector<std::string> files;
  bool quiet = false;
};

void SetupValidateCommand(CLI::App& app, ValidateOptions& options);
int RunValidateCommand(const ValidateOptions& options);

}  // namespace vmm
