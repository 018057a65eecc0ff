// The differential runner (`vmm-run crosscheck`, docs/generator.md): runs each scenario on two
// backends in this process — the reference (the GPU, the ground truth) and the model (the host
// twin) — and compares the two reports as a cross-machine diff does (report/diff.h with timings
// off and device facts ignored). Any row that is not information is a disagreement; each is
// shrunk (shrinker.h) while it stays the same disagreement, and saved with both reports.
//
// Scenarios come from the generator (seeds seed, seed + 1, ...) or from files. What a run counts:
// step records by op (bodies included), expect_error steps by VMM rule, outcomes by kind.
// Contract: one engine per backend at a time (the CUDA engine binds this thread's context); a
// scenario's isolate blocks run in child processes started from options.child_exe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "runner/crosscheck/shrinker.h"
#include "runner/engine/select/engine_select.h"
#include "runner/generate/generator.h"
#include "runner/report/diff.h"
#include "runner/report/report.h"

namespace vmm {

struct Disagreement {
  std::string name;       // the scenario's name
  std::string signature;  // what differs, as the shrinker keeps it ("status|ok|failed")
  std::string text;       // the scenario as run
  std::string shrunk;     // after shrinking (== text when not shrunk)
  ShrinkStats shrink;
  report::Report reference, model;    // the reports of the shrunk scenario
  std::vector<report::DiffRow> rows;  // their differences
};

struct CrosscheckOptions {
  gen::GenOptions gen;  // gen.seed is the first seed: scenario k has seed gen.seed + k
  int count = 100;
  std::vector<std::string> files;  // when not empty: run these scenario files instead
  BackendKind reference = BackendKind::kCuda;
  BackendKind model = BackendKind::kHost;
  int device = 0;
  int host_devices = 2;
  bool shrink = true;
  int shrink_budget = 400;  // candidates per disagreement
  // Disagreements of one signature shrunk at most this often; later ones are kept as found
  // (counted and saved, not shrunk again: one small reproducer per kind is what a person reads).
  int shrinks_per_signature = 1;
  // Stop starting scenarios after this many seconds (0: no limit); the summary says so.
  double time_limit_s = 0;
  std::string child_exe = "/proc/self/exe";
  // Called after each scenario with its name and what happened ("agree", "disagree", ...).
  std::function<void(const std::string& name, const std::string& outcome)> progress;
  // Called with each disagreement as soon as it is shrunk (a run can die later: a scenario that
  // leaves the GPU's context unusable ends the process's use of the device).
  std::function<void(const Disagreement&)> found;
};

struct CrosscheckSummary {
  int scenarios = 0;
  int agreed = 0;      // ran on both, no difference (skipped on both counts here too)
  int skipped = 0;     // of the agreed: both skipped (a requirement neither has)
  int invalid = 0;     // did not validate: a generator or validator bug
  int internal = 0;    // an exception escaped the pipeline: a vmm-run bug
  uint64_t steps = 0;  // step records of the reference's reports (bodies included)
  std::map<std::string, uint64_t> ops;      // those records by op
  std::map<std::string, uint64_t> rules;    // expect_error steps by the rule they break
  std::map<std::string, uint64_t> results;  // reference reports by summary.result
  double generate_s = 0, reference_s = 0, model_s = 0, shrink_s = 0;
  bool time_limit_hit = false;  // stopped before `count` scenarios (options.time_limit_s)
  // The reference backend could not be opened again after `context_lost_after` ran: that
  // scenario (or its last step) left the device unusable, a finding in itself (`failures` has it;
  // it is also the last disagreement, with its text). The run stops there.
  std::string context_lost_after;
  std::vector<Disagreement> disagreements;
  std::vector<std::pair<std::string, std::string>> failures;  // invalid/internal: name, why
};

// The rows of comparing `model` with `reference` that are disagreements (not kInfo/kSkipped).
std::vector<report::DiffRow> Disagreements(const report::Report& reference,
                                           const report::Report& model);

// Runs the cross-check. Fails (a Status) only when a backend cannot be had at all.
StatusOr<CrosscheckSummary> RunCrosscheck(const CrosscheckOptions& options);

}  // namespace vmm
