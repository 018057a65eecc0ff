// snapshot and copy: data moved where the engine keeps it. A snapshot is storage the engine owns
// (device memory unless the step says `to: host`) plus the datagen hash of what it holds, computed
// on the device; the executor never holds a copy of the data itself.
#include "runner/base/format.h"
#include "runner/base/stopwatch.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"

namespace vmm {
namespace {

using report::StepRecord;

// "device_to_device", "host_to_device", "device_to_host" or "host_to_host".
std::string Direction(DataRef dst, DataRef src) {
  return std::string(IsHostPlace(src.place) ? "host" : "device") + "_to_" +
         (IsHostPlace(dst.place) ? "host" : "device");
}

// The facts every transfer records: its size, its rate when it was timed, and for a host side
// whether the host memory is pinned or pageable (what decides the PCIe rate).
void RecordTransfer(DataRef dst, DataRef src, uint64_t bytes, const OpTiming& timing,
                    StepRecord& record) {
  record.details.emplace_back("direction", Direction(dst, src));
  const DataPlace host = IsHostPlace(src.place) ? src.place : dst.place;
  if (IsHostPlace(host)) {
    record.details.emplace_back(
        "staging", std::string(host == DataPlace::kHostPinned ? "pinned" : "pageable"));
  }
  record.details.emplace_back("bytes", static_cast<int64_t>(bytes));
  if (timing.gpu_us > 0) {
    record.gpu_us = timing.gpu_us;
    record.details.emplace_back("gb_per_s", static_cast<double>(bytes) / (timing.gpu_us * 1e3));
  }
}

// "0", "0,1": the devices whose bits are set in the low 32 bits of `bits`; "" for none.
std::string DeviceList(uint64_t bits) {
  std::string list;
  for (int d = 0; d < 32; ++d)
    if ((bits >> d) & 1) list += (list.empty() ? "" : ",") + std::to_string(d);
  return list;
}

// The bytes a copy moves: its source's (the plan proved both sides equal).
uint64_t CopyBytes(const Plan& plan, const PlanStep& step) {
  return step.other >= 0 ? plan.buffers[step.other].bytes : plan.snapshot_bytes[step.snapshot];
}

}  // namespace

template <>
Status RunStep<Op::kCopy>(const PlanStep& step, RunState& state, StepRecord& record) {
  auto side = [&](int buffer, int snapshot) {
    return buffer >= 0 ? DataRef::Device(DataVa(state, buffer))
                       : DataRef::Of(state.snapshots[snapshot]->storage);
  };
  const DataRef src = side(step.other, step.snapshot);
  const DataRef dst = side(step.buffer, step.to_snapshot);
  const uint64_t bytes = CopyBytes(state.plan, step);
  OpTiming timing;
  Stopwatch watch;
  Status status = state.engine.Copy(dst, src, bytes, step.async ? nullptr : &timing);
  if (status.ok() && step.to_snapshot >= 0) {
    // The snapshot now holds the source's words: its hash is the source's (a buffer's is computed
    // on the device after the copy, in stream order).
    Snapshot& to = *state.snapshots[step.to_snapshot];
    if (step.snapshot >= 0) {
      to.hash = state.snapshots[step.snapshot]->hash;
    } else {
      status = state.engine.Checksum(src.addr, bytes / 4, &to.hash);
    }
    if (status.ok()) record.details.emplace_back("data_hash", Hex(to.hash));
  }
  record.wall_us = watch.ElapsedUs();
  RecordTransfer(dst, src, bytes, timing, record);
  if (step.async) record.details.emplace_back("async", true);
  if (state.plan.devices > 1) {
    // Which devices run the copy and hold each side's memory (a buffer's: a snapshot has none
    // here): a peer copy crosses devices.
    const uint64_t from = step.memory_devices & 0xffffffffu, to = step.memory_devices >> 32;
    record.details.emplace_back("device", int64_t{step.device});
    record.details.emplace_back("from_memory_devices", DeviceList(from));
    record.details.emplace_back("to_memory_devices", DeviceList(to));
    // Peer: some of the memory lives on another device than the one running the copy.
    record.details.emplace_back("peer", ((from | to) & ~(uint64_t{1} << step.device)) != 0);
  }
  return status;
}

template <>
std::string DescribeStep<Op::kCopy>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  auto name = [&](int buffer, int snapshot) {
    return buffer >= 0 ? plan.buffers[buffer].name : plan.snapshots[snapshot];
  };
  const std::string rate = DetailText(r, "gb_per_s");
  const std::string staging = DetailText(r, "staging");
  const std::string where = plan.devices <= 1
                                ? ""
                                : " · on device " + std::to_string(step.device) +
                                      (DetailText(r, "peer") == "true" ? " (peer)" : "");
  return name(step.buffer, step.to_snapshot) + " ← " + name(step.other, step.snapshot) + " · " +
         FormatBytes(CopyBytes(plan, step)) + " " + DetailText(r, "direction") +
         (staging.empty() ? "" : " (" + staging + ")") + where +
         (rate.empty() ? "" : " · " + rate + " GB/s");
}

template <>
Status RunStep<Op::kSnapshot>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] {
    const PlanBuffer& buffer = state.plan.buffers[step.buffer];
    const DevicePtr va = DataVa(state, step.buffer);
    Snapshot snap;
    VMM_RETURN_IF_ERROR(state.engine.AllocSnapshot(buffer.bytes, step.place, &snap.storage));
    OpTiming timing;
    const DataRef dst = DataRef::Of(snap.storage);
    VMM_RETURN_IF_ERROR(state.engine.CopyHashed(dst, va, buffer.elements, &timing, &snap.hash));
    record.details.emplace_back("elements", static_cast<int64_t>(buffer.elements));
    record.details.emplace_back("data_hash", Hex(snap.hash));
    record.details.emplace_back("to", std::string(IsHostPlace(step.place) ? "host" : "device"));
    RecordTransfer(dst, DataRef::Device(va), buffer.bytes, timing, record);
    state.snapshots[step.snapshot] = std::move(snap);
    return Status::Ok();
  });
}

template <>
std::string DescribeStep<Op::kSnapshot>(const Plan& plan, const PlanStep& step,
                                        const StepRecord& r) {
  const std::string staging = DetailText(r, "staging");
  return plan.buffers[step.buffer].name + " → " + plan.snapshots[step.snapshot] + " (" +
         DetailText(r, "to") + (staging.empty() ? "" : ", " + staging) + ") · hash " +
         DetailText(r, "data_hash");
}

}  // namespace vmm
