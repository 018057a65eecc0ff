// isolate: a block of steps run by a child process; together: several such blocks whose children
// run at the same time. The executor hands the step to its BlockRunner (executor.h), which starts
// the children and records how each ended.
#include <algorithm>
#include <cmath>
#include <limits>

#include "runner/exec/latency.h"
#include "runner/exec/run_state.h"

namespace vmm {

using report::StepRecord;

namespace {

Status NoBlockRunner(const char* what) {
  return RuntimeError(std::string("this run cannot start child processes, so it cannot run ") +
                      what + " (vmm-run run can)");
}

// The named descriptors a child receives: every shareable handle this run exported so far
// (borrowed: the run keeps owning them); the block's `import` steps take them by name.
BlockRunner::BlockFds SharedFds(const RunState& state) {
  BlockRunner::BlockFds fds;
  for (const auto& [name, fd] : state.shared_handles) fds.emplace_back(name, fd.get());
  return fds;
}

// How the children of a group overlapped in time, from their records: whether every child was
// ready before the first one ended (they all ran at once), and for how long (the first end minus
// the last ready; negative when they did not all overlap).
void AddOverlap(const std::vector<StepRecord>& blocks, StepRecord& record) {
  double last_ready = -std::numeric_limits<double>::infinity();
  double first_end = std::numeric_limits<double>::infinity();
  bool known = !blocks.empty();
  for (const StepRecord& b : blocks) {
    if (!b.child || !b.child->ready_ms || !b.child->ended_ms) {
      known = false;
      break;
    }
    last_ready = std::max(last_ready, *b.child->ready_ms);
    first_end = std::min(first_end, *b.child->ended_ms);
  }
  record.details.emplace_back("blocks", static_cast<int64_t>(blocks.size()));
  record.details.emplace_back("all_ran_at_once", known && last_ready < first_end);
  if (known) record.details.emplace_back("overlap_ms", first_end - last_ready);
}

}  // namespace

template <>
Status RunStep<Op::kIsolate>(const PlanStep& step, RunState& state, StepRecord& record) {
  if (step.block == nullptr) return InternalError("isolate step without its block plan");
  if (state.blocks == nullptr) return NoBlockRunner("an isolate block");
  return state.blocks->RunBlock(step, SharedFds(state), record);
}

// A group's record holds one isolate record per block (its body), each judged like a lone block's;
// the group fails when one of them does. Every child gets the same descriptors.
template <>
Status RunStep<Op::kTogether>(const PlanStep& step, RunState& state, StepRecord& record) {
  for (const PlanStep& block : step.body)
    if (block.block == nullptr) return InternalError("together group without its block plans");
  if (state.blocks == nullptr) return NoBlockRunner("a together group");
  std::vector<StepRecord> blocks;
  blocks.reserve(step.body.size());
  for (const PlanStep& block : step.body) blocks.push_back(NewStepRecord(block));
  Stopwatch watch;
  Status status = state.blocks->RunGroup(step, SharedFds(state), blocks);
  record.wall_us = watch.ElapsedUs();
  for (StepRecord& b : blocks) {
    if (!status.ok()) {
      b.status = report::StepStatus::kSkipped;
    } else if (b.check && b.check->verdict == report::Verdict::kFail) {
      b.status = report::StepStatus::kFailed;
      record.status = report::StepStatus::kFailed;
    }
  }
  if (status.ok()) {
    AddOverlap(blocks, record);
    // Each op's latency over every child's steps: processes beside threads (docs: together).
    LatencySamples samples;
    for (const StepRecord& b : blocks) CollectLatency(b.body, samples);
    AddLatency(samples, record.details);
  }
  record.body = std::move(blocks);
  return status;
}

// "child 4242 exited 4 · CUDA_ERROR_ILLEGAL_ADDRESS (expected CUDA_ERROR_ILLEGAL_ADDRESS): YES"
template <>
std::string DescribeStep<Op::kIsolate>(const Plan&, const PlanStep& step, const StepRecord& r) {
  std::string out = "child";
  if (r.child) {
    const report::ChildRecord& c = *r.child;
    out += " " + std::to_string(c.pid);
    if (c.timed_out) {
      out += " timed out, killed";
    } else if (!c.stopped_by.empty()) {
      out += " killed: vmm-run got " + c.stopped_by;
    } else if (!c.signal.empty()) {
      out += " killed by " + c.signal;
    } else if (c.exit_status) {
      out += " exited " + std::to_string(*c.exit_status);
    }
    if (c.error) out += " · " + *c.error;
  }
  if (r.check) {
    out += " (expected " + r.check->expected + "): " +
           (r.check->verdict == report::Verdict::kPass ? "YES" : "NO, got " + r.check->actual);
  } else if (step.block != nullptr) {
    out += " (expected " + step.block->expect.Text() + ")";
  }
  return out;
}

// "4 children, all ran at once (overlap 812 ms): 4 of 4 as expected"
template <>
std::string DescribeStep<Op::kTogether>(const Plan&, const PlanStep& step, const StepRecord& r) {
  size_t passed = 0;
  std::string failed;
  for (const StepRecord& b : r.body) {
    if (b.check && b.check->verdict == report::Verdict::kPass) {
      ++passed;
    } else {
      failed += (failed.empty() ? "; not: " : ", ") + b.name +
                (b.check ? " (" + b.check->actual + ")" : std::string());
    }
  }
  std::string out = std::to_string(step.body.size()) + " children";
  for (const auto& [key, value] : r.details) {
    if (key == "all_ran_at_once")
      out += std::get<bool>(value) ? ", all ran at once" : ", not all at once";
    if (key == "overlap_ms" && std::get<double>(value) > 0)
      out += " (overlap " + std::to_string(std::llround(std::get<double>(value))) + " ms)";
  }
  return out + ": " + std::to_string(passed) + " of " + std::to_string(step.body.size()) +
         " as expected" + failed + LatencyText(r.details);
}

}  // namespace vmm
