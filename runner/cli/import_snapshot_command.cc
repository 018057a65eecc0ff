#include "runner/cli/import_snapshot_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/base/input_file.h"
#include "runner/cli/scenario_output.h"
#include "runner/trace/torch_snapshot.h"

namespace vmm {

void SetupImportSnapshotCommand(CLI::App& app, ImportSnapshotOptions& options) {
  CLI::App* command = app.add_subcommand("import-snapshot",
                                         "Write a PyTorch allocator snapshot (_dump_snapshot's "
                                         "pickle) as a scenario of its VMM calls");
  command->add_option("file", options.file, "The snapshot (a .pickle file)")->required();
  command->add_option("-o,--out", options.out, "Where to write the scenario (default: stdout)");
  command->add_option("--name", options.name, "The scenario's name (default: the file's stem)");
  command
      ->add_option("--device", options.device,
                   "The device whose trace to import (default: the only one with segment "
                   "events)")
      ->check(CLI::Range(0, 1023));
  command->add_flag("--no-data{false}", options.data,
                    "No stand-in memset / check_value of the program's allocations");
}

int RunImportSnapshotCommand(const ImportSnapshotOptions& options, std::ostream& out,
                             std::ostream& err) {
  StatusOr<std::string> bytes = ReadInputFile(options.file, Limit::kSnapshotBytes);
  if (!bytes.ok()) {
    err << "error: " << bytes.status().message() << "\n";
    return kExitInputError;
  }
  auto fail = [&](const Status& s) {
    err << options.file << ": error: " << s.message() << "\n";
    return kExitInputError;
  };
  StatusOr<trace::PickleDocument> pickle = trace::ReadPickle(*bytes);
  if (!pickle.ok()) return fail(pickle.status());
  StatusOr<trace::TorchSnapshot> snapshot = trace::ReadTorchSnapshot(pickle->root());
  if (!snapshot.ok()) return fail(snapshot.status());
  trace::SnapshotImportOptions import;
  import.name =
      options.name.empty() ? std::filesystem::path(options.file).stem().string() : options.name;
  import.source = std::filesystem::path(options.file).filename().string();
  import.device = options.device;
  import.data = options.data;
  StatusOr<std::string> text = trace::SnapshotScenario(*snapshot, import);
  if (!text.ok()) return fail(text.status());
  return EmitImportedScenario(*text, options.out, "snapshot", out, err);
}

}  // namespace vmm
