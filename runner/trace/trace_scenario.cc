// TraceScenario (trace_scenario.h): one pass over the chosen process's records in order, keeping
// the live reservations, their mappings (with device 0's access) and the live handles, and
// writing a step for each call it replays.
#include "runner/trace/trace_scenario.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "runner/base/format.h"
#include "runner/trace/trace_compare.h"
#include "runner/trace/trace_writer.h"
#include "runner/yaml/yaml_writer.h"

namespace vmm::trace {

Status TraceWriter::Write(std::string* text) {
  for (const TraceRecord& r : trace_.records) {
    if (r.pid == pid_ && IsFault(r.result)) {
      fault_ = &r;
      break;
    }
  }
  for (const TraceRecord& r : trace_.records) {
    if (r.pid != pid_) continue;
    if (fault_ != nullptr && r.line > fault_->line) {
      ++after_fault_;
      continue;
    }
    ++calls_[r.info().name];
    if (&r == fault_) {
      Step("{op: synchronize, name: the fault surfaces}",
           std::string("the program's ") + r.info().name + " returned " + ResultText(r.result) +
               " (line " + std::to_string(r.line) + ")");
      continue;
    }
    if (r.call == TraceCall::k_cuMemCreate && r.result == 800 && (r.Number("handle_types") & 8) &&
        r.Number("size") != 0 && r.Number("size") % kGranule == 0) {
      // A fabric handle refused (CUDA_ERROR_NOT_PERMITTED: no IMEX channel), as PyTorch's
      // allocator tries first: the twin refuses it alike, so it is replayed as a refusal.
      Step("{op: create, alloc: h" + std::to_string(next_alloc_) +
               ", size: " + SizeLiteral(r.Number("size")) + HandleTypes(r) +
               ", expect_error: CUDA_ERROR_NOT_PERMITTED}",
           "the program's try at a fabric handle, refused (line " + std::to_string(r.line) + ")");
      continue;
    }
    if (r.result != 0) {
      // A capture that failed to end (invalidated) ends all the same: its stream captures no more.
      if (r.call == TraceCall::k_cuStreamEndCapture) graphs_.Abandon(r.Number("stream"));
      ++failed_[std::string(r.info().name) + " returned " + ResultText(r.result)];
      if (first_failure_ == nullptr) first_failure_ = &r;
      continue;
    }
    VMM_RETURN_IF_ERROR(One(r));
  }
  if (fault_ == nullptr) Teardown();
  if (steps_.empty()) {
    std::string why;
    for (const auto& [what, n] : left_out_) why += "; " + std::to_string(n) + " x " + what;
    return InvalidInput("none of process " + std::to_string(pid_) + "'s calls can be replayed" +
                        (why.empty() ? "" : ": " + why.substr(2)));
  }
  *text = Header() + Declarations() + StepList();
  return Status::Ok();
}

// The steps as the scenario's list: at the top level, or (fault mode) in one isolate block
// that expects the program's fault where the program saw it.
std::string TraceWriter::StepList() const {
  std::string text = "steps:\n";
  std::string indent = "  ";
  if (fault_ != nullptr) {
    text += "  - isolate: {expect: " + ResultText(fault_->result) + ", at: the fault surfaces}\n" +
            "    name: the program's run up to its fault\n    steps:\n";
    indent = "      ";
  }
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (i == teardown_)
      text += indent +
              "# The end of the trace: what is still mapped, allocated or reserved is "
              "given back.\n";
    text += indent + "- " + steps_[i] + "\n";
  }
  return text;
}

