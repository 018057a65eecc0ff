// The bounds vmm-run puts on its inputs and their work (docs/limits-and-safety.md), in one table.
// Each has a default generous enough for every committed scenario and can be changed for one
// process with `--limit NAME=VALUE` (any subcommand that reads scenarios or reports), up to a
// ceiling that keeps the bound's purpose (the stack, 64-bit time arithmetic, descriptors).
//
// Contract: SetLimit is called only while the command line is read, before any work starts (and
// by an isolate child before it rebuilds its plan, with the values its parent ran under); after
// that LimitValue is read-only and safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runner/base/status.h"

namespace vmm {

enum class Limit {
  kInputBytes,          // size of a scenario, fragment or diff-config file
  kReportBytes,         // size of a report read (diff, timeline) or written (run)
  kYamlValues,          // YAML values of one document after alias expansion
  kYamlDepth,           // nesting of YAML maps and lists
  kExpandedSteps,       // steps and loop iterations one scenario expands to
  kIncludeFiles,        // fragment files one scenario reads
  kIncludeDepth,        // how deep includes nest
  kExpressionDepth,     // parentheses and unary signs in one ${...}
  kSweepValidateSteps,  // points x steps `validate` checks in one sweep
  kTogetherBlocks,      // children one together group starts at once
  kBlockMinutes,        // an isolate block's timeout / kill_after
  kSnapshotBytes,       // size of an allocator snapshot read (import-snapshot)
  kSnapshotValues,      // values (and nesting) one snapshot's pickle builds
  kTraceBytes,          // size of a call trace read (import-trace, compare-traces)
  kTraceRecords,        // records one call trace holds
};
inline constexpr size_t kLimitCount = 15;

struct LimitInfo {
  Limit limit;
  const char* name;  // as written after --limit
  uint64_t default_value;
  uint64_t ceiling;  // the largest value --limit accepts
  bool bytes;        // the value is a size: shown as "16 MiB", accepted as "64MiB"
  const char* what;
};

// Every limit, in the order above.
const std::vector<LimitInfo>& AllLimits();
const LimitInfo& InfoOf(Limit limit);

// The value in force for this process.
uint64_t LimitValue(Limit limit);

// Applies "NAME=VALUE" (VALUE a count, or for a size also "64MiB"). Fails with kInvalidInput
// naming what is wrong: an unknown name (with the closest one), a value that is not a number, 0,
// or above the limit's ceiling.
Status SetLimit(std::string_view assignment);

// The --limit assignments in force that differ from the defaults ("include_files=1000"), to pass
// to a child process so that it reads the scenario as its parent did.
std::vector<std::string> ChangedLimits();

// Restores every default (tests).
void ResetLimits();

// " (raise it with --limit include_files=N; docs/limits-and-safety.md)": the end of a message
// about `limit` being passed.
std::string RaiseHint(Limit limit);

}  // namespace vmm
