// Steps with expect_error: the call must fail with exactly the named CUDA error and leave the
// scenario's state as it was.
//
// The proof that nothing changed, taken before and after the call:
//   - the engine's inventory (engine.h EngineInventory: every reservation, allocation and mapping
//     with its access; on CUDA the access is read back from the driver) must be equal;
//   - every byte the call could have touched that is mapped with read access (the intersection of
//     the step's range with the mappings; for release, the mappings of its allocation; for a
//     kernel or copy, its destination) is checksummed on the device, and the sums must be equal.
// Both are cheap next to the driver calls (one checksum kernel per mapping touched).
#include <algorithm>
#include <string>
#include <vector>

#include "runner/base/format.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"
#include "runner/vocab/cuda_errors.h"
#include "runner/vocab/vmm_rules.h"

namespace vmm {
namespace {

using report::StepRecord;

struct Span {
  DevicePtr va = 0;
  uint64_t bytes = 0;
};

// The bytes `step` names in the engine's address space (empty when it names none).
std::vector<Span> StepRanges(const PlanStep& step, const RunState& state) {
  std::vector<Span> out;
  switch (Describe(step.op).family) {
    case OpFamily::kMemory:
      if (step.buffer >= 0 && (step.op == Op::kMap || step.op == Op::kSetAccess ||
                               step.op == Op::kUnmap || step.op == Op::kFree)) {
        DevicePtr base = state.buffer_va[step.buffer];
        if (base == 0) base = state.last_va[step.buffer];  // a second free
        out.push_back({base + step.offset, step.size});
      }
      break;
    case OpFamily::kKernel:
    case OpFamily::kData:
      for (int slot : {step.buffer, step.c}) {
        if (slot >= 0) out.push_back({DataVa(state, slot), state.plan.buffers[slot].bytes});
      }
      break;
    case OpFamily::kGraph:
    case OpFamily::kCheck:
    case OpFamily::kQuery:
    case OpFamily::kWait:
    case OpFamily::kBlock:  // an isolate block calls no driver itself: never expect_error
      break;
  }
  return out;
}

// The ordinal of the device selected now (Checksum runs there).
int SelectedOrdinal(const RunState& state) {
  const int ordinal = state.device_ordinal[state.current_device];
  return ordinal < 0 ? state.engine.info().ordinal : ordinal;
}

// The pieces of mapped memory, readable by the selected device, that the call could change.
std::vector<Span> TouchedPieces(const PlanStep& step, const RunState& state,
                                const EngineInventory& inventory) {
  std::vector<Span> pieces;
  const size_t device = static_cast<size_t>(SelectedOrdinal(state));
  const bool release = step.op == Op::kRelease && step.alloc >= 0;
  const uint64_t handle = release ? state.allocs[step.alloc].value : 0;
  const std::vector<Span> ranges = StepRanges(step, state);
  for (const EngineInventory::Mapping& m : inventory.mappings) {
    if (!m.access_known || device >= m.access.size() || m.access[device] == Access::kNone) continue;
    if (release && m.handle == handle) pieces.push_back({m.va, m.size});
    for (const Span& r : ranges) {
      const DevicePtr begin = std::max(r.va, m.va);
      const DevicePtr end = std::min(r.va + r.bytes, m.va + m.size);
      if (begin < end) pieces.push_back({begin, end - begin});
    }
  }
  return pieces;
}

Status Checksums(const std::vector<Span>& pieces, Engine& engine, std::vector<uint64_t>* out) {
  out->clear();
  for (const Span& piece : pieces) {
    uint64_t hash = 0;
    VMM_RETURN_IF_ERROR(engine.Checksum(piece.va, piece.bytes / 4, &hash));
    out->push_back(hash);
  }
  return Status::Ok();
}

template <typename T, typename Same>
std::string CountChange(const char* what, const std::vector<T>& before, const std::vector<T>& after,
                        Same same) {
  if (before.size() != after.size()) {
    return std::string(what) + " " + std::to_string(before.size()) + " → " +
           std::to_string(after.size());
  }
  for (size_t i = 0; i < before.size(); ++i) {
    if (!same(before[i], after[i]))
      return std::string(what) + " #" + std::to_string(i) + " changed";
  }
  return "";
}

// "" when equal, else the first difference, for people.
std::string InventoryChange(const EngineInventory& before, const EngineInventory& after) {
  std::string change = CountChange("reservations", before.reservations, after.reservations,
                                   [](const auto& x, const auto& y) { return x == y; });
  if (change.empty()) {
    change = CountChange("allocations", before.allocations, after.allocations,
                         [](const auto& x, const auto& y) { return x == y; });
  }
  if (!change.empty()) return change;
  if (before.mappings.size() != after.mappings.size()) {
    return "mappings " + std::to_string(before.mappings.size()) + " → " +
           std::to_string(after.mappings.size());
  }
  for (size_t i = 0; i < before.mappings.size(); ++i) {
    const EngineInventory::Mapping& b = before.mappings[i];
    const EngineInventory::Mapping& a = after.mappings[i];
    if (b == a) continue;
    std::string text = "the mapping at " + Hex(b.va);
    if (b.access != a.access || b.access_known != a.access_known) {
      for (size_t d = 0; d < b.access.size() && d < a.access.size(); ++d) {
        if (b.access[d] != a.access[d]) {
          return text + " changed access for device " + std::to_string(d) + ": " +
                 AccessName(b.access[d]) + " → " + AccessName(a.access[d]);
        }
      }
      return text + " changed access (read back " +
             (a.access_known ? std::string("for every device") : "not for every device") + ")";
    }
    return text + " changed (" + FormatBytes(b.size) + " of handle " + Hex(b.handle) + " → " +
           FormatBytes(a.size) + " at " + Hex(a.va) + " of handle " + Hex(a.handle) + ")";
  }
  return "";
}

// Proves that `step` left the engine as `before` and `pieces`/`sums` describe it; records the
// proof's extent in `record`. An error Status says what changed (or that the proof failed).
Status ProveUnchanged(const EngineInventory& before, const std::vector<Span>& pieces,
                      const std::vector<uint64_t>& sums, RunState& state, StepRecord& record) {
  EngineInventory after;
  VMM_RETURN_IF_ERROR(state.engine.Inventory(&after).WithContext("reading the state back"));
  if (std::string change = InventoryChange(before, after); !change.empty()) {
    return RuntimeError("the call failed as expected, but the state changed: " + change);
  }
  std::vector<uint64_t> now;
  VMM_RETURN_IF_ERROR(Checksums(pieces, state.engine, &now).WithContext("checksumming again"));
  uint64_t bytes = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (now[i] != sums[i]) {
      return RuntimeError("the call failed as expected, but the data at " + Hex(pieces[i].va) +
                          " (" + FormatBytes(pieces[i].bytes) + ") changed");
    }
    bytes += pieces[i].bytes;
  }
  record.details.emplace_back("state_unchanged", true);
  record.details.emplace_back("mappings_compared", static_cast<int64_t>(after.mappings.size()));
  record.details.emplace_back("bytes_checksummed", static_cast<int64_t>(bytes));
  return Status::Ok();
}

// expect_error: observe. The check records what the call returned and passes; the run goes on
// only where the plan's assumption holds: a legal call succeeded (the steps after it use what it
// made), or a call that breaks a rule changed nothing (proved as for an expected error).
Status Observed(const PlanStep& step, const Status& call, bool provable,
                const EngineInventory& before, const std::vector<Span>& pieces,
                const std::vector<uint64_t>& sums, RunState& state, StepRecord& record) {
  report::CheckRecord& check = *record.check;
  check.verdict = report::Verdict::kPass;
  if (!call.ok()) record.details.emplace_back("driver_message", call.message());
  const std::string& actual = record.actual_error;
  if (step.broken_rule == nullptr) {
    if (call.ok()) return Status::Ok();
    return RuntimeError("observed " + actual +
                        "; the plan assumed this legal call succeeds and the steps after it use "
                        "what it makes, so the run stops here (`vmm-run pin REPORT` writes "
                        "expect_error: " +
                        actual + " into the scenario)");
  }
  if (!provable) return Status::Ok();
  return ProveUnchanged(before, pieces, sums, state, record)
      .WithContext("observed " + actual + ", which the plan assumed changes nothing");
}

}  // namespace

