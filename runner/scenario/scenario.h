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

#include "runner/base/boxed.h"
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

// The fields a step may carry besides op, loc, name and its body, by kind; each
// is named as its key in the file. One row per field: a field is an accessor of Step, a row of
// the builder's key tables (kStepTextFields, ...) and a slot of Step's sparse storage.
// clang-format off
#define VMM_STEP_TEXT_FIELDS(X) \
  X(buffer) X(alloc) X(graph) X(exec) X(snapshot) X(other) X(from) X(to) X(a) X(b) X(c)     \
  X(event) X(node) X(expect_error_node) X(handle) X(passes) X(access) X(expect) X(location) \
  X(granularity) X(expect_error)
#define VMM_STEP_SIZE_FIELDS(X) X(size) X(offset) X(alloc_offset) X(alignment)  // units -> bytes
#define VMM_STEP_INTEGER_FIELDS(X) \
  X(seed) X(value) X(byte) X(index) X(device) X(numa_node) X(address) X(repeat)
#define VMM_STEP_DURATION_FIELDS(X) X(duration)  // units -> nanoseconds
#define VMM_STEP_FLAG_FIELDS(X) \
  X(async) X(enabled) X(upload) X(auto_free_on_launch) X(device_launch) X(pinned) X(compression) \
  X(gpudirect_rdma) X(wait) X(fatal)
#define VMM_STEP_LIST_FIELDS(X) X(of) X(graphs) X(handle_types)  // lists of names
// clang-format on
// Maps of scalars: (field, key). `expect` and `address` take a scalar or a map; the value's form
// says which field it fills.
// clang-format off
#define VMM_STEP_MAP_FIELDS(X) \
  X(freed, "freed") X(used, "used") X(expect_map, "expect") X(address_map, "address") \
  X(equals_map, "equals") X(at_least_map, "at_least") X(at_most_map, "at_most")
// clang-format on

// set_access's map form `access: {0: read_write, 1: read}`: one entry per device.
struct DeviceAccessEntry {
  Located<uint64_t> device;
  Located<std::string> access;
};

// One step. Which fields are meaningful depends on `op` (see the enum and the schema).
//
// Steps are made by the hundred thousand (loops), and a step sets three of its fifty fields on
// average, so a Step holds its op, location, name and body directly and every other field
// sparsely (216 bytes a step, from 320 with repeat, fatal and branches direct): an accessor
// (`step.buffer()`) returns the field, or a shared unset one (value {}, `set` false, no location)
// when the step lacks it. A key the schema gives a default is stored with that default, `set` false
// and the step's location, as before. The mutable_ accessors add the field (the builder and tests
// write through them). What each field means:
//   buffer alloc graph exec snapshot other: names of the things the step acts on. from, to: copy's
//   source and destination (buffer, view or snapshot); snapshot: `to` is where it lives ("device" |
//   "host"). a b c: matmul and elementwise operands. of: check_address's step names. graphs:
//   check_kernel_params's graph names. event: record_event / wait_event. node: set_node's captured
//   step. expect_error_node: update's step that made the blocking node. handle: export / import's
//   shareable handle. passes: while's buffer whose first word counts the passes. handle_types:
//   create's "posix_fd", "fabric".
//   size offset alloc_offset alignment seed: bytes (sizes converted from units). value, byte:
//   memset / check_value's 32-bit pattern, or one byte repeated. index: if / while's condition
//   word. access: "read_write" | "read" | "none" (device 0); device_access: the map form (then
//   access is unset). device: where create puts memory, which device runs a kernel, copy,
//   instantiate or is asked (default 0). expect: the op's word ("same", "success", ...);
//   expect_map: `expect` as a map (check_properties, ...). async: fill/matmul enqueue and do not
//   wait. enabled: set_node's enable or disable. upload auto_free_on_launch device_launch:
//   instantiate's options. pinned: a host snapshot's page-locked memory. location numa_node
//   compression gpudirect_rdma granularity: allocation properties (create, check_granularity).
//   freed used: check_memory's {at_least | at_most | about, tolerance}. equals_map at_least_map
//   at_most_map: check_record's facts and their bounds. address, address_map:
//   reserve's literal hint or {at: BUFFER} / {after: BUFFER}. expect_error: the CUresult name a
//   kDriver op must return (then the step passes only on that error, the state unchanged;
//   runner/plan checks which refusals may be sent). duration: busy's run time, nanoseconds.
//   wait: unmap/release wait for in-flight work first (false: isolate blocks only). keys: scalar
//   keys one op alone reads, as written (PlanBuilder::Key parses them); the builder puts here every
//   scalar key the schema accepts and the tables lack, so a new op's new key is a schema entry and
//   a planner line. isolate: isolate blocks only. repeat: run the step this many times and report
//   min/median/p99. fatal: a failed check stops the run. branches: parallel's branches' steps.
class Step {
 public:
  Op op = Op::kSynchronize;
  SourceLoc loc;              // where the step's map starts
  Located<std::string> name;  // label in logs and reports; referenced by check_address

