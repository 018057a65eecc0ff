// snapshot and the check_* steps. Data is read back to the host and judged there, independently of
// the engine's kernels; the engine's device checksum is cross-checked against a host hash of the
// same bytes, so a wrong checksum kernel cannot hide.
#include <cstring>
#include <variant>

#include "kernels/datagen.h"
#include "runner/base/format.h"
#include "runner/base/stopwatch.h"
#include "runner/exec/matmul_check.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"

namespace vmm {
namespace {

using report::CheckRecord;
using report::StepRecord;
using report::Verdict;

constexpr size_t kMaxReportedMismatches = 8;

uint64_t HostHash(const std::vector<uint32_t>& words) {
  uint64_t h = 0;
  for (uint64_t i = 0; i < words.size(); ++i) h += datagen::HashWord(words[i], i);
  return h;
}

// Copies buffer `slot` to the host and hashes it on the device; fails if the hashes disagree.
Status ReadBuffer(RunState& state, int slot, std::vector<uint32_t>* words, uint64_t* hash) {
  const PlanBuffer& buffer = state.plan.buffers[slot];
  words->resize(buffer.elements);
  DevicePtr va = DataVa(state, slot);
  VMM_RETURN_IF_ERROR(state.engine.CopyToHost(va, buffer.bytes, words->data()));
  VMM_RETURN_IF_ERROR(state.engine.Checksum(va, buffer.elements, hash));
  uint64_t host = HostHash(*words);
  if (host != *hash) {
    return RuntimeError("checksum of buffer '" + buffer.name + "' computed by the backend (" +
                        Hex(*hash) + ") differs from the hash of the same bytes on the host (" +
                        Hex(host) + ")");
  }
  return Status::Ok();
}

std::string FloatBits(uint32_t w) {
  float f;
  std::memcpy(&f, &w, sizeof f);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", f);
  return buf;
}

Status CheckMatmul(const PlanStep& step, RunState& state, StepRecord& record) {
  std::vector<uint32_t> a, b, c;
  uint64_t ha = 0, hb = 0, hc = 0;
  VMM_RETURN_IF_ERROR(ReadBuffer(state, step.a, &a, &ha));
  VMM_RETURN_IF_ERROR(ReadBuffer(state, step.b, &b, &hb));
  VMM_RETURN_IF_ERROR(ReadBuffer(state, step.c, &c, &hc));
  auto as_float = [](const std::vector<uint32_t>& v) {
    return reinterpret_cast<const float*>(v.data());
  };
  MatmulVerification v = VerifyMatmul(as_float(a), as_float(b), as_float(c), step.m, step.n, step.k,
                                      kMaxReportedMismatches);
  CheckRecord check;
  check.expected = "pass";
  check.actual = v.mismatches == 0 ? "pass" : "fail";
  check.verdict = v.mismatches == 0 ? Verdict::kPass : Verdict::kFail;
  check.mismatch_count = v.mismatches;
  check.mismatches = std::move(v.first);
  record.check = std::move(check);
  record.details.emplace_back("method", v.method);
  record.details.emplace_back("elements", static_cast<int64_t>(v.elements));
  record.details.emplace_back("max_error_over_bound", v.max_error_ratio);
  record.details.emplace_back("a_hash", Hex(ha));
  record.details.emplace_back("b_hash", Hex(hb));
  record.details.emplace_back("c_hash", Hex(hc));
  return Status::Ok();
}

Status CheckEqual(const PlanStep& step, RunState& state, StepRecord& record) {
  std::vector<uint32_t> words, other_words;
  uint64_t hash = 0, other_hash = 0;
  VMM_RETURN_IF_ERROR(ReadBuffer(state, step.buffer, &words, &hash));
  const std::vector<uint32_t>* other = nullptr;
  if (step.snapshot >= 0) {
    const Snapshot& snap = *state.snapshots[step.snapshot];
    other = &snap.words;
    other_hash = snap.hash;
  } else {
    VMM_RETURN_IF_ERROR(ReadBuffer(state, step.other, &other_words, &other_hash));
    other = &other_words;
  }
  CheckRecord check;
  std::vector<report::Mismatch> first;
  for (uint64_t i = 0; i < words.size(); ++i) {
    if (words[i] == (*other)[i]) continue;
    ++check.mismatch_count;
    if (first.size() < kMaxReportedMismatches)
      first.push_back({i, FloatBits((*other)[i]), FloatBits(words[i])});
  }
  if (step.other >= 0) {
    // Two device buffers: the backend's compare kernel must agree with the host's comparison.
    CompareResult device;
    VMM_RETURN_IF_ERROR(state.engine.Compare(DataVa(state, step.buffer), DataVa(state, step.other),
                                             words.size(), kMaxReportedMismatches, &device));
    bool agree =
        device.mismatches == check.mismatch_count && device.first_indices.size() == first.size();
    for (size_t i = 0; agree && i < first.size(); ++i)
      agree = device.first_indices[i] == first[i].index;
    if (!agree) {
      return RuntimeError("the backend's compare found " + std::to_string(device.mismatches) +
                          " differing elements, the host found " +
                          std::to_string(check.mismatch_count) + " in the same bytes");
    }
    record.details.emplace_back("device_compare_agrees", true);
  }
  const bool equal = check.mismatch_count == 0;
  check.expected = step.expect == Expectation::kDifferent ? "different" : "equal";
  check.actual = equal ? "equal" : "different";
  check.verdict = check.expected == check.actual ? Verdict::kPass : Verdict::kFail;
  // Listing mismatches is only informative when equality was expected.
  if (step.expect != Expectation::kDifferent) check.mismatches = std::move(first);
  record.check = std::move(check);
  record.details.emplace_back("elements", static_cast<int64_t>(words.size()));
  record.details.emplace_back("buffer_hash", Hex(hash));
  record.details.emplace_back("other_hash", Hex(other_hash));
  return Status::Ok();
}

// Every element of the buffer holds step.pattern (or, with expect: different, at least one not).
Status CheckValue(const PlanStep& step, RunState& state, StepRecord& record) {
  std::vector<uint32_t> words;
  uint64_t hash = 0;
  VMM_RETURN_IF_ERROR(ReadBuffer(state, step.buffer, &words, &hash));
  CheckRecord check;
  std::vector<report::Mismatch> first;
  for (uint64_t i = 0; i < words.size(); ++i) {
    if (words[i] == step.pattern) continue;
    ++check.mismatch_count;
    if (first.size() < kMaxReportedMismatches)
      first.push_back({i, Hex(step.pattern), Hex(words[i])});
  }
  const bool equal = check.mismatch_count == 0;
  check.expected = step.expect == Expectation::kDifferent ? "different" : "equal";
  check.actual = equal ? "equal" : "different";
  check.verdict = check.expected == check.actual ? Verdict::kPass : Verdict::kFail;
  if (step.expect != Expectation::kDifferent) check.mismatches = std::move(first);
  record.check = std::move(check);
  record.details.emplace_back("elements", static_cast<int64_t>(words.size()));
  record.details.emplace_back("pattern", Hex(step.pattern));
  record.details.emplace_back("buffer_hash", Hex(hash));
  return Status::Ok();
}

Status CheckAddress(const PlanStep& step, RunState& state, StepRecord& record) {
  bool same = true;
  DevicePtr first = *state.step_address[step.of_steps.front()];
  for (int index : step.of_steps) {
    DevicePtr addr = *state.step_address[index];
    record.addresses.emplace_back(state.plan.steps[index].label, Hex(addr));
    if (addr != first) same = false;
  }
  CheckRecord check;
  check.expected = step.expect == Expectation::kDifferent ? "different" : "same";
  check.actual = same ? "same" : "different";
  check.verdict = check.expected == check.actual ? Verdict::kPass : Verdict::kFail;
  record.check = std::move(check);
  return Status::Ok();
}

// The access device step.device has over the tensor, asked at its first byte and at every
// granule boundary inside it (each mapping is a whole number of granules, so every mapping under
// the tensor is asked at least once).
Status CheckAccess(const PlanStep& step, RunState& state, StepRecord& record) {
  const PlanBuffer& buffer = state.plan.buffers[step.buffer];
  const uint64_t granularity = state.plan.granularity;
  const DevicePtr begin = DataVa(state, step.buffer);
  const DevicePtr end = begin + buffer.bytes;
  const int ordinal = state.device_ordinal[step.device];
  Access first = Access::kNone;
  std::string difference;
  int64_t asked = 0;
  for (DevicePtr at = begin; at < end; at = (at / granularity + 1) * granularity) {
    Access access = Access::kNone;
    VMM_RETURN_IF_ERROR(state.engine.GetAccess(at, ordinal, &access));
    if (asked++ == 0) {
      first = access;
    } else if (access != first && difference.empty()) {
      difference = std::string(AccessName(first)) + " at +0x0, " + AccessName(access) + " at +" +
                   Hex(at - begin);
    }
  }
  CheckRecord check;
  check.expected = AccessName(step.access);
  check.actual = difference.empty() ? AccessName(first) : "mixed";
  check.verdict = check.expected == check.actual ? Verdict::kPass : Verdict::kFail;
  record.check = std::move(check);
  record.details.emplace_back("device", int64_t{step.device});
  record.details.emplace_back("granules_asked", asked);
  if (!difference.empty()) record.details.emplace_back("first_difference", difference);
  return Status::Ok();
}

// Describes the first difference between two kernel-node lists, or "" when identical.
std::string FirstDifference(const std::vector<KernelNodeParams>& x,
                            const std::vector<KernelNodeParams>& y) {
  if (x.size() != y.size())
    return "node count " + std::to_string(x.size()) + " vs " + std::to_string(y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const std::string node = "node " + std::to_string(i) + ": ";
    if (x[i].function != y[i].function)
      return node + "function " + x[i].function + " vs " + y[i].function;
    if (x[i].grid != y[i].grid) return node + "grid differs";
    if (x[i].block != y[i].block) return node + "block differs";
    if (x[i].shared_bytes != y[i].shared_bytes) return node + "shared memory differs";
    if (x[i].arg_bytes != y[i].arg_bytes) return node + "argument bytes differ";
  }
  return "";
}

Status CheckKernelParams(const PlanStep& step, RunState& state, StepRecord& record) {
  std::vector<KernelNodeParams> first, second;
  VMM_RETURN_IF_ERROR(state.engine.KernelNodes(state.graphs[step.graphs[0]], &first));
  VMM_RETURN_IF_ERROR(state.engine.KernelNodes(state.graphs[step.graphs[1]], &second));
  std::string difference = FirstDifference(first, second);
  CheckRecord check;
  check.expected = step.expect == Expectation::kDifferent ? "different" : "identical";
  check.actual = difference.empty() ? "identical" : "different";
  check.verdict = check.expected == check.actual ? Verdict::kPass : Verdict::kFail;
  record.check = std::move(check);
  record.details.emplace_back("nodes", static_cast<int64_t>(first.size()));
  size_t arg_bytes = 0;
  for (const KernelNodeParams& p : first) arg_bytes += p.arg_bytes.size();
  record.details.emplace_back("arg_bytes_compared", static_cast<int64_t>(arg_bytes));
  if (!difference.empty()) record.details.emplace_back("first_difference", difference);
  return Status::Ok();
}

// "0", "0,1": the devices whose bits are set in the low 32 bits of `bits`; "" for none.
std::string DeviceList(uint64_t bits) {
  std::string list;
  for (int d = 0; d < 32; ++d)
    if ((bits >> d) & 1) list += (list.empty() ? "" : ",") + std::to_string(d);
  return list;
}

}  // namespace

template <>
Status RunStep<Op::kCopy>(const PlanStep& step, RunState& state, StepRecord& record) {
  const uint64_t bytes = state.plan.buffers[step.buffer].bytes;
  OpTiming timing;
  OpTiming* timing_out = step.async ? nullptr : &timing;
  Stopwatch watch;
  Status status;
  if (step.snapshot >= 0) {
    const Snapshot& snap = *state.snapshots[step.snapshot];
    status = state.engine.CopyFromHost(DataVa(state, step.buffer), snap.words.data(), bytes,
                                       &timing);  // a host copy is always waited for
    record.details.emplace_back("direction", std::string("host_to_device"));
    // Captured, the graph keeps its own pinned copy of the snapshot (engine.h).
    record.details.emplace_back("staging", std::string(state.capturing ? "pinned" : "pageable"));
  } else {
    status = state.engine.CopyDevice(DataVa(state, step.buffer), DataVa(state, step.other), bytes,
                                     timing_out);
    record.details.emplace_back("direction", std::string("device_to_device"));
    if (step.async) record.details.emplace_back("async", true);
  }
  record.wall_us = watch.ElapsedUs();
  record.details.emplace_back("bytes", static_cast<int64_t>(bytes));
  if (state.plan.devices > 1) {
    // Which devices run the copy and hold each side's memory: a peer copy crosses devices.
    const uint64_t from = step.memory_devices & 0xffffffffu, to = step.memory_devices >> 32;
    record.details.emplace_back("device", int64_t{step.device});
    record.details.emplace_back("from_memory_devices", DeviceList(from));
    record.details.emplace_back("to_memory_devices", DeviceList(to));
    // Peer: some of the memory lives on another device than the one running the copy.
    record.details.emplace_back("peer", ((from | to) & ~(uint64_t{1} << step.device)) != 0);
  }
  if (timing.gpu_us > 0) {
    record.gpu_us = timing.gpu_us;
    record.details.emplace_back("gb_per_s", static_cast<double>(bytes) / (timing.gpu_us * 1e3));
  }
  return status;
}

template <>
std::string DescribeStep<Op::kCopy>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  const std::string from =
      step.snapshot >= 0 ? plan.snapshots[step.snapshot] : plan.buffers[step.other].name;
  const std::string rate = DetailText(r, "gb_per_s");
  const std::string where = plan.devices <= 1
                                ? ""
                                : " · on device " + std::to_string(step.device) +
                                      (DetailText(r, "peer") == "true" ? " (peer)" : "");
  return plan.buffers[step.buffer].name + " ← " + from + " · " +
         FormatBytes(plan.buffers[step.buffer].bytes) + " " + DetailText(r, "direction") + where +
         (rate.empty() ? "" : " · " + rate + " GB/s");
}

