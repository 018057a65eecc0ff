// Observe, then pin: an isolate block with `expect: observe` records how its child ended without
// judging it; PinObservedOutcomes writes what a report recorded back into the scenario as the
// block's expectation (`vmm-run pin`), so that exploring an unknown driver behaviour does not mean
// guessing the answer first. Only the `observe` word is replaced (and an `at:` added after it when
// the outcome names the step that failed); everything else of the file, comments included, stays
// as written. A step with `expect_error: observe` is pinned the same way: the error its call
// returned replaces `observe`, and a call that succeeded loses the key (unless the step breaks a
// VMM rule, which needs it).
#pragma once

#include <string>

#include "runner/base/status.h"
#include "runner/report/report.h"

namespace vmm {

struct PinResult {
  std::string text;  // the scenario with the observed outcomes as expectations
  int pinned = 0;    // blocks and steps changed
};

// `scenario` is the text of the file the report was made from (its SHA-256 must be the report's
// scenario_sha256). Fails, naming the block's line, when a block's outcome is not an expectation a
// block can state (a failed check, an exit code, a timeout, an interruption), when its runs ended
// differently (a block written by a loop), or when the report has no record of an observing
// block; and when the scenario has no observing block at all.
StatusOr<PinResult> PinObservedOutcomes(const std::string& scenario, const report::Report& report);

}  // namespace vmm
