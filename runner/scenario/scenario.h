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

// One step. Which fields are meaningful depends on `op` (see the enum); the others stay unset.
struct Step {
  Op op = Op::kSynchronize;
  SourceLoc loc;              // where the step's map starts
  Located<std::string> name;  // label in logs and reports; referenced by check_address

  // Names of things the step acts on.
  Located<std::string> buffer, alloc, graph, exec, snapshot, other;
  Located<std::string> a, b, c;              // matmul operands (buffer names)
  std::vector<Located<std::string>> of;      // check_address: step names
  std::vector<Located<std::string>> graphs;  // check_kernel_params: graph names

  // Sizes and numbers (sizes already converted from units to bytes).
  Located<uint64_t> size, offset, alloc_offset, alignment, seed;
  Located<std::string> access;  // "read_write" | "read" | "none"
  Located<std::string> expect;  // op-specific expectation, e.g. "same", "success", "different"
  Located<uint32_t> repeat;     // run the step this many times and report min/median/p99
  Located<bool> fatal;          // a failed check stops the run
  Located<bool> async;          // fill/matmul: enqueue and do not wait (no device time)

  std::vector<Step> steps;  // capture body
};

// A named fp32 tensor living at the start of a reservation of the same name.
struct BufferDecl {
  std::string name;
  SourceLoc loc;
  std::vector<uint64_t> shape;  // row-major; product = element count
  std::string dtype = "f32";
  uint64_t elements() const;
  uint64_t bytes() const { return elements() * 4; }
};

struct Scenario {
  std::string file;  // path as given
  int version = 1;
  std::string name;
  std::string description;
  Located<uint64_t> granularity;  // default 2 MiB (CUDA's minimum on every VMM-capable GPU so far)
  std::vector<BufferDecl> buffers;
  std::vector<Step> steps;
  // `vars:` as used (after --set), in declaration order: name -> value (decimal or text).
  std::vector<std::pair<std::string, std::string>> vars;
};

inline constexpr uint64_t kDefaultGranularity = 2ull << 20;

}  // namespace vmm
