#include "runner/cli/compare_traces_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <ostream>

#include "runner/base/exit_code.h"
#include "runner/base/input_file.h"
#include "runner/trace/call_trace.h"
#include "runner/trace/trace_compare.h"

namespace vmm {
namespace {

StatusOr<trace::CallTrace> Read(const std::string& file) {
  StatusOr<std::string> bytes = ReadInputFile(file, Limit::kTraceBytes);
  if (!bytes.ok()) return bytes.status();
  return trace::ReadCallTrace(*bytes, file);
}

std::string Percent(size_t part, size_t whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", whole == 0 ? 100.0 : 100.0 * part / whole);
  return text;
}

}  // namespace

void SetupCompareTracesCommand(CLI::App& app, CompareTracesOptions& options) {
  CLI::App* command = app.add_subcommand(
      "compare-traces", "Compare the VMM call sequences of two call traces (vmm-run record)");
  command->add_option("a", options.a, "The first trace (e.g. the program's)")->required();
  command->add_option("b", options.b, "The second (e.g. its imported scenario's, re-recorded)")
      ->required();
  command->add_option("--pid-a", options.pid_a, "The process of A to compare")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--pid-b", options.pid_b, "The process of B to compare")
      ->check(CLI::NonNegativeNumber);
  command
      ->add_option("--min-match", options.min_match,
                   "Pass when at least this percent of A's VMM calls are matched in order "
                   "(default 100)")
      ->check(CLI::Range(0.0, 100.0));
}

int RunCompareTracesCommand(const CompareTracesOptions& options, std::ostream& out,
                            std::ostream& err) {
  StatusOr<trace::CallTrace> a = Read(options.a);
  StatusOr<trace::CallTrace> b = a.ok() ? Read(options.b) : StatusOr<trace::CallTrace>(a.status());
  if (!a.ok() || !b.ok()) {
    err << "error: " << (a.ok() ? b : a).status().message() << "\n";
    return kExitInputError;
  }
  StatusOr<uint64_t> pid_a = trace::VmmProcess(*a, options.pid_a);
  StatusOr<uint64_t> pid_b = trace::VmmProcess(*b, options.pid_b);
  if (!pid_a.ok() || !pid_b.ok()) {
    err << "error: " << (pid_a.ok() ? options.b : options.a) << ": "
        << (pid_a.ok() ? pid_b : pid_a).status().message() << "\n";
    return kExitInputError;
  }
  const trace::TraceComparison c = trace::CompareVmmCalls(*a, *pid_a, *b, *pid_b);
  out << "A " << options.a << " (process " << *pid_a << "): " << c.a_calls << " VMM calls\n"
      << "B " << options.b << " (process " << *pid_b << "): " << c.b_calls << " VMM calls\n"
      << "matched in order: " << (c.counted ? "" : "at most ") << c.matched << " ("
      << Percent(c.matched, c.a_calls) << " of A, " << Percent(c.matched, c.b_calls) << " of B)"
      << (c.counted ? ""
                    : "; more than " + std::to_string(trace::kMaxDifferences) +
                          " differences, not counted further")
      << "\n";
  if (!c.only_a.empty()) {
    out << "only in A (" << (c.a_calls - c.matched) << "):\n";
    for (const std::string& s : c.only_a) out << "  " << s << "\n";
  }
  if (!c.only_b.empty()) {
    out << "only in B (" << (c.b_calls - c.matched) << "):\n";
    for (const std::string& s : c.only_b) out << "  " << s << "\n";
  }
  const auto share = [](size_t part, size_t whole) {
    return whole == 0 ? 100.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  };
  // A is the reference: B (a scenario's run) may add calls of its own, listed above.
  const bool pass = c.counted && share(c.matched, c.a_calls) >= options.min_match;
  return pass ? kExitPass : kExitCheckFailed;
}

}  // namespace vmm