  std::vector<Step> steps;  // capture body; isolate block body; if / while body

#define VMM_STEP_TEXT_ACCESSORS(f)                                     \
  const Located<std::string>& f() const { return Text(Field::k_##f); } \
  Located<std::string>& mutable_##f() { return MutableText(Field::k_##f); }
#define VMM_STEP_NUMBER_ACCESSORS(f)                                  \
  const Located<uint64_t>& f() const { return Number(Field::k_##f); } \
  Located<uint64_t>& mutable_##f() { return MutableNumber(Field::k_##f); }
#define VMM_STEP_FLAG_ACCESSORS(f)                              \
  const Located<bool>& f() const { return Flag(Field::k_##f); } \
  Located<bool>& mutable_##f() { return MutableFlag(Field::k_##f); }
#define VMM_STEP_RARE_ACCESSORS(type, f)                         \
  const type& f() const { return rare_ ? rare_->f : kNoRare.f; } \
  type& mutable_##f() { return Rare().f; }
#define VMM_STEP_LIST_ACCESSORS(f) VMM_STEP_RARE_ACCESSORS(std::vector<Located<std::string>>, f)
#define VMM_STEP_MAP_ACCESSORS(f, key) VMM_STEP_RARE_ACCESSORS(StepMap, f)
  VMM_STEP_TEXT_FIELDS(VMM_STEP_TEXT_ACCESSORS)
  VMM_STEP_SIZE_FIELDS(VMM_STEP_NUMBER_ACCESSORS)
  VMM_STEP_INTEGER_FIELDS(VMM_STEP_NUMBER_ACCESSORS)
  VMM_STEP_DURATION_FIELDS(VMM_STEP_NUMBER_ACCESSORS)
  VMM_STEP_FLAG_FIELDS(VMM_STEP_FLAG_ACCESSORS)
  VMM_STEP_LIST_FIELDS(VMM_STEP_LIST_ACCESSORS)
  VMM_STEP_MAP_FIELDS(VMM_STEP_MAP_ACCESSORS)
  VMM_STEP_RARE_ACCESSORS(std::vector<DeviceAccessEntry>, device_access)
  VMM_STEP_RARE_ACCESSORS(std::vector<std::vector<Step>>,
                          branches)  // parallel: each branch's steps
  const StepMap& keys() const { return keys_ ? *keys_ : kNoKeys; }
  StepMap& mutable_keys() { return keys_ ? *keys_ : *(keys_ = StepMap{}); }
  const IsolateSpec& isolate() const { return isolate_ ? *isolate_ : kNoIsolate; }
  IsolateSpec& mutable_isolate() { return isolate_ ? *isolate_ : *(isolate_ = IsolateSpec{}); }
#undef VMM_STEP_TEXT_ACCESSORS
#undef VMM_STEP_NUMBER_ACCESSORS
#undef VMM_STEP_FLAG_ACCESSORS
#undef VMM_STEP_LIST_ACCESSORS
#undef VMM_STEP_MAP_ACCESSORS
#undef VMM_STEP_RARE_ACCESSORS

 private:
  enum class Field : uint8_t {
#define VMM_STEP_FIELD_ID(f) k_##f,
    VMM_STEP_TEXT_FIELDS(VMM_STEP_FIELD_ID) VMM_STEP_SIZE_FIELDS(VMM_STEP_FIELD_ID)
        VMM_STEP_INTEGER_FIELDS(VMM_STEP_FIELD_ID) VMM_STEP_DURATION_FIELDS(VMM_STEP_FIELD_ID)
            VMM_STEP_FLAG_FIELDS(VMM_STEP_FIELD_ID)
#undef VMM_STEP_FIELD_ID
  };
  template <typename V>
  struct Entry {
    Field field;
    V value;
  };
  // The fields few steps have, boxed together (keys and isolate in boxes of their own).
  struct RareFields {
#define VMM_STEP_LIST_MEMBER(f) std::vector<Located<std::string>> f;
#define VMM_STEP_MAP_MEMBER(f, key) StepMap f;
    VMM_STEP_LIST_FIELDS(VMM_STEP_LIST_MEMBER)
    VMM_STEP_MAP_FIELDS(VMM_STEP_MAP_MEMBER)
#undef VMM_STEP_LIST_MEMBER
#undef VMM_STEP_MAP_MEMBER
    std::vector<DeviceAccessEntry> device_access;
    std::vector<std::vector<Step>> branches;
  };
  static const RareFields kNoRare;
  static const StepMap kNoKeys;
  static const IsolateSpec kNoIsolate;

  const Located<std::string>& Text(Field f) const;
  const Located<uint64_t>& Number(Field f) const;
  const Located<bool>& Flag(Field f) const;
  Located<std::string>& MutableText(Field f);
  Located<uint64_t>& MutableNumber(Field f);
  Located<bool>& MutableFlag(Field f);
  RareFields& Rare();

  // In the order the fields were first written; a step has a handful, so lookups are linear.
  std::vector<Entry<Located<std::string>>> texts_;
  std::vector<Entry<Located<uint64_t>>> numbers_;  // sizes, integers and durations
  std::vector<Entry<Located<bool>>> flags_;
  Boxed<RareFields> rare_;
  Boxed<StepMap> keys_;
  Boxed<IsolateSpec> isolate_;
};

// Which schema key fills which Step field, by the field's kind (the schema says which op takes
// which key): the field's mutable_ accessor. A scalar key the tables lack lands in
// Step::keys(); a map or list key they lack is an internal error found by the scenario tests.
template <typename V>
struct StepFieldRow {
  const char* key;
  V& (Step::*field)();
};
#define VMM_STEP_ROW(f) {#f, &Step::mutable_##f},
#define VMM_STEP_MAP_ROW(f, key) {key, &Step::mutable_##f},
inline constexpr StepFieldRow<Located<std::string>> kStepTextFields[] = {
    VMM_STEP_TEXT_FIELDS(VMM_STEP_ROW)};
inline constexpr StepFieldRow<Located<uint64_t>> kStepSizeFields[] = {
    VMM_STEP_SIZE_FIELDS(VMM_STEP_ROW)};
inline constexpr StepFieldRow<Located<uint64_t>> kStepIntegerFields[] = {
    VMM_STEP_INTEGER_FIELDS(VMM_STEP_ROW)};
inline constexpr StepFieldRow<Located<uint64_t>> kStepDurationFields[] = {
    VMM_STEP_DURATION_FIELDS(VMM_STEP_ROW)};
inline constexpr StepFieldRow<Located<bool>> kStepFlagFields[] = {
    VMM_STEP_FLAG_FIELDS(VMM_STEP_ROW)};
inline constexpr StepFieldRow<std::vector<Located<std::string>>> kStepListFields[] = {
    VMM_STEP_LIST_FIELDS(VMM_STEP_ROW)};
inline constexpr StepFieldRow<StepMap> kStepMapFields[] = {VMM_STEP_MAP_FIELDS(VMM_STEP_MAP_ROW)};
#undef VMM_STEP_ROW
#undef VMM_STEP_MAP_ROW

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
