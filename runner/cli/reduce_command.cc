#include "runner/cli/reduce_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/cli/expand_command.h"
#include "runner/cli/run_command.h"
#include "runner/crosscheck/reduce.h"
#include "runner/report/atomic_file.h"
#include "runner/scenario/parse.h"
#include "runner/vocab/op.h"

namespace vmm {

void SetupReduceCommand(CLI::App& app, ReduceCommandOptions& options) {
  CLI::App* r = app.add_subcommand(
      "reduce", "Cut a failing scenario down to a small one that fails the same way");
  r->add_option("file", options.file, "Scenario file (YAML) that fails")
      ->required()
      ->check(CLI::ExistingFile);
  r->add_option("-o,--out", options.out,
                "Where the reduced scenario is written (default: <stem>.reduced.yaml here)");
  r->add_option("--backend", options.backend, "Where every candidate runs")
      ->check(CLI::IsMember({"auto", "host", "cuda"}))
      ->capture_default_str();
  AddDeviceOptions(r, options.device, options.host_devices);
  r->add_option("--budget", options.budget, "Candidates run at most")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  r->add_option("--set", options.set, "Override a variable of 'vars:' (NAME=VALUE)");
  r->add_flag("--no-prescreen{false}", options.prescreen,
              "Run every candidate on --backend only (by default, on the GPU, a candidate runs on "
              "the twin first where the twin ends the scenario the same way)");
  r->add_option("--keep", options.keep_ops,
                "An op every candidate must still hold a step of (e.g. unmap: keep the race, "
                "not only the fault); repeatable");
  AddIncludeRootOption(r, options.include_roots);
}

int RunReduceCommand(const ReduceCommandOptions& options, std::ostream& out, std::ostream& err) {
  ExpandOptions expand;
  if (!ParseSetOptions(options.set, &expand, err)) return kExitInputError;
  expand.include_roots = options.include_roots;
  BackendKind backend = BackendKind::kAuto;
  ParseBackendKind(options.backend, &backend);
  const std::optional<std::string> text = ExpandToText(options.file, expand, err, backend);
  if (!text) return kExitInputError;
  const std::filesystem::path source(options.file);
  const std::string target =
      options.out.empty() ? source.stem().string() + ".reduced.yaml" : options.out;
  std::error_code ec;
  if (std::filesystem::equivalent(source, target, ec)) {
    err << "error: -o " << target << " is the scenario itself; write the reduction elsewhere\n";
    return kExitInputError;
  }
  ReduceOptions reduce;
  ParseBackendKind(options.backend, &reduce.backend);
  for (const std::string& op : options.keep_ops) {
    Op parsed;
    if (!ParseOpName(op, &parsed)) {
      err << "error: --keep " << op << ": not an op (docs/scenario-language.md lists them)\n";
      return kExitInputError;
    }
    reduce.keep_ops.push_back(op);
  }
  reduce.device = options.device;
  reduce.host_devices = options.host_devices;
  reduce.budget = options.budget;
  reduce.prescreen = options.prescreen;
  StatusOr<ReduceResult> result = Reduce(*text, options.file, reduce);
  if (!result.ok()) {
    const std::string& why = result.status().message();
    err << (why.rfind(options.file, 0) == 0 ? "" : "error: ") << why
        << (why.empty() || why.back() != '\n' ? "\n" : "");
    return ExitForStatus(result.status());
  }
  const ShrinkStats& s = result->stats;
  const std::string header = "# Reduced by vmm-run reduce from " + options.file + " (" +
                             std::to_string(s.steps_before) + " to " +
                             std::to_string(s.steps_after) + " steps, on " + result->backend +
                             "); it keeps: " + result->outcome + "\n";
  if (Status w = report::WriteFileAtomically(target, header + result->text); !w.ok()) {
    err << "error: " << w.message() << "\n";
    return kExitInputError;
  }
  out << "outcome kept: " << result->outcome << " (" << result->backend << ")\n"
      << "reduced " << options.file << " from " << s.steps_before << " to " << s.steps_after
      << " steps in " << s.candidates << " runs"
      << (s.budget_spent ? " (the budget ran out: --budget for more)" : "") << "\n";
  if (!result->prescreen.empty()) {
    out << "pre-screen: " << result->prescreen;
    if (result->screened_out + result->confirmed > 0)
      out << "; " << result->screened_out << " candidates dropped there, " << result->confirmed
          << " run on " << result->backend;
    out << "\n";
  }
  out << "wrote " << target << "\n";
  return kExitPass;
}

}  // namespace vmm
