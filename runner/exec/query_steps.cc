// The queries: retain, check_properties, check_range, check_granularity, mark, check_memory. Each
// asks the engine one question (a driver query), records the raw answer as details (device facts,
// not compared by `vmm-run diff`) and, for the checks, judges it against the plan's PlanQuery into
// a verdict whose `expected` text comes from the scenario alone (stable across backends).
#include <string>

#include "runner/base/format.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"

namespace vmm {
namespace {

using report::CheckRecord;
using report::StepRecord;
using report::Verdict;

void SetCheck(std::string expected, std::string actual, bool pass, StepRecord& record) {
  CheckRecord check;
  check.expected = std::move(expected);
  check.actual = std::move(actual);
  check.verdict = pass ? Verdict::kPass : Verdict::kFail;
  record.check = std::move(check);
}

// "4 MiB", "-2 MiB": a signed byte count.
std::string SignedBytes(int64_t v) {
  return v < 0 ? "-" + FormatBytes(static_cast<uint64_t>(-v))
               : FormatBytes(static_cast<uint64_t>(v));
}

std::string Join(const std::string& a, const std::string& b) {
  return a.empty() ? b : a + ", " + b;
}

Status Retain(const PlanStep& step, RunState& state, StepRecord& record) {
  const DevicePtr va = DataVa(state, step.buffer) + step.offset;
  AllocHandle handle;
  VMM_RETURN_IF_ERROR(state.engine.Retain(va, &handle));
  state.allocs[step.alloc] = handle;
  record.addresses.emplace_back("va", Hex(va));
  record.addresses.emplace_back("handle", Hex(handle.value));
  record.details.emplace_back("size_bytes",
                              static_cast<int64_t>(state.plan.alloc_sizes[step.alloc]));
  const int same_as = step.query->same_as;
  if (same_as < 0) return Status::Ok();
  bool same = false;
  VMM_RETURN_IF_ERROR(state.engine.SameAllocation(handle, state.allocs[same_as], &same));
  const std::string other = state.plan.allocs[same_as];
  SetCheck("same as " + other, same ? "same as " + other : "not " + other, same, record);
  return Status::Ok();
}

Status CheckProperties(const PlanStep& step, RunState& state, StepRecord& record) {
  AllocProps granted;
  VMM_RETURN_IF_ERROR(state.engine.AllocProperties(state.allocs[step.alloc], &granted));
  AddGrantedDetails(granted, record);
  const PlanQuery& q = *step.query;
  std::string expected, actual;
  bool pass = true;
  auto compare = [&](uint32_t bit, const char* key, const std::string& want,
                     const std::string& got) {
    if ((q.asserted & bit) == 0) return;
    expected = Join(expected, std::string(key) + " " + want);
    actual = Join(actual, std::string(key) + " " + got);
    pass = pass && want == got;
  };
  auto yes = [](bool b) { return std::string(b ? "true" : "false"); };
  compare(kCheckLocation, "location", MemLocationName(q.props.location),
          MemLocationName(granted.location));
  compare(kCheckNumaNode, "numa_node", std::to_string(q.props.location_id),
          granted.location == MemLocation::kHostNuma ? std::to_string(granted.location_id)
                                                     : std::string("none"));
  compare(kCheckCompression, "compression", yes(q.props.compression), yes(granted.compression));
  compare(kCheckGpuDirectRdma, "gpudirect_rdma", yes(q.props.gpudirect_rdma),
          yes(granted.gpudirect_rdma));
  // The device the memory lives on, by the scenario's numbering ("none" for host memory).
  std::string on = "none";
  if (granted.location == MemLocation::kDevice) {
    on = "ordinal " + std::to_string(granted.location_id);  // not a device of the scenario
    for (int d = 0; d < state.plan.devices; ++d) {
      const int ordinal = d == 0 ? state.engine.info().ordinal : state.device_ordinal[d];
      if (ordinal == granted.location_id) on = std::to_string(d);
    }
  }
  compare(kCheckDevice, "device", std::to_string(q.device), on);
  SetCheck(expected, actual, pass, record);
  return Status::Ok();
}

Status CheckRange(const PlanStep& step, RunState& state, StepRecord& record) {
  const DevicePtr va = DataVa(state, step.buffer) + step.offset;
  DevicePtr base = 0;
  uint64_t size = 0;
  VMM_RETURN_IF_ERROR(state.engine.AddressRange(va, &base, &size));
  record.addresses.emplace_back("va", Hex(va));
  record.addresses.emplace_back("base", Hex(base));
  record.details.emplace_back("range_size_bytes", static_cast<int64_t>(size));
  const PlanQuery& q = *step.query;
  std::string expected, actual;
  bool pass = true;
  if (q.base >= 0) {
    const std::string name = state.plan.buffers[q.base].name;
    const DevicePtr want = DataVa(state, q.base) + q.base_offset;
    const int64_t off = static_cast<int64_t>(base - DataVa(state, q.base));
    expected = "base " + name + (q.base_offset != 0 ? " + " + FormatBytes(q.base_offset) : "");
    actual = "base " + name + (off != 0 ? (off > 0 ? " + " : " ") + SignedBytes(off) : "");
    record.details.emplace_back("base_offset_bytes", off);
    pass = base == want;
  }
  for (const Bound& b : q.bounds) {
    expected = Join(expected, b.Text());
    actual = Join(actual, b.quantity + " " + FormatBytes(size));
    pass = b.Holds(static_cast<int64_t>(size)) && pass;
  }
  SetCheck(expected, actual, pass, record);
  return Status::Ok();
}

Status CheckGranularity(const PlanStep& step, RunState& state, StepRecord& record) {
  const PlanQuery& q = *step.query;
  uint64_t minimum = 0, recommended = 0;
  VMM_RETURN_IF_ERROR(state.engine.Granularity(q.props, GranularityKind::kMinimum, &minimum));
  VMM_RETURN_IF_ERROR(
      state.engine.Granularity(q.props, GranularityKind::kRecommended, &recommended));
  record.details.emplace_back("location", std::string(MemLocationName(q.props.location)));
  record.details.emplace_back("minimum_bytes", static_cast<int64_t>(minimum));
  record.details.emplace_back("recommended_bytes", static_cast<int64_t>(recommended));
  std::string expected, actual;
  bool pass = true;
  for (const Bound& b : q.bounds) {
    const uint64_t got = b.quantity == "minimum" ? minimum : recommended;
    expected = Join(expected, b.Text());
    actual = Join(actual, b.quantity + " " + FormatBytes(got));
    pass = b.Holds(static_cast<int64_t>(got)) && pass;
  }
  SetCheck(expected, actual, pass, record);
  return Status::Ok();
}

Status Mark(const PlanStep& step, RunState& state, StepRecord& record) {
  uint64_t free = 0, total = 0;
  VMM_RETURN_IF_ERROR(state.engine.MemoryInfo(&free, &total));
  state.marks[step.query->mark] = free;
  record.details.emplace_back("free_bytes", static_cast<int64_t>(free));
  record.details.emplace_back("total_bytes", static_cast<int64_t>(total));
  record.details.emplace_back("scenario_bytes", static_cast<int64_t>(step.query->held_at_mark));
  return Status::Ok();
}

// Two subjects (docs/scenario-language.md, check_memory): `scenario` judges the bytes the
// scenario's own creates hold (the plan's count: the same on every backend), `device` judges
// cuMemGetInfo's free memory, which on a GPU also moves with the driver's own allocations (page
// tables, reservations) and other processes: its verdict is a device fact (CheckRecord::
// device_fact), which a cross-machine diff does not compare. The record has both views.
Status CheckMemory(const PlanStep& step, RunState& state, StepRecord& record) {
  uint64_t free = 0, total = 0;
  VMM_RETURN_IF_ERROR(state.engine.MemoryInfo(&free, &total));
  const PlanQuery& q = *step.query;
  const uint64_t then = state.marks[q.mark];
  const int64_t device_freed = static_cast<int64_t>(free) - static_cast<int64_t>(then);
  const int64_t scenario_freed =
      static_cast<int64_t>(q.held_at_mark) - static_cast<int64_t>(q.held_now);
  const Bound& b = q.bounds.front();
  const int64_t freed = q.device_subject ? device_freed : scenario_freed;
  const int64_t observed = b.quantity == "freed" ? freed : -freed;
  record.details.emplace_back("subject", std::string(q.device_subject ? "device" : "scenario"));
  record.details.emplace_back("free_at_mark_bytes", static_cast<int64_t>(then));
  record.details.emplace_back("free_now_bytes", static_cast<int64_t>(free));
  record.details.emplace_back("scenario_at_mark_bytes", static_cast<int64_t>(q.held_at_mark));
  record.details.emplace_back("scenario_now_bytes", static_cast<int64_t>(q.held_now));
  record.details.emplace_back(b.quantity + "_bytes", observed);
  // What the device lost beyond the scenario's own bytes since the mark (driver overhead, other
  // processes): a device fact, for people to read.
  record.details.emplace_back("device_overhead_bytes", scenario_freed - device_freed);
  SetCheck(b.Text(), b.quantity + " " + SignedBytes(observed), b.Holds(observed), record);
  if (q.device_subject) record.check->device_fact = true;
  return Status::Ok();
}

}  // namespace

#define VMM_QUERY_RUN(Enum, Function)                                                   \
  template <>                                                                           \
  Status RunStep<Op::Enum>(const PlanStep& step, RunState& state, StepRecord& record) { \
    return TimedCall(record, [&] { return Function(step, state, record); });            \
  }
VMM_QUERY_RUN(kRetain, Retain)
VMM_QUERY_RUN(kCheckProperties, CheckProperties)
VMM_QUERY_RUN(kCheckRange, CheckRange)
VMM_QUERY_RUN(kCheckGranularity, CheckGranularity)
VMM_QUERY_RUN(kMark, Mark)
VMM_QUERY_RUN(kCheckMemory, CheckMemory)
#undef VMM_QUERY_RUN

namespace {
// "PASS  <actual> (expected <expected>)" for a check, "" before one exists.
std::string CheckText(const StepRecord& r) {
  if (!r.check) return "";
  return VerdictText(r) + "  " + r.check->actual + " (expected " + r.check->expected + ")";
}
}  // namespace

template <>
std::string DescribeStep<Op::kRetain>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  const std::string text = plan.allocs[step.alloc] + " ← va " + AddressText(r, "va");
  return r.check ? CheckText(r) + " · " + text : text;
}
template <>
std::string DescribeStep<Op::kCheckProperties>(const Plan&, const PlanStep&, const StepRecord& r) {
  return CheckText(r);
}
template <>
std::string DescribeStep<Op::kCheckRange>(const Plan&, const PlanStep&, const StepRecord& r) {
  return CheckText(r);
}
template <>
std::string DescribeStep<Op::kCheckGranularity>(const Plan&, const PlanStep&, const StepRecord& r) {
  return CheckText(r);
}
template <>
std::string DescribeStep<Op::kMark>(const Plan&, const PlanStep&, const StepRecord& r) {
  const std::string free = DetailText(r, "free_bytes");
  return free.empty() ? "" : FormatBytes(std::stoull(free)) + " free";
}
template <>
std::string DescribeStep<Op::kCheckMemory>(const Plan&, const PlanStep&, const StepRecord& r) {
  return CheckText(r);
}

}  // namespace vmm
