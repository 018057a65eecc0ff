// The plan: a scenario whose names are resolved to dense slot indices and whose every step was
// proven legal by simulating the VMM/graph state machine (BuildPlan). The executor runs a Plan
// against an Engine without re-checking anything: if BuildPlan returned no diagnostics, every
// reference is to a live object, every map is inside its reservation and over unmapped space, every
// unmap covers mapped space, every size and offset is a multiple of the granularity, and every
// graph/exec used exists. Pure C++: no YAML, no CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/scenario/scenario.h"
#include "runner/vocab/access.h"
#include "runner/vocab/isolate.h"

namespace vmm {

struct IsolatedBlock;

// A buffer or a view (base >= 0). Data steps address both alike, by slot.
struct PlanBuffer {
  std::string name;
  int base = -1;        // views: the slot of the buffer whose reservation holds the view
  uint64_t offset = 0;  // views: bytes from the start of that reservation
  std::vector<uint64_t> shape;
  uint64_t elements = 0;
  uint64_t bytes = 0;  // elements * 4
  uint64_t reservation_size =
      0;  // from the reserve step (bytes rounded up to granularity if unset)
};

// What a check step expects, decoded from the step's `expect` string.
enum class Expectation {
  kNone,        // steps that check nothing
  kPass,        // check_matmul: every element within the fp64 error bound
  kEqual,       // check_equal, check_value
  kDifferent,   // check_equal, check_value, check_address, check_kernel_params
  kSame,        // check_address
  kIdentical,   // check_kernel_params
  kUpdateCode,  // update: see PlanStep::expect_update
};

// Field order matters: what a VMM step needs (to run and to be reported) comes first, so it
// spans two cache lines; the executor reads it again after a burst of driver calls, cold.
struct PlanStep {
  const Step* src = nullptr;  // the scenario step; the Scenario must outlive the Plan
  Op op = Op::kSynchronize;
  Access access = Access::kReadWrite;
  bool named = false;  // the scenario gave the step a name (label is that name)
  bool fatal = false;
  int index = 0;  // position in the top-level step list (capture bodies: inner index)
  int line = 0;   // the step's line in the scenario file
  uint32_t repeat = 1;
  // Slots (index into Plan's name tables), -1 when unused.
  int buffer = -1, alloc = -1;
  // Resolved numbers (defaults applied).
  uint64_t offset = 0, size = 0, alloc_offset = 0, alignment = 0;
  std::string label;  // the step's name, or "<op> <target>" (e.g. "map A") when unnamed

  int graph = -1, exec = -1, snapshot = -1, other = -1;
  int a = -1, b = -1, c = -1;
  std::vector<int> of_steps;  // check_address: indices of the steps whose addresses are compared
  std::vector<int> graphs;    // check_kernel_params
  uint64_t seed = 0;
  uint32_t pattern = 0;  // memset / check_value: the 32-bit word every element is set to / holds
  uint32_t m = 0, n = 0, k = 0;  // matmul / check_matmul dimensions
  Expectation expect = Expectation::kNone;
  UpdateCode expect_update = UpdateCode::kSuccess;
  bool async = false;  // fill/matmul: leave the kernel in flight (no OpTiming)
  bool wait = true;    // unmap/release: wait for in-flight work first (false: isolate blocks only)
  uint64_t duration_ns = 0;  // busy

  std::vector<PlanStep> body;  // capture
  // isolate: the block's own plan (its steps, run by a child process) and what it expects. Shared
  // so that PlanStep stays copyable; immutable once built.
  std::shared_ptr<const IsolatedBlock> block;
};

struct Plan {
  std::string scenario_name;
  uint64_t granularity = 0;
  std::vector<PlanBuffer> buffers;
  std::vector<std::string> allocs, graphs, execs, snapshots;  // slot -> name
  std::vector<uint64_t> alloc_sizes;                          // slot -> bytes
  std::vector<PlanStep> steps;
};

// An isolate block, validated as a plan of its own: the scenario's buffers and views (declarations
// only: the child reserves, creates and maps for itself), its steps at indices 0.., and the names
// of the objects it makes. A child process runs `plan` with RunPlan.
struct IsolatedBlock {
  Plan plan;
  BlockExpectation expect;
};

// Resolves and validates `scenario`. On success `diagnostics` is empty; otherwise it holds every
// problem found (one pass, in file order) and the returned Plan must not be run.
Plan BuildPlan(const Scenario& scenario, std::vector<Diagnostic>* diagnostics);

}  // namespace vmm
