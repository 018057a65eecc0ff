#include "runner/cli/progress_line.h"

#include "runner/cli/console_log.h"

namespace vmm {

ProgressLine::ProgressLine(const Plan& plan, StepObserver* inner, std::ostream& out, Clock clock)
    : plan_(plan), inner_(inner), out_(out), clock_(std::move(clock)), start_us_(clock_()) {}

std::string ProgressLine::Text(size_t done) const {
  const size_t total = plan_.steps.size();
  const double elapsed = clock_() - start_us_;
  std::string text = "step " + std::to_string(done) + " of " + std::to_string(total);
  if (done < total) text += " · next: " + plan_.steps[done].label;
  text += " · " + FormatMicros(elapsed) + " elapsed";
  if (done > 0 && done < total)
    text += " · about " +
            FormatMicros(elapsed / static_cast<double>(done) * static_cast<double>(total - done)) +
            " left";
  return text;
}

void ProgressLine::OnStep(const PlanStep& step, const report::StepRecord& record) {
  // Capture bodies report their inner steps too; only top-level steps count.
  const bool top_level = static_cast<size_t>(step.index) < plan_.steps.size() &&
                         &plan_.steps[static_cast<size_t>(step.index)] == &step;
  if (drawn_) out_ << "\r\x1b[K";  // the step's own line goes where the status line was
  drawn_ = false;
  if (inner_ != nullptr) inner_->OnStep(step, record);
  if (top_level) ++done_;
  if (done_ >= plan_.steps.size()) {
    out_.flush();
    return;
  }
  out_ << Text(done_);
  out_.flush();
  drawn_ = true;
}

}  // namespace vmm
