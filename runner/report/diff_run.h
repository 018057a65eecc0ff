// The whole of `vmm-run diff` below the command line: compare, render, decide the exit code.
// runner/cli/diff_command.cc parses flags and the config file, then calls RunDiff.
#pragma once

#include <string>

#include "runner/base/exit_code.h"
#include "runner/report/diff.h"
#include "runner/report/diff_format.h"

namespace vmm::report {

enum class DiffOutput { kTable, kMarkdown, kJson };

struct DiffRequest {
  std::string base, now;  // BASE and NEW: two report files or two directories
  DiffOutput output = DiffOutput::kTable;
  DiffFormatOptions format;  // base_path/new_path are filled from base/now by RunDiff
};

// Exit codes of `vmm-run diff`, from the one table (runner/base/exit_code.h).
inline constexpr int kDiffClean = kExitPass;           // no difference of a --fail-on kind
inline constexpr int kDiffFailed = kExitCheckFailed;   // at least one
inline constexpr int kDiffBadInput = kExitInputError;  // usage error, unreadable/malformed report
inline constexpr int kDiffInternal = kExitInternal;    // a bug in vmm-run

// Runs the diff. The rendering goes to *out; on exit 2 or 3 *out is empty and *err holds the
// message ("error: r.json: /steps/3/status: expected one of ..."), newline-terminated. Duplicate
// reports (DiffResult::duplicates) exit 1 with a line on *err unless
// format.config.allow_duplicates.
int RunDiff(const DiffRequest& request, std::string* out, std::string* err);

}  // namespace vmm::report
