// ProgressLine: the live status line of a long `vmm-run run` on a terminal (step i of n, the next
// step, elapsed time, an estimate of the time left), kept below the step log.
//
// Wraps the console log: each finished step is forwarded to `inner` (whose line is printed above
// the status line), then the status line is redrawn in place ("\r\x1b[K" erases it first); after
// the last step it stays erased. Used only when
// the output is a terminal and the run is not quiet (run_command.cc decides); CI logs and `-q`
// get no status line. The clock is injected so tests can drive it.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "runner/exec/executor.h"
#include "runner/plan/plan.h"

namespace vmm {

class ProgressLine : public StepObserver {
 public:
  using Clock = std::function<double()>;  // microseconds since some fixed point

  ProgressLine(const Plan& plan, StepObserver* inner, std::ostream& out, Clock clock);
  void OnStep(const PlanStep& step, const report::StepRecord& record) override;

  // "step 3 of 1543 · next: snapshot R · 1.20 s elapsed · about 4.50 s left".
  std::string Text(size_t done) const;

 private:
  const Plan& plan_;
  StepObserver* inner_;
  std::ostream& out_;
  Clock clock_;
  double start_us_;
  size_t done_ = 0;
  bool drawn_ = false;
};

}  // namespace vmm
