// reserve / free / create / release / map / set_access / unmap: one engine call each.
//
// A run of consecutive VMM steps is compiled into HotVmmSteps (one cache line each) and executed
// back to back by RunVmmSteps; RecordVmmStep turns each into report fields afterwards. So between
// two engine calls the executor touches one line of its own data, reads the clock once and stores
// a few words: the driver calls in between leave the caches cold, and every line the runner
// touches there is a miss that a raw loop of driver calls would not pay.
#include <chrono>

#include "runner/base/format.h"
#include "runner/exec/run_state.h"

namespace vmm {
namespace {

using report::StepRecord;
using Clock = std::chrono::steady_clock;

double Micros(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

void AddSync(const HotVmmStep& done, StepRecord& record) {
  record.details.reserve(2);
  record.details.emplace_back("waited_for_work", done.waited);
  record.details.emplace_back("wait_us", done.wait_us);
}

// The engine call of one compiled step and the run state it changes.
Status Call(HotVmmStep& s, RunState& state) {
  Engine& engine = state.engine;
  switch (s.op) {
    case Op::kReserve: {
      DevicePtr va = 0;
      Status status = engine.Reserve(s.size, s.aux, &va);
      if (status.ok()) state.buffer_va[s.buffer] = s.result = va;
      return status;
    }
    case Op::kFree: {
      Status status = engine.Free(state.buffer_va[s.buffer], s.size);
      if (status.ok()) state.buffer_va[s.buffer] = 0;
      return status;
    }
    case Op::kCreate: {
      AllocHandle handle;
      Status status = engine.Create(s.size, &handle);
      if (status.ok()) {
        state.allocs[s.alloc] = handle;
        s.result = handle.value;
      }
      return status;
    }
    case Op::kRelease: {
      SyncNote note;
      Status status = engine.Release(state.allocs[s.alloc], &note);
      s.waited = note.waited;
      s.wait_us = note.wait_us;
      return status;
    }
    case Op::kMap:
      s.result = state.buffer_va[s.buffer] + s.offset;
      return engine.Map(s.result, s.size, s.aux, state.allocs[s.alloc]);
    case Op::kSetAccess:
      return engine.SetAccess(state.buffer_va[s.buffer] + s.offset, s.size, s.access);
    case Op::kUnmap: {
      SyncNote note;
      Status status = engine.Unmap(state.buffer_va[s.buffer] + s.offset, s.size, &note);
      s.waited = note.waited;
      s.wait_us = note.wait_us;
      return status;
    }
    default:
      return InternalError(std::string("RunVmmSteps got op ") + OpName(s.op));
  }
}

}  // namespace

HotVmmStep CompileVmmStep(const PlanStep& step) {
  HotVmmStep s;
  s.op = step.op;
  s.access = step.access;
  s.buffer = step.buffer;
  s.alloc = step.alloc;
  s.size = step.size;
  s.offset = step.offset;
  s.aux = step.op == Op::kReserve ? step.alignment : step.alloc_offset;
  return s;
}

size_t RunVmmSteps(HotVmmStep* steps, size_t count, RunState& state, Status* error) {
  Clock::time_point last = Clock::now();
  for (size_t i = 0; i < count; ++i) {
    Status status = Call(steps[i], state);
    const Clock::time_point now = Clock::now();
    steps[i].wall_us = Micros(last, now);
    last = now;
    if (!status.ok()) {
      *error = std::move(status);
      return i;
    }
  }
  return count;
}

void RecordVmmStep(const PlanStep& step, const HotVmmStep& done, bool ok, RunState& state,
                   StepRecord& record) {
  record.wall_us = done.wall_us;
  switch (step.op) {
    case Op::kReserve:
      if (!ok) break;
      state.step_address[step.index] = done.result;
      record.addresses.emplace_back("va", Hex(done.result));
      record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
      break;
    case Op::kFree:
      break;
    case Op::kCreate:
      if (!ok) break;
      record.addresses.emplace_back("handle", Hex(done.result));
      record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
      break;
    case Op::kRelease:
    case Op::kUnmap:
      if (ok) AddSync(done, record);
      break;
    case Op::kMap:
      if (!ok) break;
      state.step_address[step.index] = done.result;
      record.addresses.emplace_back("va", Hex(done.result));
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
  HotVmmStep s = CompileVmmStep(step);
  Status status;
  RunVmmSteps(&s, 1, state, &status);
  RecordVmmStep(step, s, status.ok(), state, record);
  return status;
}

}  // namespace vmm
