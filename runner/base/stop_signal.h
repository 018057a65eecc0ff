// Stop requests from SIGINT, SIGTERM and SIGHUP, for `vmm-run run` (docs/limits-and-safety.md).
//
// Contract:
//   - InstallStopHandlers() installs one handler for the three signals (SA_RESTART, so interrupted
//     system calls resume). The first signal only records itself: StopRequested() turns true and
//     StopSignal() names it; the executor polls StopRequested() at step boundaries, stops there,
//     the engine is destroyed normally (releasing everything) and the report says "interrupted".
//   - A second signal (of any of the three) exits at once with _exit(128 + N): it first unlinks the
//     file named by SetCleanupPath, if any (the report writer's temp file), so no temp file
//     survives. The handler is async-signal-safe: it touches only lock-free atomics, unlink and
//     _exit.
//   - State is process-wide; the functions are safe to call from any thread. Nothing here reads a
//     signal that arrived before InstallStopHandlers (the default action applied then).
#pragma once

#include <string>

namespace vmm {

void InstallStopHandlers();

// True once a stop signal arrived (or RequestStop was called).
bool StopRequested();
// The first stop signal's number (SIGINT 2, SIGTERM 15, SIGHUP 1), or 0 when none arrived.
int StopSignal();
// "SIGINT", "SIGTERM", "SIGHUP", else "signal N".
std::string SignalName(int signal_number);

// What the handler does for the first signal, callable from tests and the fuzz-free code paths.
void RequestStop(int signal_number);
// Forgets a stop request (tests only; the CLI never clears one).
void ClearStopRequest();

// The file that a second signal removes before exiting ("" or ClearCleanupPath: none). Paths longer
// than 4095 bytes are not registered (the caller's own cleanup still runs on every normal path).
void SetCleanupPath(const std::string& path);
void ClearCleanupPath();

}  // namespace vmm
