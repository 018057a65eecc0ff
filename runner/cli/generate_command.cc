#include "runner/cli/generate_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/report/atomic_file.h"
#include "runner/scenario/size.h"

namespace vmm {

void AddGeneratorOptions(CLI::App* command, gen::GenOptions& gen, std::string& max_tensor) {
  command->add_option("--seed", gen.seed, "The first scenario's seed (scenario k: seed + k)")
      ->capture_default_str();
  command->add_option("--steps", gen.steps, "Top-level steps per scenario (about)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command
      ->add_option("--devices", gen.devices,
                   "Devices the scenarios use (2 adds device 1 and requires: {devices: 2})")
      ->check(CLI::Range(1, 2))
      ->capture_default_str();
  command
      ->add_option("--isolate-percent", gen.isolate_percent,
                   "Chance (%) that a scenario has an isolate block (a child process)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  command->add_option("--max-tensor", max_tensor, "Largest tensor (buffer or view), e.g. 4MiB")
      ->capture_default_str();
  command->add_flag("--no-graphs{false}", gen.graphs, "No captures, instantiates, replays");
  command->add_flag("--no-refusals{false}", gen.expect_errors,
                    "No calls under expect_error (the rule table's safe refusals)");
  command->add_flag("--no-host-memory{false}", gen.host_memory,
                    "No creates at location host or host_numa");
}

bool ResolveGeneratorOptions(const std::string& max_tensor, gen::GenOptions* gen,
                             std::ostream& err) {
  std::optional<uint64_t> bytes = ParseSize(max_tensor);
  if (!bytes || *bytes < 4096 || *bytes > (1ull << 30)) {
    err << "error: --max-tensor: expected a size from 4KiB to 1GiB such as 4MiB, got '"
        << max_tensor << "'\n";
    return false;
  }
  gen->max_tensor_bytes = *bytes;
  return true;
}

void SetupGenerateCommand(CLI::App& app, GenerateOptions& options) {
  CLI::App* generate = app.add_subcommand(
      "generate", "Write random, valid scenarios from a seed (docs/generator.md)");
  AddGeneratorOptions(generate, options.gen, options.max_tensor);
  generate->add_option("--count", options.count, "How many scenarios")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  generate->add_option("-o,--out", options.out_dir,
                       "Directory for <name>.yaml files (default: one scenario to stdout)");
}

int RunGenerateCommand(const GenerateOptions& options, std::ostream& out, std::ostream& err) {
  gen::GenOptions gen = options.gen;
  if (!ResolveGeneratorOptions(options.max_tensor, &gen, err)) return kExitInputError;
  if (options.out_dir.empty() && options.count != 1) {
    err << "error: --count " << options.count
        << " writes several scenarios: give a directory with -o\n";
    return kExitInputError;
  }
  if (!options.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.out_dir, ec);
    if (ec) {
      err << "error: cannot create '" << options.out_dir << "': " << ec.message() << "\n";
      return kExitInputError;
    }
  }
  for (int k = 0; k < options.count; ++k) {
    gen::GenOptions one = gen;
    one.seed = gen.seed + static_cast<uint64_t>(k);
    const gen::GeneratedScenario s = gen::Generate(one);
    if (options.out_dir.empty()) {
      out << s.text;
      continue;
    }
    const std::string path = (std::filesystem::path(options.out_dir) / (s.name + ".yaml")).string();
    if (Status written = report::WriteFileAtomically(path, s.text); !written.ok()) {
      err << path << ": error: " << written.message() << "\n";
      return kExitInputError;
    }
  }
  if (!options.out_dir.empty())
    out << "wrote " << options.count << " scenario(s) to " << options.out_dir << " (seeds "
        << gen.seed << ".." << gen.seed + static_cast<uint64_t>(options.count) - 1 << ")\n";
  return kExitPass;
}

}  // namespace vmm
