// Reduce (`vmm-run reduce`, docs/generator.md): cuts a failing scenario, or one whose isolate
// block sees the fault it expects, down to a small one that ends the same way, on one backend. The
// outcome kept is OutcomeSignature's: the run's exit code and its first failed step's op with what
// failed there (a check's expectation and result, or the CUDA error its message names). Mismatch
// counts, timings and addresses are not part of it, so a smaller scenario with fewer bad elements
// still counts. The shrinker (shrinker.h) proposes the candidates; each is run in this process
// (isolate blocks in children), from its text alone.
#pragma once

#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/crosscheck/shrinker.h"
#include "runner/engine/select/engine_select.h"
#include "runner/report/report.h"

namespace vmm {

// "exit 1 at check_value: expected equal, got different", "exit 4 at map:
// CUDA_ERROR_INVALID_VALUE", "exit 4 at isolate: expected fault, got exit 0"; for a run that
// passed, the faults its isolate blocks expected and saw ("exit 0; isolate 'run':
// CUDA_ERROR_ILLEGAL_ADDRESS at the fault surfaces"); "" when it passed with none, or was skipped.
// A failed threads group is named by the failed step of its first thread (in the order written)
// that failed.
std::string OutcomeSignature(const report::Report& report);

struct ReduceOptions {
  BackendKind backend = BackendKind::kAuto;
  int device = 0;
  int host_devices = 2;
  int budget = 400;  // candidates the shrinker may run
  // Ops a candidate must still have a step of (anywhere, nested ones included), besides the
  // outcome: `unmap` keeps a race's unmap where a smaller scenario would fault without it.
  std::vector<std::string> keep_ops;
  // Pre-screen on the twin: when the run is on another backend (the GPU) and the twin ends the
  // scenario with the same outcome, each candidate runs on the twin first and only one that keeps
  // the outcome there runs on the GPU (a candidate the twin ends differently is dropped unrun).
  bool prescreen = true;
  BackendKind prescreen_backend = BackendKind::kHost;
  std::string child_exe = "/proc/self/exe";
};

struct ReduceResult {
  std::string backend;  // the backend the runs used ("host", "cuda")
  std::string outcome;  // OutcomeSignature of the scenario, kept by every reduction
  std::string text;     // the reduced scenario
  ShrinkStats stats;
  // The pre-screen: what was decided ("" when not asked for or when the run is on the twin) and,
  // when it ran, how many candidates the twin dropped and how many then ran on the backend.
  std::string prescreen;
  int screened_out = 0, confirmed = 0;
};

// Reduces `text` (a flat scenario: loops and includes expanded, as `vmm-run expand` writes it),
// read as `path` in messages. Fails with Code::kInvalidInput when the scenario does not validate
// or does not fail (there is no outcome to keep), and with the backend's error when it cannot run.
StatusOr<ReduceResult> Reduce(const std::string& text, const std::string& path,
                              const ReduceOptions& options);

}  // namespace vmm