std::string TraceWriter::Header() const {
  std::string command;
  for (const std::string& c : trace_.comments)
    if (c.rfind("recorded by vmm-run record: ", 0) == 0) command = c.substr(28);
  std::string h = "# Imported by `vmm-run import-trace` from " + options_.source +
                  " (a call trace" + (command.empty() ? "" : " of `" + command + "`") +
                  "), process " + std::to_string(pid_) + ".\n# Its calls:";
  for (const auto& [call, n] : calls_) h += " " + std::to_string(n) + " " + call + ",";
  h.back() = '.';
  h += "\n# Each reservation is a buffer (R<i>), each allocation handle an alloc (h<i>); "
       "addresses\n# are offsets into the reservations. The trace's synchronisations order the "
       "stand-ins.\n";
  if (options_.data)
    h += "# Stand-ins for the program's kernels: each mapping a launch was given is written "
         "(memset,\n# a value of its own) once and checked (check_value) before it is "
         "unmapped.\n";
  if (stood_in_again_ != 0)
    h += "# " + std::to_string(stood_in_again_) +
         " launches touched a mapping already written since it was last checked: stood in "
         "once.\n";
  for (const auto& [why, n] : left_out_)
    h += "# Left out: " + std::to_string(n) + " x " + why + ".\n";
  for (const auto& [why, n] : failed_)
    h += "# Failed in the program, not replayed: " + std::to_string(n) + " x " + why + ".\n";
  if (first_failure_ != nullptr && first_failure_ != fault_)
    h += "# The program's first failure: line " + std::to_string(first_failure_->line) + ", " +
         first_failure_->info().name + " returned " + ResultText(first_failure_->result) + ".\n";
  for (const auto& [call, n] : not_replayed_)
    h += "# Not replayed: " + std::to_string(n) + " x " + call + ".\n";
  for (const auto& [why, n] : graphs_.skipped())
    h += "# Not replayed: " + std::to_string(n) + " x " + why + ".\n";
  if (fault_ != nullptr)
    h += "# The program faulted: its " + std::string(fault_->info().name) + " (line " +
         std::to_string(fault_->line) + ") returned " + ResultText(fault_->result) +
         ". The run up to\n# there is one isolate block that expects the fault at that "
         "point; the " +
         std::to_string(after_fault_) +
         " calls after it\n# (on a context "
         "the fault made unusable) are not replayed.\n";
  return h;
}

std::string TraceWriter::Declarations() const {
  std::string d = "version: 1\nname: " + YamlScalarText(options_.name, true) +
                  "\ndescription: \"the VMM calls of a recorded program (" +
                  std::to_string(trace_.records.size()) +
                  " records), replayed\"\ngranularity: 2MiB\n";
  if (devices_ > 1) d += "requires: {devices: " + std::to_string(devices_) + "}\n";
  std::string buffers;
  for (const Region& g : regions_)
    buffers += "  " + g.name + ": {shape: [" + std::to_string(g.size / 4) + "]}  # " +
               SizeLiteral(g.size) + " reserved at " + Hex(g.base) + " in the trace\n";
  d += buffers.empty() ? "buffers: {}\n" : "buffers:\n" + buffers;
  if (!views_.empty()) {
    d += "views:  # the mappings the program's kernels were given\n";
    for (const View& v : views_)
      d += "  " + v.name + ": {of: " + v.region + ", offset: " + std::to_string(v.offset) +
           ", shape: [" + std::to_string(v.size / 4) + "]}\n";
  }
  return d;
}

std::string TraceWriter::HandleTypes(const TraceRecord& r) {
  const uint64_t bits = r.Number("handle_types");
  std::string list;
  if (bits & 1) list += "posix_fd";
  if (bits & 8) list += std::string(list.empty() ? "" : ", ") + "fabric";
  return list.empty() ? "" : ", handle_types: [" + list + "]";
}

Status TraceWriter::Skip(const std::string& why) {
  ++left_out_[why];
  return Status::Ok();
}

std::string TraceWriter::Shorten(const std::string& kernel) {
  return kernel.size() <= 60 ? kernel : kernel.substr(0, 57) + "...";
}

// Appends a step; its index (a stand-in may be rewritten when a race is found later).
size_t TraceWriter::Step(const std::string& step, const std::string& comment) {
  steps_.push_back(step + (comment.empty() ? "" : "  # " + comment));
  return steps_.size() - 1;
}

StatusOr<std::string> TraceScenario(const CallTrace& trace, const TraceImportOptions& options) {
  StatusOr<uint64_t> pid = VmmProcess(trace, options.pid);
  if (!pid.ok()) return pid.status();
  std::string text;
  VMM_RETURN_IF_ERROR(TraceWriter(trace, options, *pid).Write(&text));
  return text;
}

}  // namespace vmm::trace
