// reserve / free / create / release / map / set_access / unmap: one engine call each.
//
// A run of consecutive VMM steps is compiled into HotVmmSteps (one cache line each) and executed
// back to back by RunVmmSteps; RecordVmmStep turns each into report fields afterwards. So between
// two engine calls the executor touches one line of its own data, reads the time-stamp counter
// (steady_clock off x86-64) once and stores a few words: the driver calls in between leave the
// caches cold, and every line the runner touches there is a miss that a raw loop of driver calls
// would not pay.
//
// Each memory op is one MemoryOp<op> specialization: its engine call (Call), its report fields
// (Record); their console lines (DescribeStep) are in vmm_step_text.cc. The op table's rows index
// the call tables below.
#include <chrono>
#include <new>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "runner/base/format.h"
#include "runner/base/hot_path.h"
#include "runner/exec/burst_records.h"
#include "runner/exec/run_state.h"

namespace vmm {
namespace {

using report::StepRecord;
using Clock = std::chrono::steady_clock;

double Micros(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

// A cheap, steadily increasing count: the CPU's time-stamp counter where there is one (x86-64:
// constant and non-stop on every machine vmm-run targets), else steady_clock's nanoseconds.
VMM_HOT uint64_t ReadTicks() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(Clock::now().time_since_epoch().count());
#endif
}

// steps[0, n) hold ticks in wall_us; turns them into microseconds that add up to `total_us`
// (all-zero ticks: an equal share each).
VMM_HOT void ShareOutTime(HotVmmStep* steps, size_t n, double total_us) {
  double ticks = 0;
  for (size_t i = 0; i < n; ++i) ticks += steps[i].wall_us;
  for (size_t i = 0; i < n; ++i) {
    steps[i].wall_us = ticks > 0 ? steps[i].wall_us * (total_us / ticks) : total_us / n;
  }
}

// Keeps what Unmap/Release said about in-flight work in the compiled step.
VMM_HOT void KeepSync(const SyncNote& note, HotVmmStep& s) {
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
  VMM_HOT static Status Call(HotVmmStep& s, RunState& state) {
    DevicePtr va = 0;
    if (s.alloc >= 0) s.offset += state.last_va[s.alloc];  // {at: B} or {after: B}
    Status status = state.vmm_engine.Reserve(s.size, s.aux, s.offset, &va);
    if (status.ok()) {
      state.buffer_va[s.buffer] = state.last_va[s.buffer] = s.result = va;
      s.hint_honoured = s.offset != 0 && va == s.offset;
    }
    return status;
  }
  static void Record(const PlanStep& step, const HotVmmStep& done, bool ok, RunState& state,
                     StepRecord& record) {
    if (!ok) return;
    if (!step.in_thread) state.step_address[step.index] = done.result;  // check_address: top level
    record.addresses.emplace_back("va", Hex(done.result));
    record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
    if (done.offset == 0) return;  // no hint
    record.addresses.emplace_back("hint", Hex(done.offset));
    record.details.emplace_back("hint_honoured", done.hint_honoured);
    if (step.expect != Expectation::kHonoured && step.expect != Expectation::kMoved) return;
    report::CheckRecord check;
    check.expected = step.expect == Expectation::kHonoured ? "honoured" : "moved";
    check.actual = done.hint_honoured ? "honoured" : "moved";
    check.verdict =
        check.expected == check.actual ? report::Verdict::kPass : report::Verdict::kFail;
    record.check = std::move(check);
  }
};

template <>
struct MemoryOp<Op::kFree> {
  VMM_HOT static Status Call(HotVmmStep& s, RunState& state) {
    DevicePtr va = state.buffer_va[s.buffer];
    if (va == 0) va = state.last_va[s.buffer];  // a second free (expect_error): the same range
    Status status = state.vmm_engine.Free(va, s.size);
    if (status.ok()) state.buffer_va[s.buffer] = 0;
    return status;
  }
  static void Record(const PlanStep&, const HotVmmStep&, bool, RunState&, StepRecord&) {}
};

// A create with properties checks its size against the granularity it names and reads back what
// the driver granted, in its burst (the record is built later, when the handle may be gone).
// `props` is spec.props with a device location resolved to the engine's ordinal.
Status CreateWithSpec(const AllocSpec& spec, const AllocProps& props, int slot, RunState& state,
                      AllocHandle* handle) {
  if (spec.granularity) {
    uint64_t g = 0;
    VMM_RETURN_IF_ERROR(state.engine.Granularity(props, *spec.granularity, &g));
    state.granularity[slot] = g;
    if (g == 0 || spec.props.size % g != 0) {
      return RuntimeError(std::string("cuMemGetAllocationGranularity: the ") +
                          GranularityKindName(*spec.granularity) + " granularity for " +
                          MemLocationName(spec.props.location) + " memory is " + FormatBytes(g) +
                          "; size " + FormatBytes(spec.props.size) + " is not a multiple of it");
    }
  }
  VMM_RETURN_IF_ERROR(state.vmm_engine.Create(props, handle));
  if (!spec.read_back) return Status::Ok();
  AllocProps granted;
  VMM_RETURN_IF_ERROR(state.engine.AllocProperties(*handle, &granted));
  state.granted[slot] = granted;
  return Status::Ok();
}

}  // namespace

void AddGrantedDetails(const AllocProps& g, StepRecord& record) {
  record.details.emplace_back("granted_location", std::string(MemLocationName(g.location)));
  if (g.location == MemLocation::kHostNuma)
    record.details.emplace_back("granted_numa_node", static_cast<int64_t>(g.location_id));
  record.details.emplace_back("granted_compression", g.compression);
  record.details.emplace_back("granted_gpudirect_rdma", g.gpudirect_rdma);
  record.details.emplace_back("granted_handle_types", Hex(g.handle_types));
}

namespace {

template <>
struct MemoryOp<Op::kCreate> {
  VMM_HOT static Status Call(HotVmmStep& s, RunState& state) {
    AllocHandle handle;
    const AllocSpec& spec = state.plan.alloc_specs[s.alloc];
    Status status;
    if (s.aux == 0 || spec.props.location != MemLocation::kDevice) {
      // The scenario's device 0 is the engine's own (location_id -1); host RAM names no device.
      status = spec.read_back ? CreateWithSpec(spec, spec.props, s.alloc, state, &handle)
                              : state.vmm_engine.Create(spec.props, &handle);
    } else {
      AllocProps props = spec.props;
      props.location_id = state.device_ordinal[s.aux];
      status = spec.read_back ? CreateWithSpec(spec, props, s.alloc, state, &handle)
                              : state.vmm_engine.Create(props, &handle);
    }
    if (status.ok()) {
      state.allocs[s.alloc] = handle;
      s.result = handle.value;
    }
    return status;
  }
  static void Record(const PlanStep& step, const HotVmmStep& done, bool ok, RunState& state,
                     StepRecord& record) {
    if (!ok) return;
    record.addresses.emplace_back("handle", Hex(done.result));
    record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
    if (done.bare) return;
    if (state.plan.devices > 1) record.details.emplace_back("device", int64_t{step.device});
    const AllocSpec& spec = state.plan.alloc_specs[step.alloc];
    if (spec.read_back) {
      record.details.emplace_back("location", std::string(MemLocationName(spec.props.location)));
    }
    if (state.granularity[step.alloc] != 0) {
      record.details.emplace_back("granularity_bytes",
                                  static_cast<int64_t>(state.granularity[step.alloc]));
    }
    if (state.granted[step.alloc]) AddGrantedDetails(*state.granted[step.alloc], record);
  }
};

template <>
struct MemoryOp<Op::kRelease> {
  VMM_HOT static Status Call(HotVmmStep& s, RunState& state) {
    SyncNote note;
    note.wait = s.wait;
    Status status = state.vmm_engine.Release(state.allocs[s.alloc], &note);
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
  VMM_HOT static Status Call(HotVmmStep& s, RunState& state) {
    s.result = state.buffer_va[s.buffer] + s.offset;
    return state.vmm_engine.Map(s.result, s.size, s.aux, state.allocs[s.alloc]);
  }
  static void Record(const PlanStep& step, const HotVmmStep& done, bool ok, RunState& state,
                     StepRecord& record) {
    if (!ok) return;
    if (!step.in_thread) state.step_address[step.index] = done.result;  // check_address: top level
    record.addresses.emplace_back("va", Hex(done.result));
    record.details.reserve(3);
    record.details.emplace_back("offset_bytes", static_cast<int64_t>(step.offset));
    record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
    record.details.emplace_back("alloc_offset_bytes", static_cast<int64_t>(step.alloc_offset));
  }
};

template <>
struct MemoryOp<Op::kSetAccess> {
  VMM_HOT static Status Call(HotVmmStep& s, RunState& state) {
    const DevicePtr va = state.buffer_va[s.buffer] + s.offset;
    SyncNote note;
    note.wait = s.wait;
    DeviceAccess list[kMaxScenarioDevices];
    size_t n = 0;
    if (s.aux == PackAccess(0, 0, s.access)) {  // device 0 alone: one entry, the engine's device
      list[n++] = DeviceAccess{-1, s.access};
    } else {  // several devices: one cuMemSetAccess with one descriptor each
      ForEachPackedAccess(s.aux, [&](int device, Access access) {
        list[n++] = DeviceAccess{state.device_ordinal[device], access};
      });
    }
    Status status =
        state.vmm_engine.SetAccess(va, s.size, std::span<const DeviceAccess>(list, n), &note);
    KeepSync(note, s);
    return status;
  }
  static void Record(const PlanStep& step, const HotVmmStep& done, bool ok, RunState&,
                     StepRecord& record) {
    record.details.reserve(4);
    record.details.emplace_back("access", AccessText(step));
    record.details.emplace_back("size_bytes", static_cast<int64_t>(step.size));
    if (ok) AddSync(done, record);
  }
  // "read_write" (the one-word form), or "0: read_write, 1: read" (a per-device list).
  static std::string AccessText(const PlanStep& step) {
    if (!step.access_per_device) return AccessName(step.access);
    std::string text;
    ForEachPackedAccess(step.device_access, [&](int device, Access access) {
      text += (text.empty() ? "" : ", ") + std::to_string(device) + ": " + AccessName(access);
    });
    return text;
  }
};

template <>
struct MemoryOp<Op::kUnmap> {
  VMM_HOT static Status Call(HotVmmStep& s, RunState& state) {
    SyncNote note;
    note.wait = s.wait;
    Status status = state.vmm_engine.Unmap(state.buffer_va[s.buffer] + s.offset, s.size, &note);
    KeepSync(note, s);
    return status;
  }
  static void Record(const PlanStep&, const HotVmmStep& done, bool ok, RunState&,
                     StepRecord& record) {
    if (ok) AddSync(done, record);
  }
};

template <>
struct MemoryOp<Op::kExport> {
  static Status Call(HotVmmStep& s, RunState& state) {
    int fd = -1;
    Status status = state.engine.Export(state.allocs[s.alloc], &fd);
    if (status.ok()) {
      state.shared_handles[state.plan.handles[s.aux]] = UniqueFd(fd);
      s.result = static_cast<uint64_t>(fd);
    }
    return status;
  }
  static void Record(const PlanStep&, const HotVmmStep& done, bool ok, RunState&,
                     StepRecord& record) {
    if (ok) record.details.emplace_back("fd", static_cast<int64_t>(done.result));
  }
};

template <>
struct MemoryOp<Op::kImport> {
  static Status Call(HotVmmStep& s, RunState& state) {
    const std::string& name = state.plan.handles[s.aux];
    auto it = state.shared_handles.find(name);
    if (it == state.shared_handles.end()) {
      return InternalError("import: handle '" + name + "' was never exported in this run");
    }
    AllocHandle handle;
    Status status = state.engine.Import(it->second.get(), &handle);
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

void CompileVmmStep(const PlanStep& step, const Plan& plan, HotVmmStep* out) {
  HotVmmStep& s = *new (out) HotVmmStep{};  // `out` may be raw storage (a burst's buffer)
  s.op = step.op;
  s.access = step.access;
  s.buffer = step.buffer;
  s.alloc = step.alloc;
  s.size = step.size;
  s.offset = step.offset;
  s.wait = step.wait;
  if (step.op == Op::kReserve) {
    s.aux = step.alignment;
    s.alloc = step.other;  // the hint's buffer, see HotVmmStep
  } else if (step.op == Op::kCreate) {
    s.aux = static_cast<uint64_t>(step.device);
    const AllocSpec& spec = plan.alloc_specs[step.alloc];
    s.bare = plan.devices <= 1 && !spec.read_back && !spec.granularity;
  } else if (step.op == Op::kSetAccess) {
    // A plan always packs the list; a hand-made step with none means device 0.
    s.aux = step.device_access != 0 ? step.device_access : PackAccess(0, 0, step.access);
  } else if (step.op == Op::kExport || step.op == Op::kImport) {
    s.aux = static_cast<uint64_t>(step.handle);
  } else {
    s.aux = step.alloc_offset;
  }
}

VMM_HOT size_t RunVmmSteps(HotVmmStep* steps, size_t count, RunState& state, Status* error,
                           BurstProgress* progress) {
  // Between two calls only the time-stamp counter is read (about half a steady_clock read through a
  // VM's vDSO); every kTimeChunk steps steady_clock is read and the chunk's time shared out in
  // proportion to each step's ticks, so the steps' wall_us add up to the burst's real time
  // whatever the counter's rate. A chunk's steps are final then, and published to `progress`.
  // `count` grows when a recorder compiles ahead: at step `count` the loop asks how far it got.
  constexpr size_t kTimeChunk = 32;
  // Nothing but the engine's memory calls runs on this thread until the loop ends.
  struct ContextHold {
    Engine& engine;
    explicit ContextHold(Engine& e) : engine(e) { engine.HoldContext(true); }
    ~ContextHold() { engine.HoldContext(false); }
  } hold(state.engine);
  Clock::time_point chunk_start = Clock::now();
  size_t chunk_first = 0;
  uint64_t last = ReadTicks();
  size_t i = 0;
  bool failed = false;
  for (;; ++i) {
    if (i == count && (progress == nullptr || (count = progress->AwaitCompiled(i)) == i)) break;
    Status status = kCalls[static_cast<size_t>(steps[i].op)](steps[i], state);
    const uint64_t now = ReadTicks();
    // Ticks until scaled below; 0 if the thread moved to a core whose counter is behind.
    steps[i].wall_us = now > last ? static_cast<double>(now - last) : 0.0;
    last = now;
    if (!status.ok()) {
      *error = std::move(status);
      failed = true;
      break;
    }
    if (i + 1 - chunk_first == kTimeChunk) {
      const Clock::time_point chunk_end = Clock::now();
      ShareOutTime(steps + chunk_first, kTimeChunk, Micros(chunk_start, chunk_end));
      chunk_start = chunk_end;
      chunk_first = i + 1;
      if (progress != nullptr) progress->Publish(chunk_first);
    }
  }
  const size_t timed = failed ? i + 1 : i;  // the failed step has its time too
  if (timed > chunk_first) {
    ShareOutTime(steps + chunk_first, timed - chunk_first, Micros(chunk_start, Clock::now()));
  }
  return i;
}

void RecordVmmStep(const PlanStep& step, const HotVmmStep& done, bool ok, RunState& state,
                   StepRecord& record) {
  record.wall_us = done.wall_us;
  kRecords[static_cast<size_t>(step.op)](step, done, ok, state, record);
}

Status RunVmmStep(const PlanStep& step, RunState& state, StepRecord& record) {
  HotVmmStep s;
  CompileVmmStep(step, state.plan, &s);
  Status status;
  RunVmmSteps(&s, 1, state, &status);
  RecordVmmStep(step, s, status.ok(), state, record);
  return status;
}

Status RunUndoSteps(const std::vector<PlanStep>& steps, RunState& state) {
  for (const PlanStep& step : steps) {
    HotVmmStep s;
    CompileVmmStep(step, state.plan, &s);
    Status status;
    if (RunVmmSteps(&s, 1, state, &status) < 1)
      return status.WithContext(std::string("undoing it with ") + OpName(step.op));
  }
  return Status::Ok();
}

// The memory ops run through RunVmmStep when they run alone (repeat, or with an observer).
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
VMM_MEMORY_RUN(kExport)
VMM_MEMORY_RUN(kImport)
#undef VMM_MEMORY_RUN

}  // namespace vmm
