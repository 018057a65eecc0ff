// PlanBuilder's isolate blocks: the expectation, the rule that blocks do not nest, and the block's
// own plan, validated by a builder of its own that starts with the scenario's declarations and
// nothing live (the child process sees only what it creates). A `together` group's blocks are
// planned the same way, each on its own: its body holds one isolate PlanStep per block.
#include "runner/base/format.h"
#include "runner/base/limits.h"
#include "runner/plan/plan_builder.h"

namespace vmm {

BlockExpectation PlanBuilder::DecodeBlockExpectation(const Step& step) {
  const IsolateSpec& spec = step.isolate();
  BlockExpectation e;
  e.limit_ns = spec.kill_after.value;
  if (spec.signal.set) {
    e.kind = BlockExpect::kSignal;
    e.signal = SignalNumber(spec.signal.value);  // the schema allows only known names
    if (e.signal == 0)
      Error(spec.signal.loc,
            "unknown signal '" + spec.signal.value + "'; expected one of " + SignalNames());
  } else if (spec.timeout.set) {
    e.kind = BlockExpect::kTimeout;
    e.limit_ns = spec.timeout.value;
    if (spec.kill_after.set) {
      Error(spec.kill_after.loc,
            "'kill_after' does not apply to expect: {timeout: ...}: the timeout is when the child "
            "is killed; drop 'kill_after'");
    }
  } else if (spec.expect.value == "observe") {
    e.kind = BlockExpect::kObserve;
  } else if (spec.expect.value != "ok") {
    e.kind = BlockExpect::kError;
    // The one vocabulary of expect_error (runner/vocab/cuda_errors.h), checked the same way.
    const char* name = CudaErrorNamed(spec.expect, "expect");
    e.error = name != nullptr ? name : spec.expect.value;
  }
  if (spec.at.set) {
    if (e.kind == BlockExpect::kError || e.kind == BlockExpect::kSignal) {
      e.at = spec.at.value;
    } else if (e.kind == BlockExpect::kObserve) {
      Error(spec.at.loc,
            "'at' is part of what expect: observe finds out (the record names the step that "
            "failed); drop 'at'");
    } else {
      Error(spec.at.loc,
            "'at' names the step that must fail, so it goes with expect: "
            "CUDA_ERROR_<NAME> or {signal: ...}, not with " +
                std::string(e.kind == BlockExpect::kOk ? "ok" : "a timeout") + "; drop 'at'");
    }
  }
  // The parent's clock adds these to steady_clock's now: far beyond its range (~292 years) they
  // would overflow it (a child killed at once, or a timeout that passes at once). The
  // block_minutes limit (a day; at most a year) bounds any block far from that.
  const uint64_t max_minutes = LimitValue(Limit::kBlockMinutes);
  const uint64_t max_ns = max_minutes * 60 * 1000000000ull;
  if (e.limit_ns == 0 || e.limit_ns > max_ns) {
    const SourceLoc& at = spec.timeout.set ? spec.timeout.loc : spec.kill_after.loc;
    Error(at, std::string(spec.timeout.set ? "'timeout'" : "'kill_after'") +
                  " must be greater than 0 and at most " + std::to_string(max_minutes) + "min" +
                  (max_minutes == 1440 ? " (a day)" : "") + ", got " +
                  std::to_string(e.limit_ns / 1000000000) + " s" +
                  (e.limit_ns > max_ns ? RaiseHint(Limit::kBlockMinutes) : ""));
  }
  return e;
}

template <>
void PlanBuilder::PlanOp<Op::kIsolate>(const Step& step, PlanStep* p, BufferUses*) {
  if (parent_ != nullptr) {
    Error(step.loc,
          "isolate blocks do not nest: the steps of an isolate block already run in a child "
          "process; move this block after the one it is in");
    return;
  }
  // The child gets every handle exported so far, in one message of at most kMaxChildHandles.
  if (handles_.size() > kMaxChildHandles) {
    Error(step.loc, "this isolate block's child would receive " + std::to_string(handles_.size()) +
                        " exported handles; a child takes at most " +
                        std::to_string(kMaxChildHandles) + " (docs/limits-and-safety.md)");
  }
  auto block = std::make_shared<IsolatedBlock>();
  block->expect = DecodeBlockExpectation(step);
  if (step.steps.empty()) Error(step.loc, "the isolate block has no steps; add some");
  block->plan = PlanBuilder(*this, step, block->expect).BuildBlock();
  if (!block->expect.at.empty()) {
    bool found = false;  // a step of the block, or of a thread of one of its threads groups
    for (const PlanStep& s : block->plan.steps) {
      found = found || s.label == block->expect.at;
      if (s.op != Op::kThreads) continue;
      for (const PlanStep& thread : s.body)
        for (const PlanStep& t : thread.body) found = found || t.label == block->expect.at;
    }
    if (!found) {
      Error(step.isolate().at.loc, "'at' names no step of this block: '" + block->expect.at +
                                       "'; give a step's name (or its label, such as 'map A')");
    }
  }
  p->block = std::move(block);
}

template <>
void PlanBuilder::PlanOp<Op::kTogether>(const Step& step, PlanStep* p, BufferUses*) {
  if (parent_ != nullptr) {
    Error(step.loc,
          "a together group does not go inside an isolate block: the block's steps already run in "
          "one child process; move the group after the block it is in");
    return;
  }
  if (step.steps.empty()) Error(step.loc, "the together group has no blocks; add isolate blocks");
  if (step.steps.size() > LimitValue(Limit::kTogetherBlocks)) {
    // Each block is a process started at once: a loop could start thousands (120 took 1.5 GB).
    return Error(step.loc, "the together group has " + std::to_string(step.steps.size()) +
                               " blocks; at most " +
                               std::to_string(LimitValue(Limit::kTogetherBlocks)) +
                               " children run at once" + RaiseHint(Limit::kTogetherBlocks));
  }
  p->body.reserve(step.steps.size());
  for (size_t i = 0; i < step.steps.size(); ++i) {
    const Step& block = step.steps[i];
    if (block.op == Op::kTogether) {
      Error(block.loc,
            "together groups do not nest: put the inner group's blocks in this group, or the "
            "group after this one");
      continue;
    }
    if (block.op != Op::kIsolate) {
      Error(block.loc, std::string("a together group holds isolate blocks only, and '") +
                           OpName(block.op) +
                           "' is a step: put it in a block ({isolate: {expect: ok}, name: ..., "
                           "steps: [...]}), or before or after the group");
      continue;
    }
    if (!block.name.set || block.name.value.empty()) {
      Error(block.loc,
            "a block of a together group needs a 'name': the report, diff and JUnit tell its "
            "children apart by it (in a loop, e.g. name: \"worker ${i}\")");
    }
    p->body.push_back(Visit(block, static_cast<int>(i), nullptr));
  }
}

}  // namespace vmm
