// The typed scenario tree: what a scenario file says, with the source location of every value.
//
// Produced by ParseScenario (parse.h), which has already checked the file against
// schemas/scenario.schema.json: every Step carries exactly the fields its op allows, with the right
// types, and required fields are present. Names are NOT resolved here (that is runner/plan's job).
// Pure C++: no YAML type appears in this header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/vocab/op.h"

namespace vmm {

// A value from the file with where it was written. `set` is false when the key was absent (then
// `value` holds the default and `loc` points at the enclosing map).
template <typename T>
struct Located {
  T value{};
  SourceLoc loc;
  bool set = false;
};

// A map of scalars written as a step's value (`expect: {location: host}`, `freed: {at_least:
// 4MiB}`, `address: {after: K}`), each value with its location. The schema checked keys and
// types; the planner reads the values (sizes, names, words) and judges them.
struct StepMapEntry {
  std::string key;
  Located<std::string> value;
  // Step::keys only: the planner asked for this key (PlanBuilder::Key). A key no planner asks for
  // is an internal error, so a key the schema accepts is never silently ignored.
  mutable bool read = false;
};
struct StepMap {
  std::vector<StepMapEntry> entries;  // in file order
  SourceLoc loc;                      // where the map starts
  bool set = false;
  // The entry `key`, or nullptr.
  const StepMapEntry* Find(std::string_view key) const;
};

// What an isolate block (`{isolate: {...}, steps: [...]}`, op kIsolate) says about its child. The
// expectation is one of: `expect: ok`, `expect: CUDA_ERROR_<NAME>` (both in `expect`), `expect:
// {signal: SIGSEGV}` (in `signal`) or `expect: {timeout: 5s}` (in `timeout`).
struct IsolateSpec {
  Located<std::string> expect;   // "ok" (the default) or a CUDA error name; unset for a map form
  Located<std::string> signal;   // expect: {signal: NAME}
  Located<uint64_t> timeout;     // expect: {timeout: DURATION}, nanoseconds
  Located<uint64_t> kill_after;  // nanoseconds; the schema's default when unset
  Located<std::string> at;       // the step (name or label) that must be the one that fails
};

// One step. Which fields are meaningful depends on `op` (see the enum); the others stay unset.
struct Step {
  Op op = Op::kSynchronize;
  SourceLoc loc;              // where the step's map starts
  Located<std::string> name;  // label in logs and reports; referenced by check_address

  // Names of things the step acts on.
  Located<std::string> buffer, alloc, graph, exec, snapshot, other;
  // copy: source and destination (buffer, view or snapshot); snapshot: `to` is where it lives
  // ("device" | "host")
  Located<std::string> from, to;
  Located<std::string> a, b, c;              // matmul operands (buffer names)
  std::vector<Located<std::string>> of;      // check_address: step names
  std::vector<Located<std::string>> graphs;  // check_kernel_params: graph names
  Located<std::string> event;                // record_event / wait_event: an event's name
  Located<std::string> node;                 // set_node: the captured step that made the node
  Located<std::string> expect_error_node;    // update: the step that made the blocking node
  Located<std::string> handle;  // export / import: the name of a shareable handle (an fd)
  Located<std::string> passes;  // while: the buffer whose first word counts the loop's passes
  std::vector<Located<std::string>> handle_types;  // create: "posix_fd", "fabric"

