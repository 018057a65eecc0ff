// SnapshotScenario: one device's allocator trace as a scenario (torch_snapshot.h says what each
// event becomes). Two passes: the first finds the reservations (each expandable segment's base
// and extent, and the page size its maps and unmaps share), the second writes the steps in the
// trace's order, keeping which pages, plain segments and allocations are live.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "runner/base/format.h"
#include "runner/trace/torch_snapshot.h"
#include "runner/yaml/yaml_writer.h"

namespace vmm::trace {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGranule = 2 * kMiB;  // the scenario's granularity (the H200's and the twin's)
constexpr uint64_t kViewAlign = 256;     // a view's offset (docs/scenario-language.md)
constexpr uint64_t kRegionGap = 16ull << 30;  // FindRegions: how far apart two reservations are

uint64_t RoundUp(uint64_t v, uint64_t unit) { return (v + unit - 1) / unit * unit; }

bool IsPageEvent(const SnapshotEvent& e) {
  return e.action == "segment_map" || e.action == "segment_unmap";
}

// A reservation of the scenario: an expandable segment (R<i>, pages of `page` bytes, each its own
// allocation) or a plain segment (S<i>, one allocation of its whole size).
struct Region {
  std::string name;
  uint64_t base = 0, bytes = 0, page = 0;
  bool expandable = true;
  bool live = true;                       // plain segments: until their segment_free
  std::string alloc;                      // plain segments: their allocation's name
  std::map<uint64_t, std::string> pages;  // expandable: live page index -> allocation name
  std::string note;                       // where it came from, for the buffer's comment
};

// An allocation of the program (alloc ... free_completed) with its stand-in view.
struct Block {
  std::string view;
  const Region* region = nullptr;
  uint64_t offset = 0, size = 0;
  uint32_t value = 0;
};

class Writer {
 public:
  Writer(const TorchSnapshot& s, const SnapshotImportOptions& o, int device)
      : snapshot_(s), options_(o), device_(device), trace_(s.device_traces[device]) {
    // Never reallocated: Block keeps pointers to its region. At most one region per known
    // segment, per loose page range and per segment_alloc.
    regions_.reserve(trace_.size() + snapshot_.segments.size() + 1);
  }

