// `vmm-run generate [--seed S] [--count N] [-o DIR] [generator options]`: writes random, valid,
// readable scenarios (runner/generate, docs/generator.md). One scenario and no -o: printed to
// stdout. Exit 0, or 2 on a usage error or when a file cannot be written.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "runner/generate/generator.h"

namespace CLI {
class App;
}

namespace vmm {

struct GenerateOptions {
  gen::GenOptions gen;
  std::string max_tensor = "1MiB";  // --max-tensor, parsed into gen.max_tensor_bytes
  int count = 1;
  std::string out_dir;  // -o: write <dir>/<name>.yaml per scenario
};

// The generator's options, shared by `generate` and `crosscheck`.
void AddGeneratorOptions(CLI::App* command, gen::GenOptions& gen, std::string& max_tensor);
// Parses --max-tensor into gen.max_tensor_bytes; prints the error to `err` and returns false.
bool ResolveGeneratorOptions(const std::string& max_tensor, gen::GenOptions* gen,
                             std::ostream& err);

void SetupGenerateCommand(CLI::App& app, GenerateOptions& options);
int RunGenerateCommand(const GenerateOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vmm
