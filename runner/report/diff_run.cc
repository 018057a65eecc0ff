#include "runner/report/diff_run.h"

#include <algorithm>

namespace vmm::report {

int RunDiff(const DiffRequest& request, std::string* out, std::string* err) {
  StatusOr<DiffResult> result = DiffPaths(request.base, request.now, request.format.config);
  if (!result.ok()) {
    // One "error: " per line: a malformed report lists every problem on its own line.
    const std::string& message = result.status().message();
    for (size_t start = 0; start < message.size();) {
      const size_t end = std::min(message.find('\n', start), message.size());
      *err += "error: " + message.substr(start, end - start) + "\n";
      start = end + 1;
    }
    return result.status().code() == Code::kInvalidInput ? kDiffBadInput : kDiffInternal;
  }
  DiffFormatOptions format = request.format;
  format.base_path = request.base;
  format.new_path = request.now;
  switch (request.output) {
    case DiffOutput::kTable:
      *out = FormatDiffTable(*result, format);
      break;
    case DiffOutput::kMarkdown:
      *out = FormatDiffMarkdown(*result, format);
      break;
    case DiffOutput::kJson:
      *out = DiffToJson(*result, format);
      break;
  }
  if (result->duplicates > 0 && !format.config.allow_duplicates) {
    *err += "error: " + std::to_string(result->duplicates) +
            " scenario(s) have duplicate reports (same scenario and backend in one directory; "
            "see the ambiguous rows): keep one report per scenario, or pass --allow-duplicates\n";
    return kDiffFailed;
  }
  return DiffFails(*result, format.fail_on) ? kDiffFailed : kDiffClean;
}

}  // namespace vmm::report
