// The typed scenario tree: what a scenario file says, with the source location of every value.
//
// Produced by ParseScenario (parse.h), which has already checked the file against
// schemas/scenario.schema.json: every Step carries exactly the fields its op allows, with the right
// types, and required fields are present. Names are NOT resolved here (that is runner/plan's job).
// Pure C++: no YAML type appears in this header.
#pragma once

#include <cstdint>
#include <string>
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

// What an isolate block (`{isolate: {...}, steps: [...]}`, op kIsolate) says about its child. The
// expectation is one of: `expect: ok`, `expect: CUDA_ERROR_<NAME>` (both in `expect`), `expect:
// {signal: SIGSEGV}` (in `signal`) or `expect: {timeout: 5s}` (in `timeout`).
struct IsolateSpec {
  Located<std::string> expect;   // "ok" (the default) or a CUDA error name; unset for a map form
  Located<std::string> signal;   // expect: {signal: NAME}
  Located<uint64_t> timeout;     // expect: {timeout: DURATION}, nanoseconds
  Located<uint64_t> kill_after;  // nanoseconds; the schema's default when unset
};

// One step. Which fields are meaningful depends on `op` (see the enum); the others stay unset.
struct Step {
  Op op = Op::kSynchronize;
  SourceLoc loc;              // where the step's map starts
  Located<std::string> name;  // label in logs and reports; referenced by check_address

  // Names of things the step acts on.
  Located<std::string> buffer, alloc, graph, exec, snapshot, other;
  Located<std::string> from, to;         // copy: source (buffer, view or snapshot) and destination
  Located<std::string> a, b, c;          // matmul operands (buffer names)
  std::vector<Located<std::string>> of;  // check_address: step names
  std::vector<Located<std::string>> graphs;  // check_kernel_params: graph names

  // Sizes and numbers (sizes already converted from units to bytes).
  Located<uint64_t> size, offset, alloc_offset, alignment, seed;
  Located<uint64_t> value, byte;  // memset / check_value: a 32-bit pattern, or one byte repeated
  Located<std::string> access;    // "read_write" | "read" | "none"
  Located<std::string> expect;    // op-specific expectation, e.g. "same", "success", "different"
  Located<uint64_t> repeat;       // run the step this many times and report min/median/p99
  Located<bool> fatal;            // a failed check stops the run
  Located<bool> async;            // fill/matmul: enqueue and do not wait (no device time)
  Located<uint64_t> duration;     // busy: how long the kernel runs, nanoseconds
  Located<bool> wait;  // unmap/release: wait for in-flight work first (false: isolate blocks only)

  std::vector<Step> steps;  // capture body; isolate block body
  IsolateSpec isolate;      // isolate blocks only
};

// Which schema key fills which Step field, by the field's kind: the one list of step keys (the
// schema says which op takes which key; a key the schema has but these tables lack is an internal
// error found by the scenario tests). A new key is a Step member plus a row here.
struct StepTextField {
  const char* key;
  Located<std::string> Step::*field;
};
inline constexpr StepTextField kStepTextFields[] = {
    {"name", &Step::name},   {"buffer", &Step::buffer}, {"alloc", &Step::alloc},
    {"graph", &Step::graph}, {"exec", &Step::exec},     {"snapshot", &Step::snapshot},
    {"other", &Step::other}, {"a", &Step::a},           {"b", &Step::b},
    {"c", &Step::c},         {"access", &Step::access}, {"expect", &Step::expect},
    {"from", &Step::from},   {"to", &Step::to},
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
inline constexpr StepIntegerField kStepIntegerFields[] = {{"seed", &Step::seed},
                                                          {"repeat", &Step::repeat},
                                                          {"value", &Step::value},
                                                          {"byte", &Step::byte}};
struct StepFlagField {
  const char* key;
  Located<bool> Step::*field;
};
inline constexpr StepFlagField kStepFlagFields[] = {
    {"fatal", &Step::fatal}, {"async", &Step::async}, {"wait", &Step::wait}};
struct StepDurationField {  // durations with units ("200ms"), converted to nanoseconds
  const char* key;
  Located<uint64_t> Step::*field;
};
inline constexpr StepDurationField kStepDurationFields[] = {{"duration", &Step::duration}};
struct StepListField {  // lists of names
  const char* key;
  std::vector<Located<std::string>> Step::*field;
};
inline constexpr StepListField kStepListFields[] = {{"of", &Step::of}, {"graphs", &Step::graphs}};

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
  Located<std::string> backend;     // "host" or "cuda"
  Located<uint64_t> devices;        // at least this many devices of the backend
  Located<uint64_t> device_memory;  // at least this much memory on the device, bytes
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
};

inline constexpr uint64_t kDefaultGranularity = 2ull << 20;
// A view's offset is a multiple of this, so device kernels over it stay vectorised.
inline constexpr uint64_t kViewAlignment = 256;

}  // namespace vmm
