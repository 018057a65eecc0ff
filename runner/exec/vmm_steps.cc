// reserve / free / create / release / map / set_access / unmap: one engine call each.
#include "runner/base/format.h"
#include "runner/base/stopwatch.h"
#include "runner/exec/run_state.h"

namespace vmm {
namespace {

using report::StepRecord;

void AddSync(const SyncNote& note, StepRecord& record) {
  record.details.emplace_back("waited_for_work", note.waited);
  record.details.emplace_back("wait_us", note.wait_us);
}

}  // namespace

Status RunVmmStep(const PlanStep& step, RunState& state, StepRecord& record) {
  Engine& engine = state.engine;
  Stopwatch watch;
  Status status;
  switch (step.op) {
    case Op::kReserve: {
      DevicePtr va = 0;
      watch.Restart();
      status = engine.Reserve(step.size, step.alignment, &va);
      record.wall_us = watch.ElapsedUs();
      if (!status.ok()) break;
      state.buffer_va[step.buffer] = va;
      state.step_address[step.index] = va;
      record.addresses.emplace_back("va", Hex(va));
      record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
      break;
    }
    case Op::kFree: {
      watch.Restart();
      status = engine.Free(state.buffer_va[step.buffer], step.size);
      record.wall_us = watch.ElapsedUs();
      if (status.ok()) state.buffer_va[step.buffer] = 0;
      break;
    }
    case Op::kCreate: {
      AllocHandle handle;
      watch.Restart();
      status = engine.Create(step.size, &handle);
      record.wall_us = watch.ElapsedUs();
      if (!status.ok()) break;
      state.allocs[step.alloc] = handle;
      record.addresses.emplace_back("handle", Hex(handle.value));
      record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
      break;
    }
    case Op::kRelease: {
      SyncNote note;
      watch.Restart();
      status = engine.Release(state.allocs[step.alloc], &note);
      record.wall_us = watch.ElapsedUs();
      if (status.ok()) AddSync(note, record);
      break;
    }
    case Op::kMap: {
      DevicePtr va = state.buffer_va[step.buffer] + step.offset;
      watch.Restart();
      status = engine.Map(va, step.size, step.alloc_offset, state.allocs[step.alloc]);
      record.wall_us = watch.ElapsedUs();
      if (!status.ok()) break;
      state.step_address[step.index] = va;
      record.addresses.emplace_back("va", Hex(va));
      record.details.emplace_back("offset_bytes", static_cast<int64_t>(step.offset));
      record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
      record.details.emplace_back("alloc_offset_bytes", static_cast<int64_t>(step.alloc_offset));
      break;
    }
    case Op::kSetAccess: {
      DevicePtr va = state.buffer_va[step.buffer] + step.offset;
      watch.Restart();
      status = engine.SetAccess(va, step.size, step.access);
      record.wall_us = watch.ElapsedUs();
      record.details.emplace_back("access", std::string(AccessName(step.access)));
      record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
      break;
    }
    case Op::kUnmap: {
      SyncNote note;
      DevicePtr va = state.buffer_va[step.buffer] + step.offset;
      watch.Restart();
      status = engine.Unmap(va, step.size, &note);
      record.wall_us = watch.ElapsedUs();
      if (status.ok()) AddSync(note, record);
      break;
    }
    default:
      return InternalError(std::string("RunVmmStep got op ") + OpName(step.op));
  }
  return status;
}

}  // namespace vmm
