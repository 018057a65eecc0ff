// CompareVmmCalls: whether two call traces made the same VMM calls in the same order, for
// `vmm-run compare-traces` (re-recording a scenario imported from a trace must give back the
// program's call sequence). Each VMM-family call of the chosen process becomes a token that names
// reservations and handles by the order they were made (R0, h3) and addresses as offsets into
// their reservation, so two runs whose driver handed out different addresses compare equal; a
// call that failed keeps its result in the token. The match is the longest common subsequence
// of the two token lists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/trace/call_trace.h"

namespace vmm::trace {

// Past this many differences the comparison stops counting (its time grows with them).
inline constexpr size_t kMaxDifferences = 20000;

struct TraceComparison {
  size_t a_calls = 0, b_calls = 0;
  size_t matched = 0;  // calls in both, in the same order (the longest common subsequence)
  // false: more than kMaxDifferences differences, and `matched` is an upper bound.
  bool counted = true;
  // Calls of one side the other lacks, in order, as "line N: TOKEN" (the first 50 of each side,
  // from a greedy alignment that agrees with `matched` when the traces differ little).
  std::vector<std::string> only_a, only_b;
};

// The tokens of one process's VMM calls, in order (exposed for tests).
std::vector<std::string> VmmTokens(const CallTrace& trace, uint64_t pid,
                                   std::vector<int>* lines = nullptr);

TraceComparison CompareVmmCalls(const CallTrace& a, uint64_t pid_a, const CallTrace& b,
                                uint64_t pid_b);

// The only process of `trace` that made VMM calls, or an error naming the choice to make.
StatusOr<uint64_t> VmmProcess(const CallTrace& trace, int64_t pid);

}  // namespace vmm::trace
