#include "runner/cli/import_trace_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/base/input_file.h"
#include "runner/cli/scenario_output.h"
#include "runner/trace/call_trace.h"
#include "runner/trace/trace_scenario.h"

namespace vmm {

void SetupImportTraceCommand(CLI::App& app, ImportTraceOptions& options) {
  CLI::App* command = app.add_subcommand(
      "import-trace", "Write a call trace (from vmm-run record) as a scenario of its VMM calls");
  command->add_option("file", options.file, "The trace")->required();
  command->add_option("-o,--out", options.out, "Where to write the scenario (default: stdout)");
  command->add_option("--name", options.name, "The scenario's name (default: the file's stem)");
  command
      ->add_option("--pid", options.pid,
                   "The process whose calls to import (default: the only one with VMM calls)")
      ->check(CLI::NonNegativeNumber);
  command->add_flag("--no-data{false}", options.data,
                    "No stand-in memset / check_value for the program's kernels");
}

int RunImportTraceCommand(const ImportTraceOptions& options, std::ostream& out, std::ostream& err) {
  StatusOr<std::string> bytes = ReadInputFile(options.file, Limit::kTraceBytes);
  if (!bytes.ok()) {
    err << "error: " << bytes.status().message() << "\n";
    return kExitInputError;
  }
  StatusOr<trace::CallTrace> trace = trace::ReadCallTrace(*bytes, options.file);
  if (!trace.ok()) {
    err << "error: " << trace.status().message() << "\n";
    return kExitInputError;
  }
  trace::TraceImportOptions import;
  import.name =
      options.name.empty() ? std::filesystem::path(options.file).stem().string() : options.name;
  import.source = std::filesystem::path(options.file).filename().string();
  import.pid = options.pid;
  import.data = options.data;
  StatusOr<std::string> text = trace::TraceScenario(*trace, import);
  if (!text.ok()) {
    err << options.file << ": error: " << text.status().message() << "\n";
    return kExitInputError;
  }
  return EmitImportedScenario(*text, options.out, "trace", out, err);
}

}  // namespace vmm
