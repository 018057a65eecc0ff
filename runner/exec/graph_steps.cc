// fill / matmul (direct or inside a capture), capture, instantiate, replay, update, destroy_*,
// synchronize.
#include "runner/base/stopwatch.h"
#include "runner/exec/run_state.h"

namespace vmm {
namespace {

using report::CheckRecord;
using report::StepRecord;
using report::Verdict;

MatmulArgs MatmulOf(const PlanStep& step, const RunState& state) {
  MatmulArgs args;
  args.a = state.buffer_va[step.a];
  args.b = state.buffer_va[step.b];
  args.c = state.buffer_va[step.c];
  args.m = step.m;
  args.n = step.n;
  args.k = step.k;
  return args;
}

void SetGpu(const OpTiming& timing, StepRecord& record) {
  if (timing.gpu_us >= 0) record.gpu_us = timing.gpu_us;
}

}  // namespace

Status RunKernelStep(const PlanStep& step, RunState& state, StepRecord& record) {
  OpTiming timing;
  // An async launch passes no OpTiming: timing it would mean waiting for it.
  OpTiming* timing_out = step.async ? nullptr : &timing;
  Stopwatch watch;
  Status status;
  if (step.op == Op::kFill) {
    const PlanBuffer& buffer = state.plan.buffers[step.buffer];
    watch.Restart();
    status =
        state.engine.Fill(state.buffer_va[step.buffer], buffer.elements, step.seed, timing_out);
    record.wall_us = watch.ElapsedUs();
    record.details.emplace_back("elements", static_cast<int64_t>(buffer.elements));
    record.details.emplace_back("seed", static_cast<int64_t>(step.seed));
  } else if (step.op == Op::kMatmul) {
    MatmulArgs args = MatmulOf(step, state);
    watch.Restart();
    status = state.engine.Matmul(args, timing_out);
    record.wall_us = watch.ElapsedUs();
    record.details.emplace_back("m", static_cast<int64_t>(step.m));
    record.details.emplace_back("n", static_cast<int64_t>(step.n));
    record.details.emplace_back("k", static_cast<int64_t>(step.k));
  } else {
    return InternalError(std::string("RunKernelStep got op ") + OpName(step.op));
  }
  if (step.async) record.details.emplace_back("async", true);
  SetGpu(timing, record);
  return status;
}

Status RunGraphStep(const PlanStep& step, RunState& state, StepRecord& record) {
  Engine& engine = state.engine;
  Stopwatch watch;
  switch (step.op) {
    case Op::kCapture: {
      watch.Restart();
      VMM_RETURN_IF_ERROR(engine.BeginCapture());
      for (const PlanStep& inner : step.body) {
        StepRecord inner_record = NewStepRecord(inner);
        Status s = RunKernelStep(inner, state, inner_record);
        if (!s.ok()) {
          inner_record.status = report::StepStatus::kFailed;
          inner_record.error = s.message();
          record.body.push_back(std::move(inner_record));
          GraphHandle discarded;  // end the capture so the stream is usable again
          (void)engine.EndCapture(&discarded);
          if (discarded.value != 0) (void)engine.DestroyGraph(discarded);
          return s.WithContext("while capturing '" + inner.label + "'");
        }
        record.body.push_back(std::move(inner_record));
      }
      GraphHandle graph;
      VMM_RETURN_IF_ERROR(engine.EndCapture(&graph));
      record.wall_us = watch.ElapsedUs();
      state.graphs[step.graph] = graph;
      record.details.emplace_back("nodes", static_cast<int64_t>(step.body.size()));
      return Status::Ok();
    }
    case Op::kInstantiate: {
      ExecHandle exec;
      watch.Restart();
      Status s = engine.Instantiate(state.graphs[step.graph], &exec);
      record.wall_us = watch.ElapsedUs();
      if (s.ok()) state.execs[step.exec] = exec;
      return s;
    }
    case Op::kReplay: {
      OpTiming timing;
      watch.Restart();
      Status s = engine.Replay(state.execs[step.exec], &timing);
      record.wall_us = watch.ElapsedUs();
      SetGpu(timing, record);
      return s;
    }
    case Op::kUpdate: {
      UpdateResult result;
      watch.Restart();
      Status s = engine.Update(state.execs[step.exec], state.graphs[step.graph], &result);
      record.wall_us = watch.ElapsedUs();
      if (!s.ok()) return s;
      CheckRecord check;
      check.expected = UpdateCodeName(step.expect_update);
      check.actual = UpdateCodeName(result.code);
      check.verdict = result.code == step.expect_update ? Verdict::kPass : Verdict::kFail;
      record.check = std::move(check);
      record.details.emplace_back("result", std::string(UpdateCodeName(result.code)));
      record.details.emplace_back("error_node", static_cast<int64_t>(result.error_node));
      if (!result.api_error.empty()) record.details.emplace_back("api_error", result.api_error);
      return Status::Ok();
    }
    case Op::kDestroyGraph: {
      watch.Restart();
      Status s = engine.DestroyGraph(state.graphs[step.graph]);
      record.wall_us = watch.ElapsedUs();
      return s;
    }
    case Op::kDestroyExec: {
      watch.Restart();
      Status s = engine.DestroyExec(state.execs[step.exec]);
      record.wall_us = watch.ElapsedUs();
      return s;
    }
    case Op::kSynchronize: {
      watch.Restart();
      Status s = engine.Synchronize();
      record.wall_us = watch.ElapsedUs();
      return s;
    }
    default:
      return InternalError(std::string("RunGraphStep got op ") + OpName(step.op));
  }
}

}  // namespace vmm