  // Sizes and numbers (sizes already converted from units to bytes).
  Located<uint64_t> size, offset, alloc_offset, alignment, seed;
  Located<uint64_t> value, byte;  // memset / check_value: a 32-bit pattern, or one byte repeated
  Located<uint64_t> index;        // if / while: which 32-bit word of `buffer` is the condition
  Located<std::string> access;    // "read_write" | "read" | "none" (the scenario's device 0)
  // set_access's map form `access: {0: read_write, 1: read}`: one entry per device, in file order
  // (then `access` is unset).
  struct DeviceAccessEntry {
    Located<uint64_t> device;
    Located<std::string> access;
  };
  std::vector<DeviceAccessEntry> device_access;
  Located<uint64_t> device;     // create: where memory lives; kernels, copies, instantiate,
                                // check_access: which device runs or is asked (default 0)
  Located<std::string> expect;  // op-specific expectation, e.g. "same", "success", "different"
  Located<uint64_t> repeat;     // run the step this many times and report min/median/p99
  Located<bool> fatal;          // a failed check stops the run
  Located<bool> async;          // fill/matmul: enqueue and do not wait (no device time)
  Located<bool> enabled;        // set_node: enable (true) or disable (false) the node
  Located<bool> upload, auto_free_on_launch, device_launch;  // instantiate options
  Located<bool> pinned;  // snapshot to host: page-locked memory (default true)

  // Allocation properties (create, check_granularity).
  Located<std::string> location;  // "device" | "host" | "host_numa"
  Located<uint64_t> numa_node;    // host_numa: the node
  Located<bool> compression, gpudirect_rdma;
  Located<std::string> granularity;  // create: "minimum" | "recommended"
  // Queries.
  StepMap freed, used;        // check_memory: {at_least | at_most | about, tolerance}
  StepMap expect_map;         // `expect` written as a map (check_properties, ...)
  Located<uint64_t> address;  // reserve: a literal address hint
  StepMap address_map;        // reserve: {at: BUFFER} or {after: BUFFER}
  // Ops with kDriver: the CUresult name the call must return ("CUDA_ERROR_INVALID_VALUE"); the
  // step then passes only on that error, with the scenario's state unchanged (runner/plan checks
  // the name and which refusals may be sent).
  Located<std::string> expect_error;
  Located<uint64_t> duration;  // busy: how long the kernel runs, nanoseconds
  Located<bool> wait;  // unmap/release: wait for in-flight work first (false: isolate blocks only)

  // Scalar keys without a member of their own, as written: a key that one op alone reads (through
  // PlanBuilder::Key, which parses it). The builder puts here every scalar key the schema accepts
  // and the tables below do not name, so a new op's new key is a schema entry and a planner line.
  StepMap keys;