  Status FindRegions() {
    // PyTorch reserves each expandable segment as one large range (about the device's memory)
    // and maps pages of it from its start; the snapshot's `segments` list each run of mapped
    // pages as a segment of its own, so it cannot say where a reservation starts. The page events'
    // ranges, sorted, make one reservation while the next starts within kRegionGap of the end of
    // the ones before: far less than a reservation's size, far more than a hole PyTorch leaves.
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const SnapshotEvent& e : trace_)
      if (IsPageEvent(e) && e.size != 0) ranges.emplace_back(e.addr, e.addr + e.size);
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 0; i < ranges.size();) {
      uint64_t end = ranges[i].second;
      size_t j = i + 1;
      while (j < ranges.size() && ranges[j].first <= end + kRegionGap)
        end = std::max(end, ranges[j++].second);
      Region& r = regions_.emplace_back();
      r.name = "R" + std::to_string(regions_.size() - 1);
      r.base = ranges[i].first;
      r.bytes = end - r.base;
      for (const SnapshotSegment& s : snapshot_.segments)
        if (s.device == device_ && s.expandable && s.address >= r.base && s.address < end &&
            !s.type.empty())
          r.note = s.type + " pool";
      i = j;
    }
    for (const SnapshotEvent& e : trace_) {
      if (!IsPageEvent(e) || e.size == 0) continue;
      Region& r = *RegionOf(e.addr);
      r.page = std::gcd(r.page, std::gcd(e.size, e.addr - r.base));
    }
    for (Region& r : regions_) {
      if (r.page % kGranule != 0) {
        return InvalidInput("the expandable segment at " + Hex(r.base) + " maps pages of " +
                            std::to_string(r.page) + " bytes, not a multiple of the " +
                            "scenario's 2 MiB granularity");
      }
      r.bytes = RoundUp(r.bytes, r.page);
    }
    return Status::Ok();
  }

  std::string Write() {
    for (const Region& r : regions_)
      if (r.page != 0) Step("{op: reserve, buffer: " + r.name + "}");
    for (const SnapshotEvent& e : trace_) {
      ++counts_[e.action];
      if (IsPageEvent(e) && e.size == 0) {
        ++skipped_[e.action + " of 0 bytes"];
      } else if (e.action == "segment_map") {
        MapPages(e);
      } else if (e.action == "segment_unmap") {
        UnmapPages(e);
      } else if (e.action == "segment_alloc") {
        AllocSegment(e);
      } else if (e.action == "segment_free") {
        FreeSegment(e);
      } else if (e.action == "alloc") {
        if (options_.data) MakeBlock(e);
      } else if (e.action == "free_completed") {
        if (options_.data) FreeBlock(e.addr, "");
      } else if (e.action != "free_requested" && e.action != "snapshot") {
        ++ignored_[e.action];
      }
    }
    Teardown();
    return Header() + Declarations() + "steps:\n" + steps_;
  }

 private:
  Region* RegionOf(uint64_t addr) {
    Region* best = nullptr;
    for (Region& r : regions_)
      if (r.expandable && r.base <= addr && (best == nullptr || r.base > best->base)) best = &r;
    return best;
  }
  void Step(const std::string& step, const std::string& comment = "") {
    steps_ += "  - " + step + (comment.empty() ? "" : "  # " + comment) + "\n";
  }
  std::string NewAlloc() { return "h" + std::to_string(next_alloc_++); }

  void MapPages(const SnapshotEvent& e) {
    Region& r = *RegionOf(e.addr);
    const uint64_t first = (e.addr - r.base) / r.page, count = e.size / r.page;
    for (uint64_t k = first; k < first + count; ++k) {
      if (r.pages.count(k) != 0) {
        ++skipped_["segment_map of a page already mapped"];
        continue;
      }
      const std::string alloc = NewAlloc();
      Step("{op: create, alloc: " + alloc + ", size: " + SizeLiteral(r.page) + "}");
      Step("{op: map, buffer: " + r.name + ", alloc: " + alloc +
           ", offset: " + SizeLiteral(k * r.page) + "}");
      r.pages[k] = alloc;
    }
    Step("{op: set_access, buffer: " + r.name + ", offset: " + SizeLiteral(e.addr - r.base) +
         ", size: " + SizeLiteral(e.size) + "}");
  }

  void UnmapPages(const SnapshotEvent& e) {
    Region& r = *RegionOf(e.addr);
    DropBlocks(r, e.addr - r.base, e.size);
    const uint64_t first = (e.addr - r.base) / r.page, count = e.size / r.page;
    for (uint64_t k = first; k < first + count; ++k) {
      auto it = r.pages.find(k);
      if (it == r.pages.end()) {
        ++skipped_["segment_unmap of a page mapped before the trace began"];
        continue;
      }
      Step("{op: unmap, buffer: " + r.name + ", offset: " + SizeLiteral(k * r.page) +
           ", size: " + SizeLiteral(r.page) + "}");
      Step("{op: release, alloc: " + it->second + "}");
      r.pages.erase(it);
    }
  }

  void AllocSegment(const SnapshotEvent& e) {
    Region& r = regions_.emplace_back();
    r.name = "S" + std::to_string(plain_++);
    r.base = e.addr;
    r.bytes = RoundUp(std::max<uint64_t>(e.size, 1), kGranule);
    r.page = r.bytes;
    r.expandable = false;
    r.alloc = NewAlloc();
    r.note = "cudaMalloc'd segment of " + std::to_string(e.size) + " bytes";
    Step("{op: reserve, buffer: " + r.name + "}", "segment_alloc at " + Hex(e.addr));
    Step("{op: create, alloc: " + r.alloc + ", size: " + SizeLiteral(r.bytes) + "}");
    Step("{op: map, buffer: " + r.name + ", alloc: " + r.alloc + "}");
    Step("{op: set_access, buffer: " + r.name + "}");
  }

  void FreeSegment(const SnapshotEvent& e) {
    for (Region& r : regions_) {
      if (r.expandable || !r.live || r.base != e.addr) continue;
      DropBlocks(r, 0, r.bytes);
      Step("{op: unmap, buffer: " + r.name + "}", "segment_free at " + Hex(e.addr));
      Step("{op: release, alloc: " + r.alloc + "}");
      Step("{op: free, buffer: " + r.name + "}");
      r.live = false;
      return;
    }
    ++skipped_["segment_free of a segment allocated before the trace began"];
  }

  // The region whose live memory holds [addr, addr + size), or nullptr.
  const Region* MappedAt(uint64_t addr, uint64_t size) {
    for (const Region& r : regions_) {
      if (r.expandable || !r.live || addr < r.base || addr + size > r.base + r.bytes) continue;
      return &r;
    }
    Region* r = RegionOf(addr);
    if (r == nullptr || r->page == 0 || addr + size > r->base + r->bytes) return nullptr;
    for (uint64_t k = (addr - r->base) / r->page; k * r->page < addr + size - r->base; ++k)
      if (r->pages.count(k) == 0) return nullptr;
    return r;
  }

  void MakeBlock(const SnapshotEvent& e) {
    const Region* r = e.size == 0 ? nullptr : MappedAt(e.addr, e.size);
    if (r == nullptr) {
      ++skipped_["alloc in memory mapped before the trace began"];
      return;
    }
    if (e.size % 4 != 0 || (e.addr - r->base) % kViewAlign != 0) {
      ++skipped_
          ["alloc whose size is not whole words or offset not 256-byte aligned (no stand-in)"];
      return;
    }
    Block b;
    b.view = "A" + std::to_string(views_.size());
    b.region = r;
    b.offset = e.addr - r->base;
    b.size = e.size;
    b.value = 0x5EED0000u + static_cast<uint32_t>(views_.size() % 0x10000);
    views_.push_back(b);
    Step("{op: memset, buffer: " + b.view + ", value: " + Hex(b.value) + "}",
         "stand-in: the program's first write of its allocation at " + Hex(e.addr));
    blocks_[e.addr] = views_.size() - 1;
  }

  void FreeBlock(uint64_t addr, const std::string& why) {
    auto it = blocks_.find(addr);
    if (it == blocks_.end()) return;
    const Block& b = views_[it->second];
    Step("{op: check_value, buffer: " + b.view + ", value: " + Hex(b.value) + "}",
         why.empty() ? "stand-in: the allocation still holds what was written" : why);
    blocks_.erase(it);
  }

  // Allocations in [offset, offset + size) of `r` are gone with its memory: checked first.
  void DropBlocks(const Region& r, uint64_t offset, uint64_t size) {
    std::vector<uint64_t> gone;
    for (const auto& [addr, index] : blocks_) {
      const Block& b = views_[index];
      if (b.region == &r && b.offset < offset + size && offset < b.offset + b.size)
        gone.push_back(addr);
    }
    for (uint64_t addr : gone) FreeBlock(addr, "its memory is given back while still allocated");
  }

  void Teardown() {
    if (blocks_.empty() && std::none_of(regions_.begin(), regions_.end(), [](const Region& r) {
          return r.page != 0 && (r.expandable || r.live);
        }))
      return;
    steps_ += "  # The end of the trace: what is still allocated is checked, then given back.\n";
    std::vector<uint64_t> live;
    for (const auto& [addr, index] : blocks_) live.push_back(addr);
    for (uint64_t addr : live) FreeBlock(addr, "");
    for (Region& r : regions_) {
      if (r.page == 0) continue;
      if (r.expandable) {
        for (const auto& [k, alloc] : r.pages) {
          Step("{op: unmap, buffer: " + r.name + ", offset: " + SizeLiteral(k * r.page) +
               ", size: " + SizeLiteral(r.page) + "}");
          Step("{op: release, alloc: " + alloc + "}");
        }
        r.pages.clear();
        Step("{op: free, buffer: " + r.name + "}");
      } else if (r.live) {
        Step("{op: unmap, buffer: " + r.name + "}");
        Step("{op: release, alloc: " + r.alloc + "}");
        Step("{op: free, buffer: " + r.name + "}");
      }
    }
  }

  std::string Header() const {
    auto count = [&](const char* a) {
      auto it = counts_.find(a);
      return std::to_string(it == counts_.end() ? 0 : it->second) + " " + a;
    };
    std::string h = "# Imported by `vmm-run import-snapshot` from " + options_.source +
                    " (a PyTorch allocator snapshot), device " + std::to_string(device_) + ".\n";
    if (!snapshot_.alloc_conf.empty())
      h += "# The program ran with PYTORCH_CUDA_ALLOC_CONF=" + snapshot_.alloc_conf + ".\n";
    h += "# Its trace: " + std::to_string(trace_.size()) + " events; " + count("segment_map") +
         ", " + count("segment_unmap") + ", " + count("segment_alloc") + ", " +
         count("segment_free") + ", " + count("alloc") + ", " + count("free_completed") + ".\n" +
         "# Each expandable segment is a reservation (R<i>); each segment_map creates and maps\n"
         "# one allocation per page and opens the range (one set_access), each segment_unmap\n"
         "# unmaps and releases its pages, as PyTorch's expandable segments do. A plain segment\n"
         "# (segment_alloc, cudaMalloc underneath) is a reservation with one allocation (S<i>).\n"
         "# Addresses are offsets into the reservations; streams are not kept (one stream).\n";
    if (options_.data) {
      h += "# Stand-ins for the program's kernels: each allocation is written (memset, a value\n"
           "# of its own) when it is made and checked (check_value) before it is freed.\n";
    }
    for (const auto& [why, n] : skipped_)
      h += "# Left out: " + std::to_string(n) + " x " + why + ".\n";
    for (const auto& [action, n] : ignored_)
      h += "# Not replayed: " + std::to_string(n) + " x action '" + action + "'.\n";
    return h;
  }

  std::string Declarations() const {
    std::string d = "version: 1\nname: " + YamlScalarText(options_.name, true) +
                    "\ndescription: \"" + "PyTorch allocator trace (" +
                    std::to_string(trace_.size()) +
                    " events) replayed as VMM calls\"\ngranularity: 2MiB\n";
    std::string buffers;
    for (const Region& r : regions_) {
      if (r.page == 0) continue;
      buffers += "  " + r.name + ": {shape: [" + std::to_string(r.bytes / 4) + "]}  # " +
                 (r.expandable ? "expandable segment" : "plain segment") + " at " + Hex(r.base) +
                 " in the trace" + (r.note.empty() ? "" : ", " + r.note) +
                 (r.expandable ? ", pages of " + SizeLiteral(r.page) : "") + "\n";
    }
    d += buffers.empty() ? "buffers: {}\n" : "buffers:\n" + buffers;
    if (!views_.empty()) {
      d += "views:  # the program's allocations\n";
      for (const Block& b : views_) {
        d += "  " + b.view + ": {of: " + b.region->name + ", offset: " + std::to_string(b.offset) +
             ", shape: [" + std::to_string(b.size / 4) + "]}\n";
      }
    }
    return d;
  }

  const TorchSnapshot& snapshot_;
  const SnapshotImportOptions& options_;
  const int device_;
  const std::vector<SnapshotEvent>& trace_;
  std::vector<Region> regions_;  // reserved up front: Block keeps pointers into it
  std::vector<Block> views_;
  std::map<uint64_t, size_t> blocks_;  // live allocation address -> its index in views_
  std::map<std::string, size_t> counts_, skipped_, ignored_;
  std::string steps_;
  int next_alloc_ = 0, plain_ = 0;
};

}  // namespace