Status RunExpectingError(const PlanStep& step, RunState& state, StepRecord& record) {
  // On the step's device from the start: the checksums before and after the call run there.
  VMM_RETURN_IF_ERROR(SelectStepDevice(step, state));
  // checkpoint / restore act on the whole process, whose memory cannot be read around them (a
  // checkpointed process's CUDA calls block): their record's process_state is the proof.
  // The same holds for any step while the process is checkpointed (hold_memory, return_memory).
  const bool provable = !Describe(step.op).has(kWholeProcess) && !state.engine.Checkpointed();
  EngineInventory before;
  std::vector<Span> pieces;
  std::vector<uint64_t> sums;
  if (provable) {
    VMM_RETURN_IF_ERROR(state.engine.Inventory(&before).WithContext(
        "expect_error: reading the state before the call"));
    pieces = TouchedPieces(step, state, before);
    VMM_RETURN_IF_ERROR(
        Checksums(pieces, state.engine, &sums).WithContext("expect_error: checksumming before"));
  }

  // A blocks_only row (an isolate block's child): the driver gets the freed handle as it is.
  if (step.broken_rule != nullptr && step.broken_rule->blocks_only)
    VMM_RETURN_IF_ERROR(state.engine.AllowReleasedHandle());
  const Status call = Dispatch(step, state, record);
  const std::string expected = step.expect_error;
  const std::string actual = call.ok()                      ? "CUDA_SUCCESS"
                             : call.cuda_error() != nullptr ? call.cuda_error()
                                                            : "none";
  record.expected_error = expected;
  record.actual_error = actual;
  record.check = report::CheckRecord{expected, actual, report::Verdict::kFail, 0, {}};
  report::CheckRecord& check = *record.check;
  if (step.broken_rule != nullptr) {
    record.details.emplace_back("rule", std::string(step.broken_rule->id));
  }
  if (expected == kObserveError)
    return Observed(step, call, provable, before, pieces, sums, state, record);
  if (call.ok()) {
    // The plan assumed the call changes nothing; it may have: nothing after it can be trusted.
    return RuntimeError("expected " + expected +
                        ", the call succeeded (the plan assumed it would change nothing, so the "
                        "run stops here)");
  }
  record.details.emplace_back("driver_message", call.message());
  if (actual != expected) {
    return RuntimeError("expected " + expected + ", driver returned " + actual + ": " +
                        call.message());
  }
  if (provable) VMM_RETURN_IF_ERROR(ProveUnchanged(before, pieces, sums, state, record));
  check.verdict = report::Verdict::kPass;
  return Status::Ok();
}

std::string DescribeExpectedError(const StepRecord& record) {
  if (record.status == report::StepStatus::kFailed) return "FAILED: " + record.error;
  std::string text = record.expected_error == kObserveError
                         ? "observed " + record.actual_error
                         : "refused with " + record.actual_error + ", as expected";
  const std::string bytes = record.details.empty() ? "" : DetailText(record, "bytes_checksummed");
  if (!bytes.empty()) {
    const std::string mappings = DetailText(record, "mappings_compared");
    text += " · state unchanged (" + mappings + (mappings == "1" ? " mapping, " : " mappings, ") +
            FormatBytes(std::stoull(bytes)) + " checksummed)";
  }
  return text;
}

}  // namespace vmm