template <>
Status RunStep<Op::kSnapshot>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] {
    Snapshot snap;
    VMM_RETURN_IF_ERROR(ReadBuffer(state, step.buffer, &snap.words, &snap.hash));
    record.details.emplace_back("elements", static_cast<int64_t>(snap.words.size()));
    record.details.emplace_back("data_hash", Hex(snap.hash));
    state.snapshots[step.snapshot] = std::move(snap);
    return Status::Ok();
  });
}

template <>
Status RunStep<Op::kCheckMatmul>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return CheckMatmul(step, state, record); });
}

template <>
Status RunStep<Op::kCheckEqual>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return CheckEqual(step, state, record); });
}

template <>
Status RunStep<Op::kCheckValue>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return CheckValue(step, state, record); });
}

template <>
Status RunStep<Op::kCheckAddress>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return CheckAddress(step, state, record); });
}

template <>
Status RunStep<Op::kCheckAccess>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return CheckAccess(step, state, record); });
}

template <>
Status RunStep<Op::kCheckKernelParams>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return CheckKernelParams(step, state, record); });
}

template <>
std::string DescribeStep<Op::kSnapshot>(const Plan& plan, const PlanStep& step,
                                        const StepRecord& r) {
  return plan.buffers[step.buffer].name + " → " + plan.snapshots[step.snapshot] + " · hash " +
         DetailText(r, "data_hash");
}

