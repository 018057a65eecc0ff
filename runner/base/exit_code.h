// The exit codes of vmm-run: one table for every subcommand, the README, docs and --help.
//
//   0   pass            every check passed (diff: no regression)
//   1   check failed    a check failed (diff: a regression)
//   2   input error     usage, scenario, config or report error: nothing ran
//   3   unavailable     the requested backend is not available on this machine
//   4   step failed     a step failed at run time; the report names it, every resource released
//   5   skipped         the scenario `requires` something this device or backend lacks
//   70  internal error  a bug in vmm-run (EX_SOFTWARE)
//   128+N               stopped by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP)
//
// With several scenarios in one run the exit code is the most severe of theirs, in this order:
//   signal > internal > input error > step failed > check failed > unavailable > skipped > pass
// (a run that was stopped says so first; an unrunnable file outranks a run that went wrong; a
// scenario that could not run on this machine says less than one that ran and failed).
#pragma once

#include <string>

#include "runner/base/status.h"

namespace vmm {

enum ExitCode : int {
  kExitPass = 0,
  kExitCheckFailed = 1,
  kExitInputError = 2,
  kExitUnavailable = 3,
  kExitStepFailed = 4,
  kExitSkipped = 5,
  kExitInternal = 70,
  kExitSignalBase = 128,  // + the signal number
};

// The exit code for being stopped by `signal_number`.
inline int ExitForSignal(int signal_number) { return kExitSignalBase + signal_number; }

// How severe `code` is (higher wins when runs are combined); unknown codes rank as internal.
int ExitSeverity(int code);
// The more severe of `a` and `b` by ExitSeverity (the rule above).
int WorseExit(int a, int b);
// "pass", "check failed", "input error", ..., "signal 2 (SIGINT)".
std::string ExitMeaning(int code);
// The exit code for a non-ok Status from the core: kInvalidInput 2, kUnavailable 3, kRuntime 4,
// kInternal 70.
int ExitForStatus(const Status& status);
// The table above as text, for --help and docs ("  0  pass: every check passed\n...").
std::string ExitCodeTable();

}  // namespace vmm
