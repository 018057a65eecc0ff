// PyTorch allocator snapshots (`torch.cuda.memory._dump_snapshot`, read with ReadPickle) as
// scenarios. ReadTorchSnapshot takes what a scenario needs out of the snapshot's dict: the
// segments alive at the dump and each device's trace of allocator events. SnapshotScenario turns
// one device's trace into a scenario of the same VMM calls: each expandable segment a reservation
// whose pages are created, mapped and opened by segment_map and unmapped and released by
// segment_unmap (as PyTorch's expandable segments do: one handle per page); each plain segment
// (segment_alloc / segment_free, cudaMalloc underneath) a reservation with one allocation; and,
// standing in for the program's kernels, a memset of every allocation when it is made and a
// check of it before it is freed. What cannot be replayed (events about memory mapped before the
// trace began, unknown actions) is left out and counted in the scenario's header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/trace/pickle_reader.h"

namespace vmm::trace {

struct SnapshotEvent {
  std::string action;  // "segment_map", "segment_unmap", "segment_alloc", "alloc", ...
  uint64_t addr = 0, size = 0;
  int64_t stream = 0;
};

struct SnapshotSegment {
  int device = 0;
  uint64_t address = 0, total_size = 0;
  bool expandable = false;
  std::string type;  // "small" or "large" (the pool)
};

struct TorchSnapshot {
  std::vector<SnapshotSegment> segments;
  std::vector<std::vector<SnapshotEvent>> device_traces;  // by device ordinal
  std::string alloc_conf;  // allocator_settings' PYTORCH_CUDA_ALLOC_CONF, when recorded
};

// The parts of a snapshot's top-level dict a scenario needs; an error names the path that is
// missing or of the wrong kind ("device_traces[0][3].addr: expected an integer, got text").
StatusOr<TorchSnapshot> ReadTorchSnapshot(const PickleValue& root);

struct SnapshotImportOptions {
  std::string name;    // the scenario's name
  std::string source;  // the file, for the header
  int device = -1;     // the trace to import; -1: the only device with allocator events
  bool data = true;    // memset / check_value stand-ins for the program's kernels
};

// The scenario text (YAML with a header comment), or an error: no device with events, several
// without `device`, or pages the scenario's 2 MiB granularity cannot express.
StatusOr<std::string> SnapshotScenario(const TorchSnapshot& snapshot,
                                       const SnapshotImportOptions& options);

}  // namespace vmm::trace
