// TraceScenario (trace_scenario.h): one pass over the chosen process's records in order, keeping
// the live reservations, their mappings (with device 0's access) and the live handles, and
// writing a step for each call it replays.
#include "runner/trace/trace_scenario.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "runner/base/format.h"
#include "runner/trace/trace_compare.h"
#include "runner/trace/trace_graphs.h"
#include "runner/vocab/cuda_errors.h"
#include "runner/yaml/yaml_writer.h"

namespace vmm::trace {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGranule = 2 * kMiB;  // the scenario's granularity (the H200's and the twin's)

std::string SizeText(uint64_t bytes) {
  if (bytes != 0 && bytes % (1ull << 30) == 0) return std::to_string(bytes >> 30) + "GiB";
  if (bytes != 0 && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + "MiB";
  return std::to_string(bytes);
}

std::string AccessWord(unsigned flags) {
  return flags == 3 ? "read_write" : flags == 1 ? "read" : "none";
}

std::string ResultText(int result) {
  const CudaErrorName* e = FindCudaErrorByValue(result);
  return e != nullptr ? e->name : "CUresult " + std::to_string(result);
}

// A launch parameter inside a reservation but in no mapping: an integer that looks like an address
// of the (often 100+ GiB) reservation, or a use of unmapped memory.
constexpr const char* kUnmappedWord =
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
bool IsFault(int result) {
  return result == 700 /* CUDA_ERROR_ILLEGAL_ADDRESS */ ||
         result == 719 /* CUDA_ERROR_LAUNCH_FAILED */;
}

struct Region {
  std::string name;
  uint64_t base = 0, size = 0;
  bool live = true;
  std::map<uint64_t, Mapping> maps;  // offset in the reservation -> mapping
};

struct View {
  std::string name, region;
  uint64_t offset = 0, size = 0;
  uint32_t value = 0;  // what its last stand-in wrote
};

class Writer {
 public:
  Writer(const CallTrace& t, const TraceImportOptions& o, uint64_t pid)
      : trace_(t), options_(o), pid_(pid) {}

  Status Write(std::string* text) {
    for (const TraceRecord& r : trace_.records) {
      if (r.pid == pid_ && IsFault(r.result)) {
        fault_ = &r;
        break;
      }
    }
    for (const TraceRecord& r : trace_.records) {
      if (r.pid != pid_) continue;
      if (fault_ != nullptr && r.line > fault_->line) {
        ++after_fault_;
        continue;
      }
      ++calls_[r.info().name];
      if (&r == fault_) {
        Step("{op: synchronize, name: the fault surfaces}",
             std::string("the program's ") + r.info().name + " returned " + ResultText(r.result) +
                 " (line " + std::to_string(r.line) + ")");
        continue;
      }
      if (r.call == TraceCall::k_cuMemCreate && r.result == 800 && (r.Number("handle_types") & 8)) {
        // A fabric handle refused (CUDA_ERROR_NOT_PERMITTED: no IMEX channel), as PyTorch's
        // allocator tries first: the twin refuses it alike, so it is replayed as a refusal.
        Step("{op: create, alloc: h" + std::to_string(next_alloc_) +
                 ", size: " + SizeText(r.Number("size")) + HandleTypes(r) +
                 ", expect_error: CUDA_ERROR_NOT_PERMITTED}",
             "the program's try at a fabric handle, refused (line " + std::to_string(r.line) + ")");
        continue;
      }
      if (r.result != 0) {
        ++failed_[std::string(r.info().name) + " returned " + ResultText(r.result)];
        if (first_failure_ == nullptr) first_failure_ = &r;
        continue;
      }
      VMM_RETURN_IF_ERROR(One(r));
    }
    if (fault_ == nullptr) Teardown();
    *text = Header() + Declarations() + StepList();
    return Status::Ok();
  }

 private:
  Status Sized(const TraceRecord& r, uint64_t bytes, const char* what) {
    if (bytes % kGranule == 0) return Status::Ok();
    return InvalidInput("line " + std::to_string(r.line) + ": " + r.info().name + " " + what +
                        " of " + std::to_string(bytes) +
                        " bytes, not a multiple of the scenario's 2 MiB granularity");
  }

  Status One(const TraceRecord& r) {
    switch (r.call) {
      case TraceCall::k_cuMemAddressReserve: {
        VMM_RETURN_IF_ERROR(Sized(r, r.Number("size"), "size"));
        Region& g = regions_.emplace_back();
        g.name = "R" + std::to_string(regions_.size() - 1);
        g.base = r.Number("ptr");
        g.size = r.Number("size");
        const uint64_t align = r.Number("alignment");
        Step("{op: reserve, buffer: " + g.name + ", size: " + SizeText(g.size) +
                 (align > kGranule ? ", alignment: " + SizeText(align) : "") + "}",
             "at " + Hex(g.base) + " in the trace");
        return Status::Ok();
      }
      case TraceCall::k_cuMemAddressFree: {
        Region* g = RegionAt(r.Number("ptr"), true);
        if (g == nullptr) return Skip("cuMemAddressFree of a range reserved before the trace");
        g->live = false;
        Step("{op: free, buffer: " + g->name + "}");
        return Status::Ok();
      }
      case TraceCall::k_cuMemCreate: {
        VMM_RETURN_IF_ERROR(Sized(r, r.Number("size"), "size"));
        const uint64_t location = r.Number("location"), id = r.Number("device");
        std::string where;
        if (location == 1 && id != 0) where = ", device: " + std::to_string(id);
        if (location == 2) where = ", location: host";
        if (location == 3) where = ", location: host_numa, numa_node: " + std::to_string(id);
        if (location == 0 || location > 3) return Skip("cuMemCreate at an unknown location");
        const std::string alloc = "h" + std::to_string(next_alloc_++);
        handles_[r.Number("handle")].push_back(alloc);
        Step("{op: create, alloc: " + alloc + ", size: " + SizeText(r.Number("size")) + where +
             HandleTypes(r) + "}");
        return Status::Ok();
      }
      case TraceCall::k_cuMemRelease: {
        auto it = handles_.find(r.Number("handle"));
        if (it == handles_.end() || it->second.empty())
          return Skip("cuMemRelease of a handle made before the trace");
        Step("{op: release, alloc: " + it->second.back() + (racing_ ? ", wait: false" : "") + "}",
             racing_ ? "as the program did: without waiting for the kernel still running" : "");
        it->second.pop_back();
        return Status::Ok();
      }
      case TraceCall::k_cuMemRetainAllocationHandle: {
        Region* g = RegionOf(r.Number("ptr"));
        if (g == nullptr) return Skip("cuMemRetainAllocationHandle outside the reservations");
        const std::string alloc = "h" + std::to_string(next_alloc_++);
        handles_[r.Number("handle")].push_back(alloc);
        Step("{op: retain, alloc: " + alloc + ", buffer: " + g->name +
             ", offset: " + std::to_string(r.Number("ptr") - g->base) + "}");
        return Status::Ok();
      }
      case TraceCall::k_cuMemMap:
        return Map(r);
      case TraceCall::k_cuMemSetAccess:
        return SetAccess(r);
      case TraceCall::k_cuMemUnmap:
        return Unmap(r);
      case TraceCall::k_cuLaunchKernel:
        if (options_.data) Launch(r);
        return Status::Ok();
      case TraceCall::k_cuStreamBeginCapture:
        graphs_.Begin(r.Number("stream"));
        return Status::Ok();
      case TraceCall::k_cuStreamEndCapture:
        return Graph(r, graphs_.End(r.Number("stream"), r.Number("graph")));
      case TraceCall::k_cuGraphInstantiate:
        return Graph(r, graphs_.Instantiate(r.Number("graph"), r.Number("exec")));
      case TraceCall::k_cuGraphDestroy:
        return Graph(r, graphs_.DestroyGraph(r.Number("graph")));
      case TraceCall::k_cuGraphExecDestroy:
        return Graph(r, graphs_.DestroyExec(r.Number("exec")));
      case TraceCall::k_cuGraphLaunch:
        return Replay(r);
      case TraceCall::k_cuStreamSynchronize:
      case TraceCall::k_cuCtxSynchronize:
      case TraceCall::k_cuEventSynchronize:
        if (unsynced_) Step("{op: synchronize}", std::string("the program's ") + r.info().name);
        unsynced_ = false;
        racing_ = false;
        for (Region& g : regions_)
          for (auto& [offset, m] : g.maps) m.inflight = -1;
        return Status::Ok();
      default:
        ++not_replayed_[r.info().name];
        return Status::Ok();
    }
  }

  Status Graph(const TraceRecord& r, const std::string& step) {
    if (!step.empty())
      Step(step, std::string("the program's ") + r.info().name + " (line " +
                     std::to_string(r.line) + ")");
    return Status::Ok();
  }

  // A replay writes what its graph's stand-ins write: into the mappings at their views now.
  Status Replay(const TraceRecord& r) {
    std::vector<GraphWrite> writes;
    const std::string step = graphs_.Replay(r.Number("exec"), &writes);
    if (step.empty()) return Status::Ok();
    std::vector<Mapping*> targets;
    for (const GraphWrite& w : writes) {
      const View& v = views_[w.view];
      Region* g = RegionNamed(v.region);
      auto it = g != nullptr ? g->maps.find(v.offset) : std::map<uint64_t, Mapping>::iterator{};
      if (g == nullptr || it == g->maps.end() || it->second.size != v.size || !it->second.writable)
        return Skip("cuGraphLaunch over memory no longer mapped as it was captured");
      targets.push_back(&it->second);
    }
    for (size_t i = 0; i < writes.size(); ++i) {
      targets[i]->written = true;
      targets[i]->view = writes[i].view;
      views_[writes[i].view].value = writes[i].value;
    }
    return Graph(r, step);
  }

  Status Map(const TraceRecord& r) {
    Region* g = RegionOf(r.Number("ptr"));
    auto h = handles_.find(r.Number("handle"));
    if (g == nullptr || h == handles_.end() || h->second.empty())
      return Skip("cuMemMap of a handle or range made before the trace");
    const uint64_t offset = r.Number("ptr") - g->base;
    VMM_RETURN_IF_ERROR(Sized(r, offset, "offset"));
    if (r.Number("offset") != 0) return Skip("cuMemMap at an offset into its allocation");
    Step("{op: map, buffer: " + g->name + ", alloc: " + h->second.back() +
         ", offset: " + SizeText(offset) + "}");
    Mapping& m = g->maps[offset];
    m = Mapping{};
    m.size = r.Number("size");
    m.alloc = h->second.back();
    return Status::Ok();
  }

  // The mappings of `g` that [offset, offset + size) covers, or none when part of it is not known.
  std::vector<uint64_t> Covered(Region& g, uint64_t offset, uint64_t size) {
    std::vector<uint64_t> found;
    uint64_t at = offset;
    while (at < offset + size) {
      auto it = g.maps.find(at);
      if (it == g.maps.end()) return {};
      found.push_back(at);
      at += it->second.size;
    }
    return found;
  }

  Status SetAccess(const TraceRecord& r) {
    Region* g = RegionOf(r.Number("ptr"));
    const uint64_t offset = g != nullptr ? r.Number("ptr") - g->base : 0;
    const std::vector<uint64_t> covered =
        g != nullptr ? Covered(*g, offset, r.Number("size")) : std::vector<uint64_t>{};
    if (covered.empty()) return Skip("cuMemSetAccess of memory mapped before the trace");
    std::string access;
    if (r.access.size() == 1 && r.access[0].first == 0) {
      access = AccessWord(r.access[0].second);
    } else {
      for (const auto& [device, flags] : r.access)
        access += (access.empty() ? "{" : ", ") + std::to_string(device) + ": " + AccessWord(flags);
      access += "}";
    }
    for (const auto& [device, flags] : r.access)
      if (device == 0)
        for (uint64_t at : covered) g->maps[at].writable = flags == 3;
    Step("{op: set_access, buffer: " + g->name + ", offset: " + SizeText(offset) +
         ", size: " + SizeText(r.Number("size")) + ", access: " + access + "}");
    return Status::Ok();
  }

  Status Unmap(const TraceRecord& r) {
    Region* g = RegionOf(r.Number("ptr"));
    const uint64_t offset = g != nullptr ? r.Number("ptr") - g->base : 0;
    const std::vector<uint64_t> covered =
        g != nullptr ? Covered(*g, offset, r.Number("size")) : std::vector<uint64_t>{};
    if (covered.empty()) return Skip("cuMemUnmap of memory mapped before the trace");
    // In a trace that faulted, an unmap of memory a launch was given since the last
    // synchronisation is the race: its stand-in becomes a kernel still running (busy), and the
    // unmap goes out under it, as the program's did.
    bool race = false;
    for (uint64_t at : covered) {
      Mapping& m = g->maps[at];
      if (fault_ == nullptr || m.inflight < 0) continue;
      race = true;
      steps_[m.inflight] =
          "{op: busy, buffer: " + views_[m.view].name +
          ", duration: 300ms, touch: read, async: true}  # stand-in: " + Shorten(m.launch->kernel) +
          " (line " + std::to_string(m.launch->line) +
          ") was still running when the program unmapped its memory";
      m.written = false;
    }
    if (!race)
      for (uint64_t at : covered) Check(g->maps[at], "before its memory is unmapped");
    racing_ = racing_ || race;
    Step("{op: unmap, buffer: " + g->name + ", offset: " + SizeText(offset) +
             ", size: " + SizeText(r.Number("size")) + (racing_ ? ", wait: false" : "") + "}",
         racing_ ? "as the program did: without waiting for the kernel still running" : "");
    for (uint64_t at : covered) g->maps.erase(at);
    return Status::Ok();
  }

  void Launch(const TraceRecord& r) {
    for (uint64_t ptr : r.ptrs) {
      Region* g = RegionOf(ptr);
      if (g == nullptr) continue;
      auto it = g->maps.upper_bound(ptr - g->base);
      if (it == g->maps.begin()) {
        ++left_out_[kUnmappedWord];
        continue;
      }
      --it;
      Mapping& m = it->second;
      if (ptr - g->base >= it->first + m.size) {
        ++left_out_[kUnmappedWord];
        continue;
      }
      if (!m.writable) {
        ++left_out_["launch given memory device 0 cannot write (no stand-in)"];
        continue;
      }
      const bool captured = graphs_.Capturing(r.Number("stream"));
      if (m.inflight >= 0 && !captured) {
        ++stood_in_again_;
        continue;
      }
      if (m.view < 0) {
        m.view = static_cast<int>(views_.size());
        views_.push_back({"V" + std::to_string(views_.size()), g->name, it->first, m.size, 0});
      }
      View& v = views_[m.view];
      if (captured) {  // a node of the graph: it writes when the graph runs
        const uint32_t value = 0x5EED0000u + static_cast<uint32_t>(++writes_ % 0x10000);
        graphs_.Add(r.Number("stream"),
                    "{op: memset, buffer: " + v.name + ", value: " + Hex(value) + "}",
                    GraphWrite{m.view, value});
        continue;
      }
      v.value = 0x5EED0000u + static_cast<uint32_t>(++writes_ % 0x10000);
      m.written = true;
      m.launch = &r;
      unsynced_ = true;
      m.inflight = static_cast<int64_t>(
          Step("{op: memset, buffer: " + v.name + ", value: " + Hex(v.value) + "}",
               "stand-in: " + Shorten(r.kernel) + " was given " + Hex(ptr) + " (line " +
                   std::to_string(r.line) + ")"));
    }
  }

  void Check(Mapping& m, const std::string& why) {
    if (!m.written) return;
    const View& v = views_[m.view];
    Step("{op: check_value, buffer: " + v.name + ", value: " + Hex(v.value) + "}",
         "stand-in: the mapping still holds what was written, " + why);
    m.written = false;
  }

  void Teardown() {
    teardown_ = steps_.size();
    for (Region& g : regions_) {
      if (!g.live) continue;
      for (auto& [offset, m] : g.maps) {
        Check(m, "at the end");
        Step("{op: unmap, buffer: " + g.name + ", offset: " + SizeText(offset) +
             ", size: " + SizeText(m.size) + "}");
      }
      g.maps.clear();
    }
    for (auto& [handle, names] : handles_)
      for (const std::string& alloc : names) Step("{op: release, alloc: " + alloc + "}");
    for (Region& g : regions_)
      if (g.live) Step("{op: free, buffer: " + g.name + "}");
  }

  // The steps as the scenario's list: at the top level, or (fault mode) in one isolate block
  // that expects the program's fault where the program saw it.
  std::string StepList() const {
    std::string text = "steps:\n";
    std::string indent = "  ";
    if (fault_ != nullptr) {
      text += "  - isolate: {expect: " + ResultText(fault_->result) +
              ", at: the fault surfaces}\n" +
              "    name: the program's run up to its fault\n    steps:\n";
      indent = "      ";
    }
    for (size_t i = 0; i < steps_.size(); ++i) {
      if (i == teardown_)
        text += indent +
                "# The end of the trace: what is still mapped, allocated or reserved is "
                "given back.\n";
      text += indent + "- " + steps_[i] + "\n";
    }
    return text;
  }

  std::string Header() const {
    std::string command;
    for (const std::string& c : trace_.comments)
      if (c.rfind("recorded by vmm-run record: ", 0) == 0) command = c.substr(28);
    std::string h = "# Imported by `vmm-run import-trace` from " + options_.source +
                    " (a call trace" + (command.empty() ? "" : " of `" + command + "`") +
                    "), process " + std::to_string(pid_) + ".\n# Its calls:";
    for (const auto& [call, n] : calls_) h += " " + std::to_string(n) + " " + call + ",";
    h.back() = '.';
    h += "\n# Each reservation is a buffer (R<i>), each allocation handle an alloc (h<i>); "
         "addresses\n# are offsets into the reservations. The trace's synchronisations order the "
         "stand-ins.\n";
    if (options_.data)
      h += "# Stand-ins for the program's kernels: each mapping a launch was given is written "
           "(memset,\n# a value of its own) once and checked (check_value) before it is "
           "unmapped.\n";
    if (stood_in_again_ != 0)
      h += "# " + std::to_string(stood_in_again_) +
           " launches touched a mapping already written since it was last checked: stood in "
           "once.\n";
    for (const auto& [why, n] : left_out_)
      h += "# Left out: " + std::to_string(n) + " x " + why + ".\n";
    for (const auto& [why, n] : failed_)
      h += "# Failed in the program, not replayed: " + std::to_string(n) + " x " + why + ".\n";
    if (first_failure_ != nullptr && first_failure_ != fault_)
      h += "# The program's first failure: line " + std::to_string(first_failure_->line) + ", " +
           first_failure_->info().name + " returned " + ResultText(first_failure_->result) + ".\n";
    for (const auto& [call, n] : not_replayed_)
      h += "# Not replayed: " + std::to_string(n) + " x " + call + ".\n";
    for (const auto& [why, n] : graphs_.skipped())
      h += "# Not replayed: " + std::to_string(n) + " x " + why + ".\n";
    if (fault_ != nullptr)
      h += "# The program faulted: its " + std::string(fault_->info().name) + " (line " +
           std::to_string(fault_->line) + ") returned " + ResultText(fault_->result) +
           ". The run up to\n# there is one isolate block that expects the fault at that "
           "point; the " +
           std::to_string(after_fault_) +
           " calls after it\n# (on a context "
           "the fault made unusable) are not replayed.\n";
    return h;
  }

  std::string Declarations() const {
    std::string d = "version: 1\nname: " + YamlScalarText(options_.name, true) +
                    "\ndescription: \"the VMM calls of a recorded program (" +
                    std::to_string(trace_.records.size()) +
                    " records), replayed\"\ngranularity: 2MiB\n";
    std::string buffers;
    for (const Region& g : regions_)
      buffers += "  " + g.name + ": {shape: [" + std::to_string(g.size / 4) + "]}  # " +
                 SizeText(g.size) + " reserved at " + Hex(g.base) + " in the trace\n";
    d += buffers.empty() ? "buffers: {}\n" : "buffers:\n" + buffers;
    if (!views_.empty()) {
      d += "views:  # the mappings the program's kernels were given\n";
      for (const View& v : views_)
        d += "  " + v.name + ": {of: " + v.region + ", offset: " + std::to_string(v.offset) +
             ", shape: [" + std::to_string(v.size / 4) + "]}\n";
    }
    return d;
  }

  Region* RegionOf(uint64_t addr) {
    for (Region& g : regions_)
      if (g.live && addr >= g.base && addr - g.base < g.size) return &g;
    return nullptr;
  }
  Region* RegionNamed(const std::string& name) {
    for (Region& g : regions_)
      if (g.live && g.name == name) return &g;
    return nullptr;
  }
  static std::string HandleTypes(const TraceRecord& r) {
    const uint64_t bits = r.Number("handle_types");
    std::string list;
    if (bits & 1) list += "posix_fd";
    if (bits & 8) list += std::string(list.empty() ? "" : ", ") + "fabric";
    return list.empty() ? "" : ", handle_types: [" + list + "]";
  }
  Region* RegionAt(uint64_t base, bool live) {
    for (Region& g : regions_)
      if (g.live == live && g.base == base) return &g;
    return nullptr;
  }
  Status Skip(const std::string& why) {
    ++left_out_[why];
    return Status::Ok();
  }
  static std::string Shorten(const std::string& kernel) {
    return kernel.size() <= 60 ? kernel : kernel.substr(0, 57) + "...";
  }
  // Appends a step; its index (a stand-in may be rewritten when a race is found later).
  size_t Step(const std::string& step, const std::string& comment = "") {
    steps_.push_back(step + (comment.empty() ? "" : "  # " + comment));
    return steps_.size() - 1;
  }

  const CallTrace& trace_;
  const TraceImportOptions& options_;
  const uint64_t pid_;
  std::vector<Region> regions_;
  std::vector<View> views_;
  TraceGraphs graphs_;
  std::map<uint64_t, std::vector<std::string>> handles_;  // handle value -> live alloc names
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

}  // namespace

StatusOr<std::string> TraceScenario(const CallTrace& trace, const TraceImportOptions& options) {
  StatusOr<uint64_t> pid = VmmProcess(trace, options.pid);
  if (!pid.ok()) return pid.status();
  std::string text;
  VMM_RETURN_IF_ERROR(Writer(trace, options, *pid).Write(&text));
  return text;
}

}  // namespace vmm::trace
