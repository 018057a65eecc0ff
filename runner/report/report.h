// The verification report: an in-memory model of one scenario run, written as JSON by WriteReport
// and read back by ReadReport (report_io.h). Pure C++; nlohmann/json stays inside
// runner/report/*.cc.
//
// Stable fields (compared exactly by `vmm-run diff`): step op/name/status, check expected/actual/
// verdict, update result codes, address relations (check_address verdicts), data hashes, summary.
// Volatile fields (ignored or compared with a noise threshold): addresses, timings, started_at,
// argv, git sha, durations.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "runner/base/boxed.h"
#include "runner/base/small_vector.h"
#include "runner/report/detail_key.h"

namespace vmm::report {

inline constexpr const char* kSchemaVersion = "1.3";  // major.minor; readers refuse another major

// A scalar detail value. 64-bit integers are written as decimal strings in JSON (readers of JSON in
// other languages lose precision past 2^53); addresses and hashes as "0x..." hex strings.
using Scalar = std::variant<bool, int64_t, double, std::string>;
using Detail = std::pair<DetailKey, Scalar>;
// A record's lists of details, ordered as the executor added them, each holding as many inline
// as a step usually has (a longer list moves to the heap): the executor builds a record per step
// without allocating for its lists.
template <size_t N>
using DetailList = SmallVector<Detail, N>;
using Details = DetailList<4>;    // StepRecord::details
using Addresses = DetailList<1>;  // StepRecord::addresses
using Targets = DetailList<1>;    // StepRecord::targets (made after the run, off the timed path)
// The value of `key` in `details`; nullptr when it has none.
const Scalar* FindDetail(std::span<const Detail> details, std::string_view key);

// A scalar as people and comparisons read it: true/false, decimal integers, the shortest text that
// round-trips a double, strings as they are.
std::string ScalarText(const Scalar& v);
// Detail keys ending in "_hash" are hashes: stable, compared exactly by `vmm-run diff`.
bool IsHashKey(std::string_view key);
// The hashes of data, computed as the report's data_hash_scheme says: every hash key but a
// capture's `structure_hash` (of its graph's nodes as text).
inline bool IsDataHashKey(std::string_view key) {
  return IsHashKey(key) && key != "structure_hash";
}
// The scheme of a report's data hashes: its data_hash_scheme, or 1 when it names none.
inline int DataHashScheme(int named) { return named != 0 ? named : 1; }

// kUnchecked is part of the format (readers accept it; a check whose verdict could not be decided)
// but this version never writes it: a check that cannot read its data fails the step instead.
enum class StepStatus { kOk, kFailed, kSkipped, kUnchecked };
const char* StepStatusName(StepStatus s);  // "ok", "failed", "skipped", "unchecked"

enum class Verdict { kPass, kFail };
const char* VerdictName(Verdict v);  // "pass", "fail"

struct Mismatch {
  uint64_t index = 0;
  std::string want, got;  // values as printed (floats with enough digits to round-trip)
};

struct CheckRecord {
  std::string expected;  // e.g. "same", "success", "pass", "different"
  std::string actual;
  Verdict verdict = Verdict::kFail;
  uint64_t mismatch_count = 0;       // data checks only
  std::vector<Mismatch> mismatches;  // the first few
  // The verdict judges what only the device can know (check_memory with `subject: device`: free
  // memory, which the driver's own allocations move): a cross-machine diff (ignore_device) lists
  // a changed verdict as information, never as a regression. Written only when true.
  bool device_fact = false;
};

// Summary statistics of a repeated step (repeat: N), microseconds.
struct TimingStats {
  uint32_t count = 0;
  double min_us = 0, median_us = 0, p99_us = 0, max_us = 0;
};

// A record that stands for many runs of one step template (`report: {fold_loops: true}`,
// exec/fold_steps.h): the record's index and name are the first run's.
struct FoldRecord {
  uint64_t count = 0;  // runs folded (at least 2)
  int last_index = 0;
  std::string last_name;
  // Values that differed between runs and were dropped, as "details.wait_us", "addresses.va".
  std::vector<std::string> varying;
};

// An isolate block's child process as the parent saw it end (the block record's "child").
// Stable: how it ended (exit status, signal, timed out, the CUDA error name); volatile: pid,
// fault_line (addresses, times), stderr, the times.
struct ChildRecord {
  int64_t pid = 0;
  std::optional<int> exit_status;    // the child exited with this code (none when killed)
  std::string signal;                // the signal that killed it ("SIGSEGV"), "" when none
  bool timed_out = false;            // vmm-run killed it (SIGKILL) at the block's time limit
  std::string stopped_by;            // vmm-run was stopped by this signal and killed the child
  std::optional<std::string> error;  // CUDA error name of the child's first failed step
  std::string failed_step;           // that step's name, "" when none failed
  // The fault as the system recorded it: on CUDA the kernel log's "NVRM: Xid" line for the
  // child's pid; on the host twin the fault trap's account (signal, code, address, access).
  std::optional<std::string> fault_line;
  std::string fault_line_note;   // where fault_line came from, or why there is none
  std::vector<std::string> fds;  // names of the descriptors handed to the child
  std::string stderr_text;       // the last bytes the child wrote to stderr
  // When, in milliseconds since the run started (volatile): the child was started, was ready (its
  // engine open; none when it never was) and was reaped. The blocks of a together group overlap.
  std::optional<double> started_ms, ready_ms, ended_ms;
};

struct StepRecord {
  // User-provided, so that value-initialization (vector::emplace_back()) initializes the members
  // and does not first zero all ~400 bytes: the executor builds one record per step.
  StepRecord() {}  // NOLINT(modernize-use-equals-default)
  // A record of a step with its identity, the strings made in place (the executor starts every
  // record this way: a default record and assignments after cost a pass over each string).
  StepRecord(int index, const std::string& name, bool named, std::string_view op, int line)
      : index(index), name(name), named(named), op(op), line(line) {}
  int index = 0;       // position in the scenario's step list
  std::string name;    // the step's name, or its label ("map A") when unnamed
  bool named = false;  // true when the scenario gave the name (a stable diff key)
  std::string op;
  int line = 0;  // line of the step in the scenario file
  StepStatus status = StepStatus::kOk;
  double wall_us = 0;                        // first (or only) execution
  std::optional<double> gpu_us;              // device time (events) where measured
  Boxed<TimingStats> wall_stats, gpu_stats;  // when repeat > 1 (Boxed: usually empty)
  Addresses addresses;                       // e.g. {"va", "0x7f..."}: hex strings
  Details details;  // op-specific facts (sizes, result codes, hashes, waited...)
  // Names of what the step acts on, by role: {"buffer": "A", "alloc": "pA1"}, {"exec": "e"}.
  // Filled after the run (exec/step_targets.h), never on the timed path.
  Targets targets;
  Boxed<CheckRecord> check;  // check steps (Boxed: most steps have none)
  // A step with expect_error: the CUDA error it expected and the one its call returned
  // ("CUDA_SUCCESS" when it succeeded, "none" when it failed before any CUDA call). Its check
  // holds the same pair and the verdict. Both empty for every other step.
  std::string expected_error, actual_error;
  std::string error;  // run-time failure message (status failed, no check)
  // capture: the recorded inner steps; parallel: its branches' steps; isolate: the child's steps;
  // together: one isolate record per block
  std::vector<StepRecord> body;
  Boxed<FoldRecord> folded;  // a folded record (Boxed: usually empty)
  Boxed<ChildRecord> child;  // isolate: the child process
};

// A buffer or view the scenario declared (`vmm-run timeline` draws a lane per reservation).
struct BufferRecord {
  std::string name;
  std::string view_of;  // views: the buffer whose reservation holds it; empty for a buffer
  uint64_t offset = 0;  // views: bytes from the start of that reservation
  uint64_t bytes = 0;   // the tensor's bytes
  uint64_t reservation_bytes = 0;  // buffers: the reservation's size
};

// One node of a captured graph as the backend holds it (read back after the capture).
struct GraphNodeRecord {
  int index = 0;       // position in the graph's node list (capture order)
  std::string name;    // the captured step that made it ("" when none did)
  std::string type;    // NodeTypeName: "kernel", "memset", "memcpy", "host", ...
  std::string detail;  // the kernel, the copy's direction, the memset value, the event, the size
  // Buffers (or views) it touches: name -> "read" | "write". An address no buffer holds is "0x...".
  std::vector<std::pair<std::string, std::string>> buffers;
  std::vector<int> dependencies;          // indices of the nodes it waits for, ascending
  std::vector<GraphNodeRecord> children;  // a child graph node: the child's nodes
};

// A graph's structure, recorded once per capture step (STABLE: compared across backends through
// the capture step's `structure_hash`).
struct GraphRecord {
  std::string graph;         // the graph's name in the scenario
  int capture_step = 0;      // index of the capture step that made it
  std::string capture_name;  // that step's name or label
  std::vector<GraphNodeRecord> nodes;
  std::string structure_hash;  // hash of the nodes as text: names, types, details, buffers, edges
  std::string dot_file;        // the DOT file written beside the report ("" when none was)
  std::string dot;             // in memory only: the DOT text to write (not in the JSON)
};

struct DeviceRecord {
  std::string name, compute_capability, driver_version, runtime_version;
  int ordinal = 0;
  bool vmm_supported = false;
  uint64_t granularity_min = 0, granularity_recommended = 0, total_memory = 0;
  // Report.devices entries only: the scenario's number for the device and its PCI address.
  int scenario_device = 0;
  std::string pci_bus_id;
};

struct Summary {
  int steps = 0, ok = 0, failed = 0, skipped = 0, unchecked = 0;
  int checks_passed = 0, checks_failed = 0;
  int exit_code = 0;
  int failed_step = -1;     // index of the step that failed at run time (exit 4), else -1
  std::string result;       // "pass", "fail", "error" (a step failed), "skipped", "interrupted"
  std::string skip_reason;  // "skipped": what the scenario requires that this run lacked
  double duration_ms = 0;
  // The process's peak resident set size when the run ended (getrusage ru_maxrss), bytes; 0 when
  // unknown. Noisy, never compared: it shows that host memory does not grow with the data on the
  // GPU (snapshots on the device, checks judged there). Written to JSON only when known.
  uint64_t peak_rss_bytes = 0;
  // Stopped by a signal at a step boundary (exit 128 + signal). Written to JSON only when true.
  bool interrupted = false;
  int signal = 0;            // the signal's number (SIGINT 2, SIGTERM 15, SIGHUP 1)
  int stopped_at_step = -1;  // index of the first step not run because of it
};

struct Report {
  std::string schema_version = kSchemaVersion;
  std::string tool_version, git_sha;
  std::vector<std::string> argv;
  std::string scenario_path, scenario_sha256, scenario_name;
  std::string backend;         // "host" | "cuda"
  std::string backend_reason;  // why auto picked it, e.g. "no CUDA device: ..."
  DeviceRecord device;
  // Every device the run used, by scenario device number (device 0 first: the same device as
  // `device`). Optional in the format (older reports have none); a run skipped before it
  // started lists the engine's device only.
  std::vector<DeviceRecord> devices;
  uint64_t granularity = 0;  // the scenario's granularity, bytes
  // The scheme of the data hashes (`*_hash` details; kernels/datagen.h's kHashScheme), set by the
  // pipeline. 0: the report does not name one (written before 1.3), which is scheme 1. `vmm-run
  // diff` compares data hashes only between reports of one scheme.
  int data_hash_scheme = 0;
  // The scenario's `vars:` as used (after --set), in declaration order: name -> value (decimal
  // integer or text). Written only when the scenario has vars (optional in the format).
  std::vector<std::pair<std::string, std::string>> vars;
  // The point of the scenario's `sweep:` this run was, axis -> value as written, in axis order;
  // empty for a run that is not part of a sweep. `vmm-run diff` pairs reports by scenario name
  // and this point.
  std::vector<std::pair<std::string, std::string>> sweep_point;
  std::string started_at;             // ISO 8601 UTC
  std::vector<BufferRecord> buffers;  // optional in the format (absent in reports before 1.1)
  std::vector<StepRecord> steps;
  std::vector<GraphRecord> graphs;  // every captured graph's nodes and edges, in capture order
  Summary summary;
};

}  // namespace vmm::report
