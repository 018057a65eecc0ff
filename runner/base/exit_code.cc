#include "runner/base/exit_code.h"

#include <csignal>
#include <cstring>

namespace vmm {
namespace {

struct Row {
  int code;
  int severity;
  const char* meaning;
  const char* detail;
};

// Severity order: signal > internal > input error > step failed > check failed > unavailable >
// skipped > pass.
constexpr Row kRows[] = {
    {kExitPass, 0, "pass", "every check passed (diff: no regression)"},
    {kExitSkipped, 1, "skipped", "the scenario requires something this device or backend lacks"},
    {kExitUnavailable, 2, "unavailable", "the requested backend is not available here"},
    {kExitCheckFailed, 3, "check failed", "a check failed (diff: a regression)"},
    {kExitStepFailed, 4, "step failed", "a step failed at run time; the report names it"},
    {kExitInputError, 5, "input error", "usage, scenario, config or report error; nothing ran"},
    {kExitInternal, 6, "internal error", "a bug in vmm-run; please report it"},
};
constexpr int kSignalSeverity = 7;

const Row* Find(int code) {
  for (const Row& r : kRows)
    if (r.code == code) return &r;
  return nullptr;
}

bool IsSignalExit(int code) { return code > kExitSignalBase && code < kExitSignalBase + 65; }

}  // namespace

int ExitSeverity(int code) {
  if (IsSignalExit(code)) return kSignalSeverity;
  const Row* row = Find(code);
  return row != nullptr ? row->severity : Find(kExitInternal)->severity;
}

int WorseExit(int a, int b) { return ExitSeverity(b) > ExitSeverity(a) ? b : a; }

std::string ExitMeaning(int code) {
  if (IsSignalExit(code)) {
    const int sig = code - kExitSignalBase;
    const char* abbrev = sigabbrev_np(sig);
    return "signal " + std::to_string(sig) + (abbrev ? std::string(" (SIG") + abbrev + ")" : "");
  }
  const Row* row = Find(code);
  return row != nullptr ? row->meaning : "unknown exit code " + std::to_string(code);
}

int ExitForStatus(const Status& status) {
  switch (status.code()) {
    case Code::kOk:
      return kExitPass;
    case Code::kInvalidInput:
      return kExitInputError;
    case Code::kUnavailable:
      return kExitUnavailable;
    case Code::kRuntime:
      return kExitStepFailed;
    case Code::kInternal:
      return kExitInternal;
  }
  return kExitInternal;
}

std::string ExitCodeTable() {
  std::string out;
  for (int code : {0, 1, 2, 3, 4, 5, 70}) {
    const Row* row = Find(code);
    char num[8];
    std::snprintf(num, sizeof num, "%3d", code);
    out += std::string("  ") + num + "  " + row->meaning + ": " + row->detail + "\n";
  }
  out += "  128+N  stopped by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP)\n";
  out +=
      "  several scenarios: the most severe wins: signal > internal > input error > step failed"
      " > check failed > unavailable > skipped > pass\n";
  return out;
}

}  // namespace vmm
