// `vmm-run record [-o TRACE] [--recorder LIB] -- COMMAND ARGS...`: runs an unmodified program with
// the recorder (runner/recorder) injected through CUDA_INJECTION64_PATH and writes its call trace
// (runner/trace/call_trace.h; docs/recording.md): every VMM call, graph call, synchronisation and
// launch given reserved memory, of the program and of the processes it starts. Prints what was
// recorded on stderr. Exits with the program's own exit code (128+N when a signal N ended it), 2
// when the command line is wrong or no recorder is found, 70 when the trace it wrote does not
// read back.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace vmm {

struct RecordOptions {
  std::vector<std::string> command;  // the program and its arguments
  std::string out = "vmm-run.trace";
  std::string recorder;  // "": VMMRUN_RECORDER, else beside the binary or in ../lib*/vmm-run/
};

void SetupRecordCommand(CLI::App& app, RecordOptions& options);
int RunRecordCommand(const RecordOptions& options, std::ostream& out, std::ostream& err);

// Where the recorder library is looked for, in order (for the message when none is found).
std::vector<std::string> RecorderCandidates(const std::string& explicit_path);

}  // namespace vmm
