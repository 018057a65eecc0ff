#include "runner/cli/console_log.h"

#include <cstdio>
#include <variant>

#include "runner/base/format.h"
#include "runner/base/stop_signal.h"

namespace vmm {
namespace {

using report::StepRecord;

// The value of detail `key` as text, or "" when absent.
std::string Detail(const report::Details& details, const std::string& key) {
  for (const auto& [k, v] : details) {
    if (k != key) continue;
    if (const auto* s = std::get_if<std::string>(&v)) return *s;
    if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
    if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
    if (const auto* d = std::get_if<double>(&v)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3g", *d);
      return buf;
    }
  }
  return "";
}

std::string Address(const StepRecord& record, const std::string& key) {
  for (const auto& [k, v] : record.addresses)
    if (k == key) return std::get<std::string>(v);
  return "?";
}

std::string Verdict(const StepRecord& record) {
  if (!record.check) return "";
  return record.check->verdict == report::Verdict::kPass ? "PASS" : "FAIL";
}

std::string Sync(const StepRecord& record) {
  return Detail(record.details, "waited_for_work") == "true"
             ? "waited " + Detail(record.details, "wait_us") + " µs for in-flight work"
             : "no work in flight";
}

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

std::string ConsoleLog::Describe(const PlanStep& step, const StepRecord& record) const {
  auto buffer = [&](int slot) { return plan_.buffers[slot].name; };
  const report::CheckRecord* check = record.check ? &*record.check : nullptr;
  switch (step.op) {
    case Op::kReserve:
      return "va " + Address(record, "va") + " · " + FormatBytes(step.size);
    case Op::kFree:
      return buffer(step.buffer) + " · " + FormatBytes(step.size);
    case Op::kCreate:
      return plan_.allocs[step.alloc] + " · " + FormatBytes(step.size);
    case Op::kRelease:
      return plan_.allocs[step.alloc] + " · " + Sync(record);
    case Op::kMap:
      return "va " + Address(record, "va") + " ← " + plan_.allocs[step.alloc] + " · " +
             FormatBytes(step.size);
    case Op::kSetAccess:
      return buffer(step.buffer) + " " + Detail(record.details, "access") + " over " +
             FormatBytes(step.size);
    case Op::kUnmap:
      return buffer(step.buffer) + " · " + Sync(record);
    case Op::kFill:
      return buffer(step.buffer) + " ← seed " + std::to_string(step.seed) + " · " +
             Detail(record.details, "elements") + " elements";
    case Op::kMatmul:
      return buffer(step.c) + " = " + buffer(step.a) + "·" + buffer(step.b) + " · " +
             std::to_string(step.m) + "×" + std::to_string(step.n) + "×" + std::to_string(step.k);
    case Op::kCapture:
      return "graph " + plan_.graphs[step.graph] + " · " + Detail(record.details, "nodes") +
             " node(s)";
    case Op::kInstantiate:
      return plan_.graphs[step.graph] + " → exec " + plan_.execs[step.exec];
    case Op::kReplay:
      return "exec " + plan_.execs[step.exec];
    case Op::kUpdate:
      return check ? Verdict(record) + "  result " + check->actual + " (expected " +
                         check->expected + ")"
                   : "";
    case Op::kDestroyGraph:
      return plan_.graphs[step.graph];
    case Op::kDestroyExec:
      return plan_.execs[step.exec];
    case Op::kSynchronize:
      return "";
    case Op::kSnapshot:
      return buffer(step.buffer) + " → " + plan_.snapshots[step.snapshot] + " · hash " +
             Detail(record.details, "data_hash");
    case Op::kCheckMatmul:
      return check ? Verdict(record) + "  " + Detail(record.details, "elements") + " elements vs " +
                         Detail(record.details, "method") + ", " +
                         std::to_string(check->mismatch_count) + " outside the error bound" +
                         " (max error " + Detail(record.details, "max_error_over_bound") +
                         " of bound)"
                   : "";
    case Op::kCheckEqual:
      return check ? Verdict(record) + "  equal: " + (check->actual == "equal" ? "YES" : "NO") +
                         " (" + std::to_string(check->mismatch_count) + " of " +
                         Detail(record.details, "elements") + " differ; expected " +
                         check->expected + ")"
                   : "";
    case Op::kCheckAddress: {
      if (!check) return "";
      std::string addrs;
      for (const auto& [k, v] : record.addresses)
        addrs += (addrs.empty() ? "" : ", ") + std::get<std::string>(v);
      return Verdict(record) + "  same: " + (check->actual == "same" ? "YES" : "NO") + " (" +
             addrs + "; expected " + check->expected + ")";
    }
    case Op::kCheckKernelParams: {
      if (!check) return "";
      std::string diff = Detail(record.details, "first_difference");
      return Verdict(record) + "  " + check->actual + " · " + Detail(record.details, "nodes") +
             " node(s), " + Detail(record.details, "arg_bytes_compared") + " argument bytes" +
             (diff.empty() ? "" : " · " + diff) + " (expected " + check->expected + ")";
    }
  }
  return "";
}

void ConsoleLog::OnStep(const PlanStep& step, const StepRecord& record) {
  char head[16];
  std::snprintf(head, sizeof head, "%4d  ", step.index);
  std::string label = step.label;
  // Pad by code points so names with '·' still line up.
  size_t width = 0;
  for (unsigned char ch : label) width += (ch & 0xC0) != 0x80;
  if (width < 30) label.append(30 - width, ' ');
  out_ << head << label << "  ";
  if (record.status == report::StepStatus::kSkipped) {
    out_ << "skipped\n";
    return;
  }
  if (record.status == report::StepStatus::kFailed && record.check == std::nullopt) {
    out_ << "FAILED: " << record.error << "\n";
    return;
  }
  out_ << Describe(step, record) << "  [" << Timing(record) << "]\n";
  if (record.check) {
    for (const report::Mismatch& m : record.check->mismatches)
      out_ << "        element " << m.index << ": want " << m.want << ", got " << m.got << "\n";
  }
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
  std::string verdict = s.result == "pass"          ? "PASS"
                        : s.result == "fail"        ? "FAIL"
                        : s.result == "interrupted" ? "INTERRUPTED"
                                                    : "ERROR";
  out << "result: " << verdict << " · " << r.scenario_name << " · " << s.steps << " steps (" << s.ok
      << " ok, " << s.failed << " failed, " << s.skipped << " skipped) · checks " << s.checks_passed
      << " passed, " << s.checks_failed << " failed · " << FormatMicros(s.duration_ms * 1000)
      << "\n";
  if (s.failed_step >= 0)
    out << "step " << s.failed_step << " failed at run time; every resource was released\n";
  if (s.interrupted) {
    out << "stopped by " << SignalName(s.signal) << " before step " << s.stopped_at_step
        << "; the rest was skipped and every resource was released\n";
  }
  if (!report_path.empty()) out << "report: " << report_path << "\n";
}

}  // namespace vmm
