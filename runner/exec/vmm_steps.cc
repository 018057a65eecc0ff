// reserve / free / create / release / map / set_access / unmap: one engine call each.
//
// A run of consecutive VMM steps is compiled into HotVmmSteps (one cache line each) and executed
// back to back by RunVmmSteps; RecordVmmStep turns each into report fields afterwards. So between
// two engine calls the executor touches one line of its own data, reads the clock once and stores
// a few words: the driver calls in between leave the caches cold, and every line the runner
// touches there is a miss that a raw loop of driver calls would not pay.
//
// Each memory op is one MemoryOp<op> specialization: its engine call (Call), its report fields
// (Record) and its console line (Describe). The op table's rows index the call tables below.
#include <chrono>

#include "runner/base/format.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"

namespace vmm {
namespace {

using report::StepRecord;
using Clock = std::chrono::steady_clock;

double Micros(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

// Keeps what Unmap/Release said about in-flight work in the compiled step.
void KeepSync(const SyncNote& note, HotVmmStep& s) {
  s.waited = note.waited;
  s.wait_us = note.wait_us;
}

void AddSync(const HotVmmStep& done, StepRecord& record) {
  record.details.reserve(3);
  if (!done.wait) {  // `wait: false`: the call went out under whatever was running
    record.details.emplace_back("wait", false);
    return;
  }
  record.details.emplace_back("waited_for_work", done.waited);
  record.details.emplace_back("wait_us", done.wait_us);
}

// The primary template serves the ops of other families, which never reach a memory burst.
template <Op op>
struct MemoryOp {
  static_assert(!IsMemoryOp(op), "a memory op needs its MemoryOp<op> specialization here");
  static Status Call(HotVmmStep&, RunState&) {
    return InternalError(std::string("RunVmmSteps got op ") + OpName(op));
  }
  static void Record(const PlanStep&, const HotVmmStep&, bool, RunState&, StepRecord&) {}
};

template <>
struct MemoryOp<Op::kReserve> {
  static Status Call(HotVmmStep& s, RunState& state) {
    DevicePtr va = 0;
    Status status = state.engine.Reserve(s.size, s.aux, &va);
    if (status.ok()) state.buffer_va[s.buffer] = s.result = va;
    return status;
  }
  static void Record(const PlanStep& step, const HotVmmStep& done, bool ok, RunState& state,
                     StepRecord& record) {
    if (!ok) return;
    state.step_address[step.index] = done.result;
    record.addresses.emplace_back("va", Hex(done.result));
    record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
  }
};

template <>
struct MemoryOp<Op::kFree> {
  static Status Call(HotVmmStep& s, RunState& state) {
    Status status = state.engine.Free(state.buffer_va[s.buffer], s.size);
    if (status.ok()) state.buffer_va[s.buffer] = 0;
    return status;
  }
  static void Record(const PlanStep&, const HotVmmStep&, bool, RunState&, StepRecord&) {}
};

template <>
struct MemoryOp<Op::kCreate> {
  static Status Call(HotVmmStep& s, RunState& state) {
    AllocHandle handle;
    Status status = state.engine.Create(s.size, &handle);
    if (status.ok()) {
      state.allocs[s.alloc] = handle;
      s.result = handle.value;
    }
    return status;
  }
  static void Record(const PlanStep& step, const HotVmmStep& done, bool ok, RunState&,
                     StepRecord& record) {
    if (!ok) return;
    record.addresses.emplace_back("handle", Hex(done.result));
    record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
  }
};

template <>
struct MemoryOp<Op::kRelease> {
  static Status Call(HotVmmStep& s, RunState& state) {
    SyncNote note;
    note.wait = s.wait;
    Status status = state.engine.Release(state.allocs[s.alloc], &note);
    KeepSync(note, s);
    return status;
  }
  static void Record(const PlanStep&, const HotVmmStep& done, bool ok, RunState&,
                     StepRecord& record) {
    if (ok) AddSync(done, record);
  }
};

template <>
struct MemoryOp<Op::kMap> {
  static Status Call(HotVmmStep& s, RunState& state) {
    s.result = state.buffer_va[s.buffer] + s.offset;
    return state.engine.Map(s.result, s.size, s.aux, state.allocs[s.alloc]);
  }
  static void Record(const PlanStep& step, const HotVmmStep& done, bool ok, RunState& state,
                     StepRecord& record) {
    if (!ok) return;
    state.step_address[step.index] = done.result;
    record.addresses.emplace_back("va", Hex(done.result));
    record.details.reserve(3);
    record.details.emplace_back("offset_bytes", static_cast<int64_t>(step.offset));
    record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
    record.details.emplace_back("alloc_offset_bytes", static_cast<int64_t>(step.alloc_offset));
  }
};

template <>
struct MemoryOp<Op::kSetAccess> {
  static Status Call(HotVmmStep& s, RunState& state) {
    return state.engine.SetAccess(state.buffer_va[s.buffer] + s.offset, s.size, s.access);
  }
  static void Record(const PlanStep& step, const HotVmmStep&, bool, RunState&, StepRecord& record) {
    record.details.reserve(2);
    record.details.emplace_back("access", std::string(AccessName(step.access)));
    record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
  }
};

template <>
struct MemoryOp<Op::kUnmap> {
  static Status Call(HotVmmStep& s, RunState& state) {
    SyncNote note;
    note.wait = s.wait;
    Status status = state.engine.Unmap(state.buffer_va[s.buffer] + s.offset, s.size, &note);
    KeepSync(note, s);
    return status;
  }
  static void Record(const PlanStep&, const HotVmmStep& done, bool ok, RunState&,
                     StepRecord& record) {
    if (ok) AddSync(done, record);
  }
};

using CallFn = Status (*)(HotVmmStep&, RunState&);
using RecordFn = void (*)(const PlanStep&, const HotVmmStep&, bool, RunState&, StepRecord&);

// Indexed by Op, from the op table.
constexpr CallFn kCalls[] = {
#define VMM_OP(Enum, name, Family, Flags, label) &MemoryOp<Op::Enum>::Call,
#include "runner/vocab/ops.def"
#undef VMM_OP
};
constexpr RecordFn kRecords[] = {
#define VMM_OP(Enum, name, Family, Flags, label) &MemoryOp<Op::Enum>::Record,
#include "runner/vocab/ops.def"
#undef VMM_OP
};

}  // namespace

HotVmmStep CompileVmmStep(const PlanStep& step) {
  HotVmmStep s;
  s.op = step.op;
  s.access = step.access;
  s.buffer = step.buffer;
  s.alloc = step.alloc;
  s.size = step.size;
  s.offset = step.offset;
  s.wait = step.wait;
  s.aux = step.op == Op::kReserve ? step.alignment : step.alloc_offset;
  return s;
}

size_t RunVmmSteps(HotVmmStep* steps, size_t count, RunState& state, Status* error) {
  Clock::time_point last = Clock::now();
  for (size_t i = 0; i < count; ++i) {
    Status status = kCalls[static_cast<size_t>(steps[i].op)](steps[i], state);
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
  kRecords[static_cast<size_t>(step.op)](step, done, ok, state, record);
}

Status RunVmmStep(const PlanStep& step, RunState& state, StepRecord& record) {
  HotVmmStep s = CompileVmmStep(step);
  Status status;
  RunVmmSteps(&s, 1, state, &status);
  RecordVmmStep(step, s, status.ok(), state, record);
  return status;
}

// The seven memory ops run through RunVmmStep when they run alone (repeat, or with an observer).
#define VMM_MEMORY_RUN(Enum)                                                            \
  template <>                                                                           \
  Status RunStep<Op::Enum>(const PlanStep& step, RunState& state, StepRecord& record) { \
    return RunVmmStep(step, state, record);                                             \
  }
VMM_MEMORY_RUN(kReserve)
VMM_MEMORY_RUN(kFree)
VMM_MEMORY_RUN(kCreate)
VMM_MEMORY_RUN(kRelease)
VMM_MEMORY_RUN(kMap)
VMM_MEMORY_RUN(kSetAccess)
VMM_MEMORY_RUN(kUnmap)
#undef VMM_MEMORY_RUN

template <>
std::string DescribeStep<Op::kReserve>(const Plan&, const PlanStep& step, const StepRecord& r) {
  return "va " + AddressText(r, "va") + " · " + FormatBytes(step.size);
}
template <>
std::string DescribeStep<Op::kFree>(const Plan& plan, const PlanStep& step, const StepRecord&) {
  return plan.buffers[step.buffer].name + " · " + FormatBytes(step.size);
}
template <>
std::string DescribeStep<Op::kCreate>(const Plan& plan, const PlanStep& step, const StepRecord&) {
  return plan.allocs[step.alloc] + " · " + FormatBytes(step.size);
}
template <>
std::string DescribeStep<Op::kRelease>(const Plan& plan, const PlanStep& step,
                                       const StepRecord& r) {
  return plan.allocs[step.alloc] + " · " + SyncText(r);
}
template <>
std::string DescribeStep<Op::kMap>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  return "va " + AddressText(r, "va") + " ← " + plan.allocs[step.alloc] + " · " +
         FormatBytes(step.size);
}
template <>
std::string DescribeStep<Op::kSetAccess>(const Plan& plan, const PlanStep& step,
                                         const StepRecord& r) {
  return plan.buffers[step.buffer].name + " " + DetailText(r, "access") + " over " +
         FormatBytes(step.size);
}
template <>
std::string DescribeStep<Op::kUnmap>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  return plan.buffers[step.buffer].name + " · " + SyncText(r);
}

}  // namespace vmm
