#include "runner/cli/console_log.h"

#include <cstdio>

#include "runner/base/format.h"
#include "runner/base/stop_signal.h"
#include "runner/exec/executor.h"

namespace vmm {
namespace {

using report::StepRecord;

std::string Timing(const StepRecord& record) {
  std::string t = FormatMicros(record.wall_us);
  if (record.gpu_us) t += " (device " + FormatMicros(*record.gpu_us) + ")";
  if (record.wall_stats) {
    const report::TimingStats& s = record.gpu_stats ? *record.gpu_stats : *record.wall_stats;
    t = std::string(record.gpu_stats ? "device " : "") + "median " + FormatMicros(s.median_us) +
        ", p99 " + FormatMicros(s.p99_us) + " (n=" + std::to_string(s.count) + ")";
  }
  return t;
}

}  // namespace

std::string FormatMicros(double us) {
  char buf[32];
  if (us < 1000)
    std::snprintf(buf, sizeof buf, "%.1f µs", us);
  else if (us < 1e6)
    std::snprintf(buf, sizeof buf, "%.2f ms", us / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", us / 1e6);
  return buf;
}

void ConsoleLog::OnStep(const PlanStep& step, const StepRecord& record) {
  PrintStep(plan_, step, record, "");
  if (step.op == Op::kThreads) {  // each thread's steps under it, the thread named on each line
    for (size_t t = 0; t < step.body.size() && t < record.body.size(); ++t) {
      const PlanStep& thread = step.body[t];
      const StepRecord& ran = record.body[t];
      std::string indent = "    │ " + thread.label;
      size_t width = 0;
      for (unsigned char ch : thread.label) width += (ch & 0xC0) != 0x80;
      if (width < 10) indent.append(10 - width, ' ');
      for (size_t i = 0; i < thread.body.size() && i < ran.body.size(); ++i)
        PrintStep(plan_, thread.body[i], ran.body[i], (indent + " ").c_str());
    }
    return;
  }
  if (step.op == Op::kTogether) {  // each block under the group, its child's steps under it
    for (size_t b = 0; b < step.body.size() && b < record.body.size(); ++b) {
      PrintStep(plan_, step.body[b], record.body[b], "    │ ");
      PrintChildSteps(step.body[b], record.body[b], "    │     │ ");
    }
    return;
  }
  PrintChildSteps(step, record, "    │ ");
}

void ConsoleLog::PrintChildSteps(const PlanStep& block, const StepRecord& record,
                                 const char* indent) {
  if (block.block == nullptr) return;
  // An isolate block: the child's steps under it, as the child reported them.
  const std::vector<PlanStep>& inner = block.block->plan.steps;
  for (const StepRecord& r : record.body) {
    if (r.index >= 0 && static_cast<size_t>(r.index) < inner.size())
      PrintStep(block.block->plan, inner[r.index], r, indent);
  }
}

void ConsoleLog::PrintStep(const Plan& plan, const PlanStep& step, const StepRecord& record,
                           const char* indent) {
  char head[16];
  std::snprintf(head, sizeof head, "%4d  ", step.index);
  std::string label = step.label;
  // Pad by code points so names with '·' still line up.
  size_t width = 0;
  for (unsigned char ch : label) width += (ch & 0xC0) != 0x80;
  if (width < 30) label.append(30 - width, ' ');
  out_ << indent << head << label << "  ";
  if (record.status == report::StepStatus::kSkipped) {
    out_ << "skipped\n";
    return;
  }
  // A failed step without a check says why: its error, or (a together group's, which fails by its
  // blocks' outcomes) what its description says.
  if (record.status == report::StepStatus::kFailed && record.check == std::nullopt) {
    out_ << "FAILED: "
         << (record.error.empty() ? DescribeStepOutcome(plan, step, record) : record.error) << "\n";
    return;
  }
  out_ << DescribeStepOutcome(plan, step, record) << "  [" << Timing(record) << "]\n";
  if (record.check) {
    for (const report::Mismatch& m : record.check->mismatches) {
      out_ << indent << "        element " << m.index << ": want " << m.want << ", got " << m.got
           << "\n";
    }
  }
  if (record.child && record.child->fault_line)
    out_ << indent << "        fault: " << *record.child->fault_line << "\n";
}

void ConsoleLog::PrintHeader(const report::Report& r, std::ostream& out) {
  const report::DeviceRecord& d = r.device;
  out << "vmm-run " << r.tool_version << " · scenario '" << r.scenario_name << "' ("
      << r.scenario_path << ")\n";
  out << "backend: " << r.backend << " (" << r.backend_reason << ")\n";
  out << "device:  " << d.name;
  if (!d.compute_capability.empty()) out << " · compute capability " << d.compute_capability;
  if (!d.driver_version.empty())
    out << " · " << (r.backend == "cuda" ? "driver " : "kernel ") << d.driver_version;
  out << "\n";
  out << "vmm:     supported: " << (d.vmm_supported ? "YES" : "NO") << " · granularity min "
      << FormatBytes(d.granularity_min) << ", recommended "
      << FormatBytes(d.granularity_recommended) << " · scenario granularity "
      << FormatBytes(r.granularity) << "\n\n";
}

void ConsoleLog::PrintSummary(const report::Report& r, const std::string& report_path,
                              std::ostream& out) {
  const report::Summary& s = r.summary;
  if (s.result == "skipped") {
    out << "result: SKIPPED · " << r.scenario_name << " · " << s.skip_reason << " (nothing ran)\n";
    if (!report_path.empty()) out << "report: " << report_path << "\n";
    return;
  }
  std::string verdict = s.result == "pass"          ? "PASS"
                        : s.result == "fail"        ? "FAIL"
                        : s.result == "interrupted" ? "INTERRUPTED"
                                                    : "ERROR";
  out << "result: " << verdict << " · " << r.scenario_name << " · " << s.steps << " steps (" << s.ok
      << " ok, " << s.failed << " failed, " << s.skipped << " skipped) · checks " << s.checks_passed
      << " passed, " << s.checks_failed << " failed · " << FormatMicros(s.duration_ms * 1000);
  if (s.peak_rss_bytes != 0) {
    char rss[32];
    std::snprintf(rss, sizeof rss, "%.1f MiB", static_cast<double>(s.peak_rss_bytes) / (1 << 20));
    out << " · peak RSS " << rss;
  }
  out << "\n";
  if (s.failed_step >= 0)
    out << "step " << s.failed_step << " failed at run time; every resource was released\n";
  if (s.interrupted) {
    out << "stopped by " << SignalName(s.signal) << " before step " << s.stopped_at_step
        << "; the rest was skipped and every resource was released\n";
  }
  if (!report_path.empty()) out << "report: " << report_path << "\n";
}

}  // namespace vmm