  std::vector<Step> steps;                  // capture body; isolate block body; if / while body
  std::vector<std::vector<Step>> branches;  // parallel: each branch's steps
  IsolateSpec isolate;                      // isolate blocks only
};

// Which schema key fills which Step field, by the field's kind (the schema says which op takes
// which key). A scalar key the tables lack lands in Step::keys; a map or list key they lack is an
// internal error found by the scenario tests. A key several ops share, or whose value is a map or
// a list, is a Step member plus a row here.
struct StepTextField {
  const char* key;
  Located<std::string> Step::*field;
};
inline constexpr StepTextField kStepTextFields[] = {
    {"name", &Step::name},
    {"buffer", &Step::buffer},
    {"alloc", &Step::alloc},
    {"graph", &Step::graph},
    {"exec", &Step::exec},
    {"snapshot", &Step::snapshot},
    {"other", &Step::other},
    {"a", &Step::a},
    {"b", &Step::b},
    {"c", &Step::c},
    {"access", &Step::access},
    {"expect", &Step::expect},
    {"from", &Step::from},
    {"to", &Step::to},
    {"location", &Step::location},
    {"granularity", &Step::granularity},
    {"event", &Step::event},
    {"node", &Step::node},
    {"expect_error_node", &Step::expect_error_node},
    {"expect_error", &Step::expect_error},
    {"handle", &Step::handle},
    {"passes", &Step::passes},
};
struct StepSizeField {  // sizes with units ("2MiB"), converted to bytes
  const char* key;
  Located<uint64_t> Step::*field;
};
inline constexpr StepSizeField kStepSizeFields[] = {{"size", &Step::size},
                                                    {"offset", &Step::offset},
                                                    {"alloc_offset", &Step::alloc_offset},
                                                    {"alignment", &Step::alignment}};
struct StepIntegerField {
  const char* key;
  Located<uint64_t> Step::*field;
};
inline constexpr StepIntegerField kStepIntegerFields[] = {
    {"seed", &Step::seed},       {"repeat", &Step::repeat}, {"value", &Step::value},
    {"byte", &Step::byte},       {"device", &Step::device}, {"numa_node", &Step::numa_node},
    {"address", &Step::address}, {"index", &Step::index}};
struct StepFlagField {
  const char* key;
  Located<bool> Step::*field;
};
inline constexpr StepFlagField kStepFlagFields[] = {
    {"fatal", &Step::fatal},
    {"async", &Step::async},
    {"compression", &Step::compression},
    {"gpudirect_rdma", &Step::gpudirect_rdma},
    {"enabled", &Step::enabled},
    {"upload", &Step::upload},
    {"auto_free_on_launch", &Step::auto_free_on_launch},
    {"device_launch", &Step::device_launch},
    {"pinned", &Step::pinned},
    {"wait", &Step::wait}};
struct StepDurationField {  // durations with units ("200ms"), converted to nanoseconds
  const char* key;
  Located<uint64_t> Step::*field;
};
inline constexpr StepDurationField kStepDurationFields[] = {{"duration", &Step::duration}};
struct StepListField {  // lists of names
  const char* key;
  std::vector<Located<std::string>> Step::*field;
};
inline constexpr StepListField kStepListFields[] = {
    {"of", &Step::of}, {"graphs", &Step::graphs}, {"handle_types", &Step::handle_types}};
// Keys whose value is a map of scalars. A key may also be in a table above (`expect`, `address`):
// the value's form, scalar or map, says which field it fills.
struct StepMapField {
  const char* key;
  StepMap Step::*field;
};
inline constexpr StepMapField kStepMapFields[] = {{"expect", &Step::expect_map},
                                                  {"freed", &Step::freed},
                                                  {"used", &Step::used},
                                                  {"address", &Step::address_map}};

// A named fp32 tensor. A buffer lives at the start of the reservation of the same name; a view
// (declared under `views:`) lives `offset` bytes into the reservation of buffer `of` — PyTorch's
// expandable segments, GMLake's stitched blocks, kvcached's pages.
struct BufferDecl {
  std::string name;
  SourceLoc loc;
  Located<std::string> of;      // views only: the buffer whose reservation holds the view
  Located<uint64_t> offset;     // views only: bytes from the start of that reservation
  std::vector<uint64_t> shape;  // row-major; product = element count
  std::string dtype = "f32";
  uint64_t elements() const;
  uint64_t bytes() const { return elements() * 4; }
};

// What a scenario needs from the machine (`requires:`). A run on a device or backend that lacks
// any of it ends as *skipped* (exit 5), never as a pass or a failure. Unset fields ask nothing.
struct Requirements {
  Located<std::string> backend;                    // "host" or "cuda"
  Located<uint64_t> devices;                       // at least this many devices of the backend
  Located<uint64_t> device_memory;                 // at least this much memory on the device, bytes
  std::vector<Located<std::string>> capabilities;  // alloc_props.h CapabilityName spellings
};

struct Scenario {
  std::string file;  // path as given
  int version = 1;
  std::string name;
  std::string description;
  Located<uint64_t> granularity;  // default 2 MiB (CUDA's minimum on every VMM-capable GPU so far)
  std::vector<BufferDecl> buffers;
  std::vector<BufferDecl> views;  // `of` and `offset` set
  Requirements requires_;         // `requires:` (a C++ keyword, hence the underscore)
  std::vector<Step> steps;
  // `vars:` as used (after --set), in declaration order: name -> value (decimal or text).
  std::vector<std::pair<std::string, std::string>> vars;
  // `report: {fold_loops: true}`: the report folds repeated steps (exec/fold_steps.h).
  bool fold_loops = false;
};

inline constexpr uint64_t kDefaultGranularity = 2ull << 20;
// A view's offset is a multiple of this, so device kernels over it stay vectorised.
inline constexpr uint64_t kViewAlignment = 256;

}  // namespace vmm
