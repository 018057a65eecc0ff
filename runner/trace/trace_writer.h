// TraceWriter: the state TraceScenario keeps while it walks one process's records (internal to
// runner/trace): the live reservations and their mappings (with device 0's access and the
// stand-in view over each), the live handles, the graphs, and the steps written so far. Its
// methods are in trace_scenario.cc (the walk, the header, the declarations) and trace_memory.cc
// (each call's steps and the stand-ins).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runner/base/format.h"
#include "runner/base/status.h"
#include "runner/trace/call_trace.h"
#include "runner/trace/trace_graphs.h"
#include "runner/trace/trace_scenario.h"
#include "runner/vocab/cuda_errors.h"

namespace vmm::trace {

inline constexpr uint64_t kMiB = 1ull << 20;
// The scenario's granularity (the H200's and the twin's).
inline constexpr uint64_t kGranule = 2 * kMiB;

inline std::string AccessWord(unsigned flags) {
  return flags == 3 ? "read_write" : flags == 1 ? "read" : "none";
}

inline std::string ResultText(int result) {
  const CudaErrorName* e = FindCudaErrorByValue(result);
  return e != nullptr ? e->name : "CUresult " + std::to_string(result);
}

// A launch parameter inside a reservation but in no mapping: an integer that looks like an address
// of the (often 100+ GiB) reservation, or a use of unmapped memory.
inline constexpr const char* kUnmappedWord =
    "launch parameter inside a reservation but in no mapping (an integer that looks like an "
    "address, or unmapped memory)";

struct Mapping {
  uint64_t size = 0;
  std::string alloc;
  bool writable = false;  // device 0 has read_write access
  int view = -1;          // the stand-in view over it, once a launch touched it
  bool written = false;   // a stand-in memset wrote it and no check has read it since
  // A launch given it since the last synchronisation: its stand-in step, or -1.
  int64_t inflight = -1;
  const TraceRecord* launch = nullptr;  // that launch
};

// The results after which a CUDA context is unusable: a kernel faulted.
inline bool IsFault(int result) {
  return result == 700 /* CUDA_ERROR_ILLEGAL_ADDRESS */ ||
         result == 719 /* CUDA_ERROR_LAUNCH_FAILED */;
}

struct Region {
  std::string name;
  uint64_t base = 0, size = 0;
  bool live = true;
  std::map<uint64_t, Mapping> maps;  // offset in the reservation -> mapping
};

struct Alloc {
  std::string name;
  uint64_t size = 0;
};

// A record the driver would have refused, yet recorded as done (a hand-made or damaged trace).
inline constexpr const char* kImpossible =
    "call recorded as done that the driver refuses (overlapping, half a mapping, out of range)";
inline constexpr uint64_t kMaxDevices = 32;  // the language's device ordinals: 0..31

struct View {
  std::string name, region;
  uint64_t offset = 0, size = 0;
  uint32_t value = 0;  // what its last stand-in wrote
};

class TraceWriter {
 public:
  TraceWriter(const CallTrace& t, const TraceImportOptions& o, uint64_t pid)
      : trace_(t), options_(o), pid_(pid) {}
  Status Write(std::string* text);

 private:
  Status Sized(const TraceRecord& r, uint64_t bytes, const char* what);
  Status One(const TraceRecord& r);
  Status Graph(const TraceRecord& r, const std::string& step);
  // The mapping a stand-in's view covers, still mapped as it was when the view was made and
  // writable by device 0; nullptr otherwise.
  Mapping* MappingOfView(int view);
  bool Writable(const GraphWrite& w) { return MappingOfView(w.view) != nullptr; }
  // A replay writes what its graph's stand-ins write: into the mappings at their views now.
  Status Replay(const TraceRecord& r);
  Status Map(const TraceRecord& r);
  // The mappings of `g` that [offset, offset + size) covers, or none when part of it is not known.
  std::vector<uint64_t> Covered(Region& g, uint64_t offset, uint64_t size);
  // The same for a record's ptr and size: also its region (nullptr: none) and the offset in it.
  std::vector<uint64_t> CoveredBy(const TraceRecord& r, Region** g, uint64_t* offset);
  Status SetAccess(const TraceRecord& r);
  Status Unmap(const TraceRecord& r);
  void Launch(const TraceRecord& r);
  void Check(Mapping& m, const std::string& why);
  void Teardown();
  // The steps as the scenario's list: at the top level, or (fault mode) in one isolate block
  // that expects the program's fault where the program saw it.
  std::string StepList() const;
  std::string Header() const;
  std::string Declarations() const;
  Region* RegionOf(uint64_t addr);
  Region* RegionOverlapping(uint64_t base, uint64_t size);
  static bool Overlaps(const Region& g, uint64_t offset, uint64_t size);
  static const Mapping* MappingAt(const Region& g, uint64_t offset);
  void UseDevice(uint64_t device) { devices_ = std::max(devices_, device + 1); }
  Region* RegionNamed(const std::string& name);
  static std::string HandleTypes(const TraceRecord& r);
  Region* RegionAt(uint64_t base, bool live);
  Status Skip(const std::string& why);
  static std::string Shorten(const std::string& kernel);
  // Appends a step; its index (a stand-in may be rewritten when a race is found later).
  size_t Step(const std::string& step, const std::string& comment = "");

  const CallTrace& trace_;
  const TraceImportOptions& options_;
  const uint64_t pid_;
  std::vector<Region> regions_;
  std::vector<View> views_;
  TraceGraphs graphs_;
  std::map<uint64_t, std::vector<Alloc>> handles_;  // handle value -> live allocs (latest last)
  uint64_t devices_ = 1;  // the scenario's devices: 1 + the highest device the trace names
  std::map<std::string, size_t> calls_, left_out_, failed_, not_replayed_;
  const TraceRecord* first_failure_ = nullptr;
  std::vector<std::string> steps_;      // each step's text, "{op: ...}  # comment"
  size_t teardown_ = SIZE_MAX;          // the index of the first step Teardown wrote
  const TraceRecord* fault_ = nullptr;  // the program's fault (fault mode), or nullptr
  bool racing_ = false;                 // fault mode: memory was unmapped under a running stand-in
  int next_alloc_ = 0;
  uint64_t writes_ = 0;
  size_t stood_in_again_ = 0;
  size_t after_fault_ = 0;  // records after the fault, not replayed
  bool unsynced_ = false;   // a stand-in was written since the last synchronize
};

}  // namespace vmm::trace