StatusOr<std::string> SnapshotScenario(const TorchSnapshot& snapshot,
                                       const SnapshotImportOptions& options) {
  auto has_events = [&](size_t d) {
    return std::any_of(snapshot.device_traces[d].begin(), snapshot.device_traces[d].end(),
                       [](const SnapshotEvent& e) { return e.action.rfind("segment_", 0) == 0; });
  };
  int device = options.device;
  if (device < 0) {
    std::vector<int> with;
    for (size_t d = 0; d < snapshot.device_traces.size(); ++d)
      if (has_events(d)) with.push_back(static_cast<int>(d));
    if (with.empty())
      return InvalidInput(
          "the snapshot's traces hold no segment events (record them with "
          "torch.cuda.memory._record_memory_history before the allocations)");
    if (with.size() > 1)
      return InvalidInput("devices " + std::to_string(with[0]) + " and " + std::to_string(with[1]) +
                          " both have segment events; choose one with "
                          "--device");
    device = with[0];
  }
  if (device >= static_cast<int>(snapshot.device_traces.size()))
    return InvalidInput("the snapshot has traces for " +
                        std::to_string(snapshot.device_traces.size()) + " devices, not device " +
                        std::to_string(device));
  Writer writer(snapshot, options, device);
  VMM_RETURN_IF_ERROR(writer.FindRegions());
  return writer.Write();
}

}  // namespace vmm::trace
