// reserve / free / create / release / map / set_access / unmap: one engine call each.
//
// Split in two so that a run of VMM steps does nothing between engine calls but the calls
// themselves, two clock reads and a few stores: ExecuteVmmStep (the hot part) and RecordVmmStep
// (formatting into the report, which the executor may do after the run).
#include <chrono>

#include "runner/base/format.h"
#include "runner/exec/run_state.h"

namespace vmm {
namespace {

using report::StepRecord;
using Clock = std::chrono::steady_clock;

double MicrosSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// Times one engine call: the clock is read right before and right after it, nothing else.
template <typename Call>
Status Timed(double& wall_us, Call call) {
  const Clock::time_point start = Clock::now();
  Status status = call();
  wall_us = MicrosSince(start);
  return status;
}

void AddSync(const SyncNote& note, StepRecord& record) {
  record.details.reserve(2);
  record.details.emplace_back("waited_for_work", note.waited);
  record.details.emplace_back("wait_us", note.wait_us);
}

}  // namespace

bool IsVmmOp(Op op) {
  switch (op) {
    case Op::kReserve:
    case Op::kFree:
    case Op::kCreate:
    case Op::kRelease:
    case Op::kMap:
    case Op::kSetAccess:
    case Op::kUnmap:
      return true;
    default:
      return false;
  }
}

Status ExecuteVmmStep(const PlanStep& step, RunState& state, VmmOutcome& out) {
  Engine& engine = state.engine;
  Status status;
  switch (step.op) {
    case Op::kReserve:
      status =
          Timed(out.wall_us, [&] { return engine.Reserve(step.size, step.alignment, &out.va); });
      if (!status.ok()) break;
      state.buffer_va[step.buffer] = out.va;
      state.step_address[step.index] = out.va;
      break;
    case Op::kFree:
      status =
          Timed(out.wall_us, [&] { return engine.Free(state.buffer_va[step.buffer], step.size); });
      if (status.ok()) state.buffer_va[step.buffer] = 0;
      break;
    case Op::kCreate: {
      AllocHandle handle;
      status = Timed(out.wall_us, [&] { return engine.Create(step.size, &handle); });
      if (!status.ok()) break;
      state.allocs[step.alloc] = handle;
      out.handle = handle.value;
      break;
    }
    case Op::kRelease:
      status =
          Timed(out.wall_us, [&] { return engine.Release(state.allocs[step.alloc], &out.sync); });
      break;
    case Op::kMap: {
      out.va = state.buffer_va[step.buffer] + step.offset;
      const AllocHandle handle = state.allocs[step.alloc];
      status = Timed(out.wall_us,
                     [&] { return engine.Map(out.va, step.size, step.alloc_offset, handle); });
      if (status.ok()) state.step_address[step.index] = out.va;
      break;
    }
    case Op::kSetAccess: {
      const DevicePtr va = state.buffer_va[step.buffer] + step.offset;
      status = Timed(out.wall_us, [&] { return engine.SetAccess(va, step.size, step.access); });
      break;
    }
    case Op::kUnmap: {
      const DevicePtr va = state.buffer_va[step.buffer] + step.offset;
      status = Timed(out.wall_us, [&] { return engine.Unmap(va, step.size, &out.sync); });
      break;
    }
    default:
      return InternalError(std::string("ExecuteVmmStep got op ") + OpName(step.op));
  }
  return status;
}

void RecordVmmStep(const PlanStep& step, const VmmOutcome& out, bool ok, StepRecord& record) {
  record.wall_us = out.wall_us;
  switch (step.op) {
    case Op::kReserve:
      if (!ok) break;
      record.addresses.emplace_back("va", Hex(out.va));
      record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
      break;
    case Op::kFree:
      break;
    case Op::kCreate:
      if (!ok) break;
      record.addresses.emplace_back("handle", Hex(out.handle));
      record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
      break;
    case Op::kRelease:
    case Op::kUnmap:
      if (ok) AddSync(out.sync, record);
      break;
    case Op::kMap:
      if (!ok) break;
      record.addresses.emplace_back("va", Hex(out.va));
      record.details.reserve(3);
      record.details.emplace_back("offset_bytes", static_cast<int64_t>(step.offset));
      record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
      record.details.emplace_back("alloc_offset_bytes", static_cast<int64_t>(step.alloc_offset));
      break;
    case Op::kSetAccess:
      record.details.reserve(2);
      record.details.emplace_back("access", std::string(AccessName(step.access)));
      record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
      break;
    default:
      break;
  }
}

Status RunVmmStep(const PlanStep& step, RunState& state, StepRecord& record) {
  VmmOutcome out;
  Status status = ExecuteVmmStep(step, state, out);
  RecordVmmStep(step, out, status.ok(), record);
  return status;
}

}  // namespace vmm
