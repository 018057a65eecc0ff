// `vmm-run compare-traces A B [--pid-a N] [--pid-b N] [--min-match PERCENT]`: whether two call
// traces made the same VMM calls in the same order (runner/trace/trace_compare.h), e.g. a program
// and the scenario imported from it, re-recorded. Prints the counts, the share of A's calls
// matched in order, and the calls each side lacks. A is the reference: exit 0 when at least
// --min-match percent of A's VMM calls (default 100) are matched in order (B may add calls of its
// own, such as a scenario's teardown); 1 otherwise; 2 for a bad trace or option.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace vmm {

struct CompareTracesOptions {
  std::string a, b;
  int64_t pid_a = -1, pid_b = -1;  // -1: the only process with VMM calls
  double min_match = 100.0;
};

void SetupCompareTracesCommand(CLI::App& app, CompareTracesOptions& options);
int RunCompareTracesCommand(const CompareTracesOptions& options, std::ostream& out,
                            std::ostream& err);

}  // namespace vmm
