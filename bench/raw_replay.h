// A scenario's plan replayed straight to the CUDA driver, the runtime and vmm-run's kernels, with
// no runner and no engine in between: the reference a whole run is held to (issue 32 item 5,
// bench/replay_bench.cc).
//
// Each top-level step becomes the calls the CUDA engine makes for it, in the same order, with the
// same sizes, on one stream of the current device's primary context:
//   - reserve, free, create, release, map, set_access, unmap: the cuMem* call itself (an unmap or
//     release first waits for the stream when asynchronous work is in flight, as the engine does);
//   - fill, matmul, memset: the launch, then a wait for it (the run times every launch);
//   - snapshot: the destination's allocation (device memory, or pinned host memory), the copy
//     with its hash (to the host: the copy, then the hash), the hash read back;
//   - copy (not async): the cudaMemcpyAsync between buffers and device or pinned snapshots, a
//     wait, and the source's hash when it fills a snapshot from a buffer;
//   - check_equal, check_value, check_matmul: the engine's check kernels on scratch memory
//     allocated before the replay, the state read back (and check_matmul's three buffer hashes);
//   - capture (of fill, matmul and memset steps), instantiate, replay, update, destroy_graph,
//     destroy_exec, synchronize: the graph calls themselves (a replay waits for its graph).
// What the runner does around the calls (planning, records, verdicts, reading a captured graph
// back to report it) is absent by design. A step of any other op, a pageable snapshot, an async
// copy, and the copies and checks that use a snapshot not replayed, are not replayed: each is
// counted under `skipped`, and the caller says so beside its figures. Steps in isolate blocks,
// threads groups, steps that expect an error and repeat > 1 of any op but replay and update
// (which are replayed `repeat` times) are skipped the same way, and so is a step on a graph the
// replay could not capture.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runner/plan/plan.h"

namespace vmm::bench {

struct ReplayCosts {
  double total_us = 0;  // the replayed steps' time, summed (the loop between them is not counted)
  std::map<std::string, double> us;    // by op name: the replayed steps' time
  std::map<std::string, int> steps;    // by op name: how many were replayed
  std::map<std::string, int> skipped;  // by op name: steps not replayed
  // Reading each captured graph back (not in the totals): the walk over its nodes, as the CUDA
  // engine does after a capture, and the driver's DOT text, which the engine takes only with
  // `run --driver-dot` (otherwise it draws the DOT from the walk's structure).
  std::vector<double> walk_us, dot_us;
  size_t dot_bytes = 0;
  std::string error;  // the first failed call ("" when none failed)
};

// Replays `plan` on the calling thread's current device (the primary context the CUDA engine
// uses). Every object it makes is destroyed before it returns, the time of the destruction of
// what the plan left alive excluded (the run's own teardown is outside its duration too).
ReplayCosts ReplayRaw(const Plan& plan);

}  // namespace vmm::bench
