// The check_* steps. Data checks are judged where the data lives (the engine's CompareData,
// CompareValue, CheckMatmul: device kernels on the CUDA backend, plain C++ on the host twin, which
// the GPU tests hold the kernels to); only verdicts, counts and the first mismatches come back.
// `check_matmul` with `verify: host` reads A, B and C back instead and judges them with the host
// oracle, cross-checking the device hash of every buffer against a host hash of the same bytes;
// `check_elementwise` always does so (the CPU recomputes every element).
#include <bit>
#include <cmath>
#include <cstring>
#include <variant>

#include "kernels/datagen.h"
#include "runner/base/format.h"
#include "runner/base/stopwatch.h"
#include "runner/engine/matmul_verify.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"

namespace vmm {
namespace {

using report::CheckRecord;
using report::StepRecord;
using report::Verdict;

constexpr uint32_t kMaxReportedMismatches = 8;

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
  return FloatText(f);
}

Status CheckMatmul(const PlanStep& step, RunState& state, StepRecord& record) {
  MatmulCheckResult v;
  uint64_t ha = 0, hb = 0, hc = 0;
  if (step.verify_host) {
    std::vector<uint32_t> a, b, c;
    VMM_RETURN_IF_ERROR(ReadBuffer(state, step.a, &a, &ha));
    VMM_RETURN_IF_ERROR(ReadBuffer(state, step.b, &b, &hb));
    VMM_RETURN_IF_ERROR(ReadBuffer(state, step.c, &c, &hc));
    auto as_float = [](const std::vector<uint32_t>& w) {
      return reinterpret_cast<const float*>(w.data());
    };
    v = VerifyMatmul(as_float(a), as_float(b), as_float(c), step.m, step.n, step.k,
                     kMaxReportedMismatches);
  } else {
    const MatmulArgs args{DataVa(state, step.a),
                          DataVa(state, step.b),
                          DataVa(state, step.c),
                          step.m,
                          step.n,
                          step.k};
    VMM_RETURN_IF_ERROR(state.engine.CheckMatmul(args, kMaxReportedMismatches, &v));
    const uint64_t mk = uint64_t{step.m} * step.k, kn = uint64_t{step.k} * step.n;
    VMM_RETURN_IF_ERROR(state.engine.Checksum(args.a, mk, &ha));
    VMM_RETURN_IF_ERROR(state.engine.Checksum(args.b, kn, &hb));
    VMM_RETURN_IF_ERROR(state.engine.Checksum(args.c, v.elements, &hc));
  }
  CheckRecord check;
  check.expected = "pass";
  check.actual = v.mismatches == 0 ? "pass" : "fail";
  check.verdict = v.mismatches == 0 ? Verdict::kPass : Verdict::kFail;
  check.mismatch_count = v.mismatches;
  for (const MatmulMismatch& m : v.first)
    check.mismatches.push_back({m.index, FloatText(m.want), FloatText(m.got)});
  record.check = std::move(check);
  record.details.emplace_back("method", std::string(v.method()));
  record.details.emplace_back("elements", static_cast<int64_t>(v.elements));
  record.details.emplace_back("max_error_over_bound", v.max_error_ratio);
  record.details.emplace_back("a_hash", Hex(ha));
  record.details.emplace_back("b_hash", Hex(hb));
  record.details.emplace_back("c_hash", Hex(hc));
  record.details.emplace_back("verify", std::string(step.verify_host ? "host" : "device"));
  if (v.freivalds)
    record.details.emplace_back("rows_recomputed", static_cast<int64_t>(v.rows_recomputed));
  return Status::Ok();
}

// check_elementwise: reads a, b and c back (each hash cross-checked with the backend's) and
// recomputes every element on the CPU as the kernels define it, fp32 with one rounding
// (std::fma; alpha * a without b); equal bits pass, and so does NaN against NaN.
Status CheckElementwise(const PlanStep& step, RunState& state, StepRecord& record) {
  std::vector<uint32_t> a, b, c;
  uint64_t ha = 0, hb = 0, hc = 0;
  VMM_RETURN_IF_ERROR(ReadBuffer(state, step.a, &a, &ha));
  if (step.b >= 0) VMM_RETURN_IF_ERROR(ReadBuffer(state, step.b, &b, &hb));
  VMM_RETURN_IF_ERROR(ReadBuffer(state, step.c, &c, &hc));
  CheckRecord check;
  check.expected = "pass";
  for (uint64_t i = 0; i < c.size(); ++i) {
    const float x = std::bit_cast<float>(a[i]);
    const float want =
        step.b >= 0 ? std::fma(step.alpha, x, std::bit_cast<float>(b[i])) : step.alpha * x;
    const float got = std::bit_cast<float>(c[i]);
    const uint32_t want_bits = std::bit_cast<uint32_t>(want);
    if (want_bits == c[i] || (std::isnan(want) && std::isnan(got))) continue;
    if (check.mismatches.size() < kMaxReportedMismatches)
      check.mismatches.push_back({i, FloatText(want), FloatText(got)});
    ++check.mismatch_count;
  }
  check.actual = check.mismatch_count == 0 ? "pass" : "fail";
  check.verdict = check.mismatch_count == 0 ? Verdict::kPass : Verdict::kFail;
  record.check = std::move(check);
  record.details.emplace_back("elements", static_cast<int64_t>(c.size()));
  record.details.emplace_back("alpha", static_cast<double>(step.alpha));
  record.details.emplace_back("a_hash", Hex(ha));
  if (step.b >= 0) record.details.emplace_back("b_hash", Hex(hb));
  record.details.emplace_back("c_hash", Hex(hc));
  return Status::Ok();
}

// The verdict of check_equal / check_value from a comparison, with the first mismatches shown as
// `show` prints a word (floats for check_equal, hex patterns for check_value).
template <typename Show>
void RecordComparison(const PlanStep& step, const DataCompareResult& r, Show show,
                      StepRecord& record) {
  CheckRecord check;
  check.mismatch_count = r.mismatches;
  const bool equal = r.mismatches == 0;
  check.expected = step.expect == Expectation::kDifferent ? "different" : "equal";
  check.actual = equal ? "equal" : "different";
  check.verdict = check.expected == check.actual ? Verdict::kPass : Verdict::kFail;
  // Listing mismatches is only informative when equality was expected.
  if (step.expect != Expectation::kDifferent) {
    for (const WordMismatch& m : r.first)
      check.mismatches.push_back({m.index, show(m.want), show(m.got)});
  }
  record.check = std::move(check);
}

Status CheckEqual(const PlanStep& step, RunState& state, StepRecord& record) {
  const PlanBuffer& buffer = state.plan.buffers[step.buffer];
  CompareOptions options;
  options.max_report = kMaxReportedMismatches;
  DataRef other;
  if (step.snapshot >= 0) {
    const Snapshot& snap = *state.snapshots[step.snapshot];
    other = DataRef::Of(snap.storage);
    options.other_hash_known = true;
    options.other_hash = snap.hash;
  } else {
    other = DataRef::Device(DataVa(state, step.other));
  }
  DataCompareResult r;
  VMM_RETURN_IF_ERROR(
      state.engine.CompareData(DataVa(state, step.buffer), other, buffer.elements, options, &r));
  RecordComparison(step, r, FloatBits, record);
  record.details.emplace_back("elements", static_cast<int64_t>(buffer.elements));
  record.details.emplace_back("buffer_hash", Hex(r.hash));
  record.details.emplace_back("other_hash", Hex(r.other_hash));
  return Status::Ok();
}

// Every element of the buffer holds step.pattern (or, with expect: different, at least one not).
Status CheckValue(const PlanStep& step, RunState& state, StepRecord& record) {
  const PlanBuffer& buffer = state.plan.buffers[step.buffer];
  DataCompareResult r;
  VMM_RETURN_IF_ERROR(state.engine.CompareValue(DataVa(state, step.buffer), step.pattern,
                                                buffer.elements, kMaxReportedMismatches, &r));
  RecordComparison(
      step, r, [](uint32_t w) { return Hex(w); }, record);
  record.details.emplace_back("elements", static_cast<int64_t>(buffer.elements));
  record.details.emplace_back("pattern", Hex(step.pattern));
  record.details.emplace_back("buffer_hash", Hex(r.hash));
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

}  // namespace

template <>
Status RunStep<Op::kCheckMatmul>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return CheckMatmul(step, state, record); });
}

template <>
Status RunStep<Op::kCheckElementwise>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return CheckElementwise(step, state, record); });
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
std::string DescribeStep<Op::kCheckMatmul>(const Plan&, const PlanStep&, const StepRecord& r) {
  if (!r.check) return "";
  return VerdictText(r) + "  " + DetailText(r, "elements") + " elements vs " +
         DetailText(r, "method") + ", " + std::to_string(r.check->mismatch_count) +
         " outside the error bound (max error " + DetailText(r, "max_error_over_bound") +
         " of bound)";
}

template <>
std::string DescribeStep<Op::kCheckElementwise>(const Plan& plan, const PlanStep& step,
                                                const StepRecord& r) {
  if (!r.check) return "";
  return VerdictText(r) + "  " + ElementwiseText(plan, step) + ": " +
         std::to_string(r.check->mismatch_count) + " of " + DetailText(r, "elements") +
         " elements differ from the CPU's";
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
