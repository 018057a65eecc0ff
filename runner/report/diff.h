// `vmm-run diff`: compares reports (two files, or two directories paired by scenario name) and
// lists every difference as a row. What is compared, and how (see docs/diffing.md):
//   - exactly: step op and status, check verdicts, check expected/actual of update (result codes),
//     check_address (address relations, never raw addresses), check_kernel_params and
//     check_equal, data-check mismatch counts, data hashes (details keys ending in "_hash"), the
//     backend, the device name and the scenario granularity;
//   - with a noise threshold (DiffConfig): wall_us and gpu_us (their medians when repeated);
//   - reported for information only: driver version, scenario file hash.
// Steps match on a stable key: the step name when the scenario named it, else op + index (capture
// bodies: the parent's key + the inner key). Entries present on one side only become missing/
// added rows, never dropped; keys that occur twice on a side become ambiguous rows.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/report/diff_config.h"
#include "runner/report/report.h"

namespace vmm::report {

enum class RowKind {
  kRegression,   // a stable field changed for the worse, or a timing beyond its threshold
  kImprovement,  // a check now passes / a step now succeeds / faster beyond the threshold
  kMissing,      // in BASE only (scenario or step)
  kAdded,        // in NEW only
  kAmbiguous,    // a key occurs more than once on a side: not compared
  kInfo,         // worth knowing, never a failure (driver changed, --ignore-device'd mismatch)
  kSkipped,      // a side did not run (its scenario requires what that machine lacks): not compared
};
inline constexpr RowKind kAllRowKinds[] = {
    RowKind::kRegression, RowKind::kImprovement, RowKind::kMissing, RowKind::kAdded,
    RowKind::kAmbiguous,  RowKind::kInfo,        RowKind::kSkipped};
const char* RowKindName(RowKind kind);  // "regression", "improvement", "missing", ...
bool ParseRowKind(const std::string& name, RowKind* out);

struct DiffRow {
  RowKind kind = RowKind::kInfo;
  std::string scenario;             // scenario name
  std::string step;                 // step key as shown ("map A (first)", "map #8"); "" = scenario
  std::string field;                // what differs: "status", "verdict", "actual", "wall_us", ...
  std::optional<std::string> base;  // the value in BASE as text; nullopt when absent there
  std::optional<std::string> now;   // the value in NEW
  std::string reason;               // one sentence: why this row has its kind
};

struct DiffResult {
  std::vector<DiffRow> rows;  // in BASE order; added entries after the entries of their scenario
  int scenarios = 0;          // scenario pairs compared
  int steps = 0;              // step pairs compared (capture bodies included)
  // Scenarios with two or more reports of the same scenario name and backend on one side (a
  // directory diff; their rows are kAmbiguous). They fail the diff unless
  // DiffConfig::allow_duplicates (RunDiff).
  int duplicates = 0;
  int Count(RowKind kind) const;
};

// Compares two reports as one scenario pair and appends the rows to `out`.
void DiffReports(const Report& base, const Report& now, const DiffConfig& config, DiffResult* out);

// BASE and NEW are two report files, or two directories whose *.json files (not recursive) are
// reports paired by scenario name (several reports of one name on a side: an ambiguous row, and a
// duplicate when two share the backend too). Fails with kInvalidInput when a path cannot be read, a
// report is malformed or of another major schema version, or one path is a file and the other a
// directory.
StatusOr<DiffResult> DiffPaths(const std::string& base, const std::string& now,
                               const DiffConfig& config);

// The row kinds that fail a diff; by default regression and missing.
using FailOn = std::set<RowKind>;
inline FailOn DefaultFailOn() { return {RowKind::kRegression, RowKind::kMissing}; }
// "regression,missing,ambiguous" -> set. kInvalidInput on an unknown or empty name:
// "--fail-on: unknown kind 'regresion', did you mean 'regression'? (expected regression, ...)".
StatusOr<FailOn> ParseFailOn(const std::string& list);

// True when a row's kind is in `fail_on` (exit code 1).
bool DiffFails(const DiffResult& result, const FailOn& fail_on);

}  // namespace vmm::report
