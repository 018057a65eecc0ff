// TraceWriter's steps for each call of a trace, the stand-ins for kernels and the lookups
// (trace_writer.h).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "runner/base/format.h"
#include "runner/trace/trace_writer.h"

namespace vmm::trace {

Status TraceWriter::Sized(const TraceRecord& r, uint64_t bytes, const char* what) {
  if (bytes % kGranule == 0) return Status::Ok();
  return InvalidInput("line " + std::to_string(r.line) + ": " + r.info().name + " " + what +
                      " of " + std::to_string(bytes) +
                      " bytes, not a multiple of the scenario's 2 MiB granularity");
}

Status TraceWriter::One(const TraceRecord& r) {
  switch (r.call) {
    case TraceCall::k_cuMemAddressReserve: {
      VMM_RETURN_IF_ERROR(Sized(r, r.Number("size"), "size"));
      const uint64_t base = r.Number("ptr"), size = r.Number("size");
      if (size == 0 || base + size < base || RegionOverlapping(base, size) != nullptr)
        return Skip(kImpossible);
      Region& g = regions_.emplace_back();
      g.name = "R" + std::to_string(regions_.size() - 1);
      g.base = r.Number("ptr");
      g.size = r.Number("size");
      const uint64_t align = r.Number("alignment");
      const bool aligned = align > kGranule && align % kGranule == 0 && (align & (align - 1)) == 0;
      Step("{op: reserve, buffer: " + g.name + ", size: " + SizeLiteral(g.size) +
               (aligned ? ", alignment: " + SizeLiteral(align) : "") + "}",
           "at " + Hex(g.base) + " in the trace");
      return Status::Ok();
    }
    case TraceCall::k_cuMemAddressFree: {
      Region* g = RegionAt(r.Number("ptr"), true);
      if (g == nullptr) return Skip("cuMemAddressFree of a range reserved before the trace");
      if (!g->maps.empty()) return Skip(kImpossible);
      g->live = false;
      Step("{op: free, buffer: " + g->name + "}");
      return Status::Ok();
    }
    case TraceCall::k_cuMemCreate: {
      VMM_RETURN_IF_ERROR(Sized(r, r.Number("size"), "size"));
      const uint64_t location = r.Number("location"), id = r.Number("device");
      if (location == 0 || location > 3) return Skip("cuMemCreate at an unknown location");
      if (r.Number("size") == 0 || (location == 1 && id >= kMaxDevices) ||
          (location == 3 && id > 1023))
        return Skip(kImpossible);
      if (location == 1) UseDevice(id);
      std::string where;
      if (location == 1 && id != 0) where = ", device: " + std::to_string(id);
      if (location == 2) where = ", location: host";
      if (location == 3) where = ", location: host_numa, numa_node: " + std::to_string(id);
      const std::string alloc = "h" + std::to_string(next_alloc_++);
      handles_[r.Number("handle")].push_back({alloc, r.Number("size")});
      Step("{op: create, alloc: " + alloc + ", size: " + SizeLiteral(r.Number("size")) + where +
           HandleTypes(r) + "}");
      return Status::Ok();
    }
    case TraceCall::k_cuMemRelease: {
      auto it = handles_.find(r.Number("handle"));
      if (it == handles_.end() || it->second.empty())
        return Skip("cuMemRelease of a handle made before the trace");
      Step(
          "{op: release, alloc: " + it->second.back().name + (racing_ ? ", wait: false" : "") + "}",
          racing_ ? "as the program did: without waiting for the kernel still running" : "");
      it->second.pop_back();
      return Status::Ok();
    }
    case TraceCall::k_cuMemRetainAllocationHandle: {
      Region* g = RegionOf(r.Number("ptr"));
      if (g == nullptr) return Skip("cuMemRetainAllocationHandle outside the reservations");
      const Mapping* m = MappingAt(*g, r.Number("ptr") - g->base);
      if (m == nullptr)
        return Skip("cuMemRetainAllocationHandle of memory mapped before the trace");
      const std::string alloc = "h" + std::to_string(next_alloc_++);
      handles_[r.Number("handle")].push_back({alloc, m->size});
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
      return Graph(r, graphs_.End(r.Number("stream"), r.Number("graph"),
                                  [&](const GraphWrite& w) { return Writable(w); }));
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

Status TraceWriter::Graph(const TraceRecord& r, const std::string& step) {
  if (!step.empty())
    Step(step,
         std::string("the program's ") + r.info().name + " (line " + std::to_string(r.line) + ")");
  return Status::Ok();
}

// The mapping a stand-in's view covers, still mapped as it was when the view was made and
// writable by device 0; nullptr otherwise.
Mapping* TraceWriter::MappingOfView(int view) {
  const View& v = views_[view];
  Region* g = RegionNamed(v.region);
  if (g == nullptr) return nullptr;
  auto it = g->maps.find(v.offset);
  if (it == g->maps.end() || it->second.size != v.size || !it->second.writable) return nullptr;
  return &it->second;
}

// A replay writes what its graph's stand-ins write: into the mappings at their views now.
Status TraceWriter::Replay(const TraceRecord& r) {
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

Status TraceWriter::Map(const TraceRecord& r) {
  Region* g = RegionOf(r.Number("ptr"));
  auto h = handles_.find(r.Number("handle"));
  if (g == nullptr || h == handles_.end() || h->second.empty())
    return Skip("cuMemMap of a handle or range made before the trace");
  const uint64_t offset = r.Number("ptr") - g->base, size = r.Number("size");
  VMM_RETURN_IF_ERROR(Sized(r, offset, "offset"));
  if (r.Number("offset") != 0) return Skip("cuMemMap at an offset into its allocation");
  // What the driver refuses, recorded as done: not replayed (a scenario cannot say it).
  if (size != h->second.back().size || size > g->size - offset || Overlaps(*g, offset, size))
    return Skip(kImpossible);
  Step("{op: map, buffer: " + g->name + ", alloc: " + h->second.back().name +
       ", offset: " + SizeLiteral(offset) + "}");
  Mapping& m = g->maps[offset];
  m = Mapping{};
  m.size = size;
  m.alloc = h->second.back().name;
  return Status::Ok();
}

// The mappings of `g` that [offset, offset + size) covers, or none when part of it is not known.
std::vector<uint64_t> TraceWriter::Covered(Region& g, uint64_t offset, uint64_t size) {
  std::vector<uint64_t> found;
  uint64_t at = offset;
  while (at < offset + size) {
    auto it = g.maps.find(at);
    if (it == g.maps.end()) return {};
    found.push_back(at);
    at += it->second.size;
  }
  if (at != offset + size) return {};  // half a mapping: the driver refuses it
  return found;
}

std::vector<uint64_t> TraceWriter::CoveredBy(const TraceRecord& r, Region** g, uint64_t* offset) {
  *g = RegionOf(r.Number("ptr"));
  *offset = *g != nullptr ? r.Number("ptr") - (*g)->base : 0;
  return *g != nullptr ? Covered(**g, *offset, r.Number("size")) : std::vector<uint64_t>{};
}

Status TraceWriter::SetAccess(const TraceRecord& r) {
  Region* g = nullptr;
  uint64_t offset = 0;
  const std::vector<uint64_t> covered = CoveredBy(r, &g, &offset);
  if (covered.empty()) return Skip("cuMemSetAccess of memory mapped before the trace");
  // One entry per device (a later descriptor for the same device wins, as its last word), each a
  // device the scenario can name and a flag the driver accepts.
  std::map<int, unsigned> per_device;
  for (const auto& [device, flags] : r.access) per_device[device] = flags;
  if (per_device.empty()) return Skip(kImpossible);
  for (const auto& [device, flags] : per_device)
    if (device >= static_cast<int>(kMaxDevices) || flags == 2) return Skip(kImpossible);
  for (const auto& [device, flags] : per_device) UseDevice(static_cast<uint64_t>(device));
  std::string access;
  if (per_device.size() == 1 && per_device.begin()->first == 0) {
    access = AccessWord(per_device.begin()->second);
  } else {
    for (const auto& [device, flags] : per_device)
      access += (access.empty() ? "{" : ", ") + std::to_string(device) + ": " + AccessWord(flags);
    access += "}";
  }
  if (auto zero = per_device.find(0); zero != per_device.end()) {
    for (uint64_t at : covered) {
      Mapping& m = g->maps[at];
      // What a stand-in wrote is checked while device 0 can still read it.
      if (zero->second == 0) Check(m, "before its access is taken away");
      m.writable = zero->second == 3;
    }
  }
  Step("{op: set_access, buffer: " + g->name + ", offset: " + SizeLiteral(offset) +
       ", size: " + SizeLiteral(r.Number("size")) + ", access: " + access + "}");
  return Status::Ok();
}

Status TraceWriter::Unmap(const TraceRecord& r) {
  Region* g = nullptr;
  uint64_t offset = 0;
  const std::vector<uint64_t> covered = CoveredBy(r, &g, &offset);
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
  Step("{op: unmap, buffer: " + g->name + ", offset: " + SizeLiteral(offset) +
           ", size: " + SizeLiteral(r.Number("size")) + (racing_ ? ", wait: false" : "") + "}",
       racing_ ? "as the program did: without waiting for the kernel still running" : "");
  for (uint64_t at : covered) g->maps.erase(at);
  return Status::Ok();
}

void TraceWriter::Launch(const TraceRecord& r) {
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

void TraceWriter::Check(Mapping& m, const std::string& why) {
  if (!m.written) return;
  const View& v = views_[m.view];
  Step("{op: check_value, buffer: " + v.name + ", value: " + Hex(v.value) + "}",
       "stand-in: the mapping still holds what was written, " + why);
  m.written = false;
}

void TraceWriter::Teardown() {
  teardown_ = steps_.size();
  for (Region& g : regions_) {
    if (!g.live) continue;
    for (auto& [offset, m] : g.maps) {
      Check(m, "at the end");
      Step("{op: unmap, buffer: " + g.name + ", offset: " + SizeLiteral(offset) +
           ", size: " + SizeLiteral(m.size) + "}");
    }
    g.maps.clear();
  }
  for (auto& [handle, allocs] : handles_)
    for (const Alloc& alloc : allocs) Step("{op: release, alloc: " + alloc.name + "}");
  for (Region& g : regions_)
    if (g.live) Step("{op: free, buffer: " + g.name + "}");
}

Region* TraceWriter::RegionOf(uint64_t addr) {
  for (Region& g : regions_)
    if (g.live && addr >= g.base && addr - g.base < g.size) return &g;
  return nullptr;
}

Region* TraceWriter::RegionOverlapping(uint64_t base, uint64_t size) {
  for (Region& g : regions_)
    if (g.live && base < g.base + g.size && g.base < base + size) return &g;
  return nullptr;
}

bool TraceWriter::Overlaps(const Region& g, uint64_t offset, uint64_t size) {
  for (const auto& [at, m] : g.maps)
    if (offset < at + m.size && at < offset + size) return true;
  return false;
}

const Mapping* TraceWriter::MappingAt(const Region& g, uint64_t offset) {
  auto it = g.maps.upper_bound(offset);
  if (it == g.maps.begin()) return nullptr;
  --it;
  return offset - it->first < it->second.size ? &it->second : nullptr;
}

Region* TraceWriter::RegionNamed(const std::string& name) {
  for (Region& g : regions_)
    if (g.live && g.name == name) return &g;
  return nullptr;
}

Region* TraceWriter::RegionAt(uint64_t base, bool live) {
  for (Region& g : regions_)
    if (g.live == live && g.base == base) return &g;
  return nullptr;
}

}  // namespace vmm::trace
