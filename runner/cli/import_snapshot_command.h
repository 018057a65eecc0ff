// `vmm-run import-snapshot FILE [-o OUT] [--device N] [--name NAME] [--no-data]`: a PyTorch
// allocator snapshot (`torch.cuda.memory._dump_snapshot`'s pickle; docs/importing.md) written as
// a scenario of the same VMM calls, validated before it is written (an import that would not
// validate is a bug of the importer: exit 70). Without -o the scenario goes to stdout. Exit 0 when
// written, 2 for a bad file or option.
#pragma once

#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace vmm {

struct ImportSnapshotOptions {
  std::string file;
  std::string out;   // "": stdout
  std::string name;  // "": the file's stem
  int device = -1;   // -1: the only device with segment events
  bool data = true;  // stand-in memsets and checks of the program's allocations
};

void SetupImportSnapshotCommand(CLI::App& app, ImportSnapshotOptions& options);
int RunImportSnapshotCommand(const ImportSnapshotOptions& options, std::ostream& out,
                             std::ostream& err);

}  // namespace vmm
