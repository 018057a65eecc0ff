// `vmm-run import-trace TRACE [-o OUT] [--pid N] [--name NAME] [--no-data]`: a call trace (from
// `vmm-run record`; docs/recording.md) written as a scenario of the same VMM calls, validated
// before it is written (one that would not validate is the importer's bug: exit 70). Without -o the
// scenario goes to stdout. Exit 0 when written, 2 for a bad trace or option.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace vmm {

struct ImportTraceOptions {
  std::string file;
  std::string out;   // "": stdout
  std::string name;  // "": the file's stem
  int64_t pid = -1;  // -1: the only process with VMM calls
  bool data = true;  // stand-ins for the program's kernels
};

void SetupImportTraceCommand(CLI::App& app, ImportTraceOptions& options);
int RunImportTraceCommand(const ImportTraceOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vmm