template <>
std::string DescribeStep<Op::kCheckMatmul>(const Plan&, const PlanStep&, const StepRecord& r) {
  if (!r.check) return "";
  return VerdictText(r) + "  " + DetailText(r, "elements") + " elements vs " +
         DetailText(r, "method") + ", " + std::to_string(r.check->mismatch_count) +
         " outside the error bound (max error " + DetailText(r, "max_error_over_bound") +
         " of bound)";
}

template <>
std::string DescribeStep<Op::kCheckEqual>(const Plan&, const PlanStep&, const StepRecord& r) {
  if (!r.check) return "";
  return VerdictText(r) + "  equal: " + (r.check->actual == "equal" ? "YES" : "NO") + " (" +
         std::to_string(r.check->mismatch_count) + " of " + DetailText(r, "elements") +
         " differ; expected " + r.check->expected + ")";
}

template <>
std::string DescribeStep<Op::kCheckValue>(const Plan&, const PlanStep& step, const StepRecord& r) {
  if (!r.check) return "";
  return VerdictText(r) + "  all " + Hex(step.pattern) + ": " +
         (r.check->actual == "equal" ? "YES" : "NO") + " (" +
         std::to_string(r.check->mismatch_count) + " of " + DetailText(r, "elements") +
         " differ; expected " + r.check->expected + ")";
}

