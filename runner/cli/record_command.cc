#include "runner/cli/record_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/base/input_file.h"
#include "runner/trace/call_trace.h"

namespace vmm {
namespace {

namespace fs = std::filesystem;
constexpr const char* kLibrary = "libvmmrun_recorder.so";

// The word as a shell would need it quoted, for the trace's header comment: printable ASCII only
// (a trace is; another byte, a newline included, is written '?').
std::string ShellWord(const std::string& word) {
  std::string printable;
  for (char c : word) {
    const unsigned char u = static_cast<unsigned char>(c);
    printable += u < 0x20 || u > 0x7e ? '?' : c;
  }
  if (!printable.empty() &&
      printable.find_first_of(" \t'\"\\$`*?[]{}()<>|&;#~") == std::string::npos)
    return printable;
  std::string quoted = "'";
  for (char c : printable) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Runs `command` with the recorder injected; its wait status, or -1 with errno when it could not
// start (fork failed). An exec failure is the child's exit code 127 (the shell's convention).
int RunRecorded(const std::vector<std::string>& command, const std::string& library,
                const std::string& trace, std::ostream& err) {
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    setenv("CUDA_INJECTION64_PATH", library.c_str(), 1);
    setenv("VMMRUN_TRACE", trace.c_str(), 1);
    execvp(argv[0], argv.data());
    const std::string text =
        "error: cannot run '" + command[0] + "': " + std::strerror(errno) + " (is it on PATH?)\n";
    (void)!write(STDERR_FILENO, text.data(), text.size());
    _exit(127);
  }
  (void)err;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

std::string Summary(const trace::CallTrace& t) {
  std::map<trace::CallFamily, size_t> by_family;
  std::map<uint64_t, bool> pids;
  for (const trace::TraceRecord& r : t.records) {
    ++by_family[r.info().family];
    pids[r.pid] = true;
  }
  auto n = [&](trace::CallFamily f) { return std::to_string(by_family[f]); };
  return std::to_string(t.records.size()) + " calls (" + n(trace::CallFamily::kVmm) + " VMM, " +
         n(trace::CallFamily::kQuery) + " queries, " + n(trace::CallFamily::kGraph) + " graph, " +
         n(trace::CallFamily::kOrder) + " synchronisation, " + n(trace::CallFamily::kLaunch) +
         " launches given reserved memory) from " + std::to_string(pids.size()) + " process" +
         (pids.size() == 1 ? "" : "es");
}

}  // namespace

std::vector<std::string> RecorderCandidates(const std::string& explicit_path) {
  if (!explicit_path.empty()) return {explicit_path};
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("VMMRUN_RECORDER"); env != nullptr && *env != '\0')
    return {env};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path dir = exe.parent_path();
    candidates.push_back((dir / kLibrary).string());  // the build directory
    for (const char* lib : {"lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu"})
      candidates.push_back((dir.parent_path() / lib / "vmm-run" / kLibrary).string());
  }
  return candidates;
}

void SetupRecordCommand(CLI::App& app, RecordOptions& options) {
  CLI::App* command = app.add_subcommand(
      "record", "Run a program with its VMM and graph calls recorded to a call trace");
  command->add_option("-o,--out", options.out, "The trace to write (default: vmm-run.trace)");
  command->add_option("--recorder", options.recorder,
                      "The recorder library (default: $VMMRUN_RECORDER, else the one installed "
                      "with vmm-run)");
  command->add_option("command", options.command, "The program and its arguments, after --")
      ->required();
}

int RunRecordCommand(const RecordOptions& options, std::ostream& out, std::ostream& err) {
  (void)out;
  std::string library;
  const std::vector<std::string> candidates = RecorderCandidates(options.recorder);
  for (const std::string& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) {
      library = fs::absolute(c, ec).string();
      break;
    }
  }
  if (library.empty()) {
    err << "error: no recorder library: looked for";
    for (const std::string& c : candidates) err << " '" << c << "'";
    err << "; it is built with vmm-run where the CUDA toolkit has CUPTI (" << kLibrary
        << "), or pass --recorder PATH\n";
    return kExitInputError;
  }
  std::error_code ec;
  const std::string trace_path = fs::absolute(options.out, ec).string();
  std::string command_text;
  for (const std::string& w : options.command)
    command_text += (command_text.empty() ? "" : " ") + ShellWord(w);
  {
    std::ofstream header(trace_path, std::ios::trunc);
    header << "# vmm-trace 1\n# recorded by vmm-run record: " << command_text << "\n";
    if (!header.flush()) {
      err << "error: " << options.out << ": cannot write the trace: " << std::strerror(errno)
          << "\n";
      return kExitInputError;
    }
  }
  const int status = RunRecorded(options.command, library, trace_path, err);
  if (status < 0) {
    err << "error: cannot start '" << options.command[0] << "': " << std::strerror(errno) << "\n";
    return kExitInputError;
  }
  const int code = WIFEXITED(status)     ? WEXITSTATUS(status)
                   : WIFSIGNALED(status) ? ExitForSignal(WTERMSIG(status))
                                         : kExitInternal;
  StatusOr<std::string> text = ReadInputFile(trace_path, Limit::kTraceBytes);
  if (!text.ok()) {
    err << "error: " << text.status().message() << "\n";
    return kExitInternal;
  }
  StatusOr<trace::CallTrace> trace = trace::ReadCallTrace(*text, options.out);
  if (!trace.ok()) {
    err << "internal error: the recorded trace does not read back (please report it): "
        << trace.status().message() << "\n";
    return kExitInternal;
  }
  err << "recorded " << Summary(*trace) << " to " << options.out << "; the program "
      << (WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                              : "exited with " + std::to_string(code))
      << "\n";
  if (trace->records.empty())
    err << "note: nothing was recorded: the program made none of the calls a trace holds, or "
           "never initialised CUDA (is a GPU driver present?)\n";
  return code;
}

}  // namespace vmm
