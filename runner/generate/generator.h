// The scenario generator: random, valid, readable scenarios from a seed (`vmm-run generate`,
// docs/generator.md). Each scenario is a plain scenario file (no vars or loops) of reservations,
// creates (sizes, devices, locations, handle types), maps at offsets, views, access per device,
// unmaps and remaps, copies, memsets, fills, matmuls, checks, queries, mark/check_memory, graph
// captures with every node kind (branches, conditional nodes, memory nodes, child graphs),
// instantiate / replay / update / set_node, isolate blocks (some ending in an expected fault), and
// calls the VMM rule table marks as safe to send, under `expect_error`.
//
// Contract:
//   - Deterministic: the same options and seed give the same text, byte for byte, on every
//     machine (runner/generate/rng.h).
//   - Valid: the text parses and validates (BuildPlan gives no diagnostic). A generated scenario
//     that does not is a bug of the generator or of the validator; tests hold every seed they try
//     to it.
//   - Honest: every check's expectation is what the generator's own model of the run
//     (runner/generate/model.h) says, never read back from an engine. No step reads memory that
//     was never written (a GPU's fresh memory is not zero; the twin's is).
//   - Bounded: at most options.steps top-level steps plus a teardown, tensors of at most
//     options.max_tensor_bytes, matmuls of at most 64x64x64, busy kernels of at most 2 ms.
#pragma once

#include <cstdint>
#include <string>

namespace vmm::gen {

struct GenOptions {
  uint64_t seed = 1;
  int steps = 60;           // top-level steps before the teardown (about)
  int devices = 1;          // devices the scenarios use (1 or 2; 2 adds `requires: {devices: 2}`)
  int isolate_percent = 0;  // chance (%) that a scenario has an isolate block (a child process)
  uint64_t max_tensor_bytes = 1ull << 20;
  bool graphs = true;         // captures, instantiates, replays, updates, set_node
  bool expect_errors = true;  // calls the rule table marks safe, under expect_error
  bool host_memory = true;    // creates at `location: host` / `host_numa` (with `requires`)
};

struct GeneratedScenario {
  std::string name;  // "gen_<seed>"
  std::string text;  // the scenario file
  int steps = 0;     // top-level steps written
};

GeneratedScenario Generate(const GenOptions& options);

}  // namespace vmm::gen