template <>
std::string DescribeStep<Op::kCheckAddress>(const Plan&, const PlanStep&, const StepRecord& r) {
  if (!r.check) return "";
  std::string addrs;
  for (const auto& [k, v] : r.addresses)
    addrs += (addrs.empty() ? "" : ", ") + std::get<std::string>(v);
  return VerdictText(r) + "  same: " + (r.check->actual == "same" ? "YES" : "NO") + " (" + addrs +
         "; expected " + r.check->expected + ")";
}

template <>
std::string DescribeStep<Op::kCheckAccess>(const Plan& plan, const PlanStep& step,
                                           const StepRecord& r) {
  if (!r.check) return "";
  const std::string diff = DetailText(r, "first_difference");
  return VerdictText(r) + "  device " + std::to_string(step.device) + " has " + r.check->actual +
         " on " + plan.buffers[step.buffer].name + (diff.empty() ? "" : " (" + diff + ")") +
         " (expected " + r.check->expected + ")";
}

template <>
std::string DescribeStep<Op::kCheckKernelParams>(const Plan&, const PlanStep&,
                                                 const StepRecord& r) {
  if (!r.check) return "";
  const std::string diff = DetailText(r, "first_difference");
  return VerdictText(r) + "  " + r.check->actual + " · " + DetailText(r, "nodes") + " node(s), " +
         DetailText(r, "arg_bytes_compared") + " argument bytes" +
         (diff.empty() ? "" : " · " + diff) + " (expected " + r.check->expected + ")";
}

}  // namespace vmm
