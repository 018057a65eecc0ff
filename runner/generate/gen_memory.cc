// The generator's VMM actions: reserve, create, map, set_access, unmap, release, free, remap,
// retain, export/import, the queries and memory accounting, and the teardown.
#include <tuple>

#include "runner/generate/generator_impl.h"

namespace vmm::gen {
namespace {

// A run of whole adjacent mappings of `r`, starting at a random mapping: {offset, size}.
std::pair<uint64_t, uint64_t> PickRun(const Reservation& r, Rng& rng) {
  auto it = r.maps.begin();
  std::advance(it, static_cast<long>(rng.Below(r.maps.size())));
  const uint64_t offset = it->first;
  uint64_t size = it->second.size;
  for (auto next = std::next(it);
       next != r.maps.end() && next->first == offset + size && rng.Percent(50); ++next)
    size += next->second.size;
  return {offset, size};
}

std::vector<std::string> ReservedBuffers(const Model& m, bool with_maps) {
  std::vector<std::string> out;
  for (const auto& [name, r] : m.reservations)
    if (r.reserved && (!with_maps || !r.maps.empty())) out.push_back(name);
  return out;
}

}  // namespace

bool Generator::Reserve() {
  std::vector<std::string> free;
  for (const auto& [name, r] : model.reservations)
    if (!r.reserved) free.push_back(name);
  if (free.empty()) return false;
  const std::string buffer = rng.Pick(free);
  Reservation& r = model.reservations[buffer];
  MapBuilder step = Op("reserve");
  std::string name;
  if (!in_block && rng.Percent(30)) {
    name = Name("reserve " + buffer);
    step.Add("name", name);
  }
  step.Add("buffer", buffer);
  const uint64_t least = (model.tensors[buffer].Bytes() + G() - 1) / G() * G();
  if (r.size != least || rng.Percent(50)) step.Size("size", r.size);
  r.reserved = true;
  r.instance = model.reservation_instances++;
  if (!name.empty()) address_steps[name] = AddressStep{buffer, 0, r.instance};
  Emit(step.Build());
  return true;
}

bool Generator::Create() {
  std::string alloc;
  std::vector<std::string> reusable;
  for (const auto& [name, a] : model.allocs)
    if (!a.live) reusable.push_back(name);
  alloc = !reusable.empty() && rng.Percent(20) ? rng.Pick(reusable) : Fresh("p");
  uint64_t largest = 0;
  for (const auto& [name, r] : model.reservations) largest = std::max(largest, r.size);
  const uint64_t size =
      static_cast<uint64_t>(rng.Between(1, static_cast<int64_t>(largest / G()))) * G();
  MapBuilder step = Op("create");
  step.Add("alloc", alloc).Size("size", size);
  Phys p;
  p.size = size;
  p.content = PhysContent(size);
  p.handles = 1;
  const int roll = static_cast<int>(rng.Below(100));
  if (options.host_memory && roll < 4) {
    p.location = Location::kHost;
    step.Add("location", "host");
    requires_caps.insert("host_location");
  } else if (options.host_memory && roll < 8) {
    p.location = Location::kHostNuma;
    step.Add("location", "host_numa");
    requires_caps.insert("host_numa");
  } else {
    p.device = Device();
    if (p.device != 0 || rng.Percent(10)) step.Num("device", static_cast<uint64_t>(p.device));
  }
  if (p.location == Location::kHost && rng.Percent(30)) {
    // Host memory (not host NUMA) with a POSIX fd handle type: the H200 refuses the create.
    step.Add("handle_types", List({Scalar("posix_fd")}));
    if (!options.expect_errors) return false;
    step.Add("expect_error", "CUDA_ERROR_INVALID_VALUE");
    Emit(step.Build());
    return true;
  }
  if (p.location != Location::kHost && rng.Percent(15)) {
    p.shareable = true;
    step.Add("handle_types", List({Scalar("posix_fd")}));
    requires_caps.insert("posix_fd");
  }
  model.phys.push_back(std::move(p));
  model.allocs[alloc] =
      Alloc{static_cast<int>(model.phys.size()) - 1, true, false, model.handles++};
  MaybeRepeat(step);
  Emit(step.Build());
  return true;
}

void Generator::MaybeRepeat(MapBuilder& step) {
  if (rng.Percent(8)) step.Num("repeat", static_cast<uint64_t>(rng.Between(2, 3)));
}

bool Generator::MapAlloc() {
  std::vector<std::string> live;
  for (const auto& [name, a] : model.allocs)
    if (a.live) live.push_back(name);
  if (live.empty()) return false;
  const std::string alloc = rng.Pick(live);
  const uint64_t size = model.phys[model.allocs[alloc].phys].size;
  std::vector<std::pair<std::string, uint64_t>> places;
  for (const std::string& buffer : ReservedBuffers(model, false))
    for (uint64_t offset : model.FreeOffsets(buffer, size)) places.emplace_back(buffer, offset);
  if (places.empty()) return false;
  const auto [buffer, offset] = rng.Pick(places);
  MapBuilder step = Op("map");
  std::string name;
  if (!in_block && rng.Percent(40)) {
    name = Name("map " + alloc + " at " + buffer + "+" + SizeLiteral(offset));
    step.Add("name", name);
  }
  step.Add("buffer", buffer).Add("alloc", alloc);
  if (offset != 0 || rng.Percent(30)) step.Size("offset", offset);
  Reservation& r = model.reservations[buffer];
  Mapping m;
  m.size = size;
  m.phys = model.allocs[alloc].phys;
  m.handle = model.allocs[alloc].handle;
  m.alloc = alloc;
  m.step = name;
  r.maps[offset] = m;
  ++model.phys[m.phys].mappings;
  if (!name.empty()) address_steps[name] = AddressStep{buffer, offset, r.instance};
  MaybeRepeat(step);
  Emit(step.Build());
  return true;
}

std::optional<Generator::RunStep> Generator::StartRunStep(const char* op) {
  const std::vector<std::string> buffers = ReservedBuffers(model, true);
  if (buffers.empty()) return std::nullopt;
  RunStep s{Op(op), rng.Pick(buffers), 0, 0};
  const Reservation& r = model.reservations[s.buffer];
  std::tie(s.offset, s.size) = PickRun(r, rng);
  s.step.Add("buffer", s.buffer);
  if (s.offset != 0 || rng.Percent(20)) s.step.Size("offset", s.offset);
  // The size may be left out where the run reaches the reservation's end (its default).
  if (s.offset + s.size != r.size || rng.Percent(50)) s.step.Size("size", s.size);
  return s;
}

bool Generator::SetAccess() {
  std::optional<RunStep> run = StartRunStep("set_access");
  if (!run) return false;
  auto& [step, buffer, offset, size] = *run;
  Reservation& r = model.reservations[buffer];
  auto pick = [&] {
    const int roll = static_cast<int>(rng.Below(100));
    return roll < 70 ? Perm::kReadWrite : roll < 90 ? Perm::kRead : Perm::kNone;
  };
  std::array<std::optional<Perm>, kMaxDevices> set{};
  if (options.devices > 1 && rng.Percent(50)) {
    MapBuilder per;
    for (int d = 0; d < options.devices; ++d) {
      if (d > 0 && rng.Percent(30)) continue;
      set[d] = pick();
      per.Add(std::to_string(d), PermName(*set[d]));
    }
    step.Add("access", per.Build());
  } else {
    set[0] = pick();
    if (*set[0] != Perm::kReadWrite || rng.Percent(50)) step.Add("access", PermName(*set[0]));
  }
  for (auto it = r.maps.find(offset); it != r.maps.end() && it->first < offset + size; ++it)
    for (int d = 0; d < kMaxDevices; ++d)
      if (set[d]) it->second.access[d] = *set[d];
  MaybeRepeat(step);
  Emit(step.Build());
  return true;
}

bool Generator::Unmap() {
  std::optional<RunStep> run = StartRunStep("unmap");
  if (!run) return false;
  auto& [step, buffer, offset, size] = *run;
  Reservation& r = model.reservations[buffer];
  // A repeated unmap maps the range again between its calls: each mapping needs a live handle.
  bool handles_live = true;
  for (auto it = r.maps.find(offset); it != r.maps.end() && it->first < offset + size; ++it) {
    auto a = model.allocs.find(it->second.alloc);
    handles_live = handles_live && a != model.allocs.end() && a->second.live &&
                   a->second.handle == it->second.handle;
  }
  for (auto it = r.maps.find(offset); it != r.maps.end() && it->first < offset + size;) {
    --model.phys[it->second.phys].mappings;
    it = r.maps.erase(it);
  }
  if (handles_live) MaybeRepeat(step);
  Emit(step.Build());
  return true;
}

bool Generator::Release() {
  std::vector<std::string> live;
  for (const auto& [name, a] : model.allocs)
    if (a.live) live.push_back(name);
  if (live.empty()) return false;
  const std::string alloc = rng.Pick(live);
  Alloc& a = model.allocs[alloc];
  a.live = false;
  Phys& phys = model.phys[a.phys];
  --phys.handles;
  MapBuilder step = Op("release");
  step.Add("alloc", alloc);
  // vmm-run repeats a release only when it frees the memory (undone by a create of the same
  // properties); an exported allocation stays with its export.
  if (!a.imported && !phys.shareable && phys.handles == 0 && phys.mappings == 0) MaybeRepeat(step);
  Emit(step.Build());
  return true;
}

bool Generator::FreeReservation() {
  std::vector<std::string> empty;
  for (const auto& [name, r] : model.reservations)
    if (r.reserved && r.maps.empty()) empty.push_back(name);
  if (empty.empty()) return false;
  const std::string buffer = rng.Pick(empty);
  Reservation& r = model.reservations[buffer];
  r.reserved = false;
  r.ever_freed = true;
  Emit(Op("free").Add("buffer", buffer).Build());
  return true;
}

bool Generator::Remap() {
  // The sleep/wake swap of one mapping: unmap, release, create, map at the same offset, access.
  std::vector<std::pair<std::string, uint64_t>> single;
  for (const auto& [buffer, r] : model.reservations)
    if (r.reserved)
      for (const auto& [offset, m] : r.maps) single.emplace_back(buffer, offset);
  if (single.empty()) return false;
  const auto [buffer, offset] = rng.Pick(single);
  Reservation& r = model.reservations[buffer];
  const Mapping old = r.maps[offset];
  Emit(Op("unmap").Add("buffer", buffer).Size("offset", offset).Size("size", old.size).Build());
  --model.phys[old.phys].mappings;
  r.maps.erase(offset);
  for (auto& [name, a] : model.allocs) {
    if (a.live && a.phys == old.phys && rng.Percent(70)) {
      a.live = false;
      --model.phys[a.phys].handles;
      Emit(Op("release").Add("alloc", name).Build());
    }
  }
  const std::string alloc = Fresh("p");
  Emit(Op("create").Add("alloc", alloc).Size("size", old.size).Build());
  Phys p;
  p.size = old.size;
  p.content = PhysContent(old.size);
  p.handles = 1;
  model.phys.push_back(std::move(p));
  model.allocs[alloc] =
      Alloc{static_cast<int>(model.phys.size()) - 1, true, false, model.handles++};
  MapBuilder map = Op("map");
  std::string name;
  if (!in_block) {
    name = Name("remap " + buffer + "+" + SizeLiteral(offset) + " with " + alloc);
    map.Add("name", name);
  }
  map.Add("buffer", buffer).Add("alloc", alloc).Size("offset", offset);
  Emit(map.Build());
  Mapping m;
  m.size = old.size;
  m.phys = model.allocs[alloc].phys;
  m.handle = model.allocs[alloc].handle;
  m.alloc = alloc;
  r.maps[offset] = m;
  ++model.phys[m.phys].mappings;
  if (!name.empty()) address_steps[name] = AddressStep{buffer, offset, r.instance};
  if (rng.Percent(80)) {
    Emit(Op("set_access")
             .Add("buffer", buffer)
             .Size("offset", offset)
             .Size("size", old.size)
             .Build());
    r.maps[offset].access[0] = Perm::kReadWrite;
  }
  return true;
}

bool Generator::Retain() {
  std::vector<std::pair<std::string, uint64_t>> mapped;
  for (const auto& [buffer, r] : model.reservations)
    if (r.reserved)
      for (const auto& [offset, m] : r.maps) mapped.emplace_back(buffer, offset);
  if (mapped.empty()) return false;
  const auto [buffer, start] = rng.Pick(mapped);
  const Mapping& m = model.reservations[buffer].maps[start];
  const uint64_t offset = start + rng.Below(m.size / 4096) * 4096;
  const std::string alloc = Fresh("r");
  MapBuilder step = Op("retain");
  step.Add("alloc", alloc).Add("buffer", buffer).Size("offset", offset);
  std::vector<std::string> same;  // handles of the mapped allocation (an import is its own)
  for (const auto& [name, a] : model.allocs)
    if (a.live && a.handle == m.handle) same.push_back(name);
  if (!same.empty() && rng.Percent(80))
    step.Add("expect", MapBuilder().Add("same_as", rng.Pick(same)).Build());
  model.allocs[alloc] = Alloc{m.phys, true, true, m.handle};
  ++model.phys[m.phys].handles;
  Emit(step.Build());
  if (rng.Percent(50)) {
    model.allocs[alloc].live = false;
    --model.phys[m.phys].handles;
    Emit(Op("release").Add("alloc", alloc).Build());
  }
  return true;
}

bool Generator::ExportImport() {
  std::vector<std::string> shareable;
  for (const auto& [name, a] : model.allocs)
    if (a.live && !a.imported && model.phys[a.phys].shareable) shareable.push_back(name);
  if (shareable.empty()) return false;
  const std::string alloc = rng.Pick(shareable);
  const std::string handle = Fresh("h");
  const int phys = model.allocs[alloc].phys;
  Emit(Op("export").Add("alloc", alloc).Add("handle", handle).Build());
  model.exports[handle] = phys;
  const std::string imported = Fresh("i");
  Emit(Op("import").Add("handle", handle).Add("alloc", imported).Build());
  model.allocs[imported] = Alloc{phys, true, true, model.handles++};
  ++model.phys[phys].handles;
  return true;
}

bool Generator::Query() {
  switch (rng.Below(4)) {
    case 0: {  // check_properties
      std::vector<std::string> live;
      for (const auto& [name, a] : model.allocs)
        if (a.live) live.push_back(name);
      if (live.empty()) return false;
      const std::string alloc = rng.Pick(live);
      const Phys& p = model.phys[model.allocs[alloc].phys];
      MapBuilder expect;
      // A `location: host` create reads back as host NUMA node 0 on the H200 (docs/backends.md).
      expect.Add("location", p.location == Location::kDevice ? "device" : "host_numa");
      if (p.location != Location::kDevice && rng.Percent(50)) expect.Num("numa_node", 0);
      if (rng.Percent(30)) expect.Flag("gpudirect_rdma", false);
      Emit(Op("check_properties").Add("alloc", alloc).Add("expect", expect.Build()).Build());
      return true;
    }
    case 1: {  // check_range: the mapping that holds the address
      std::vector<std::pair<std::string, uint64_t>> mapped;
      for (const auto& [buffer, r] : model.reservations)
        if (r.reserved)
          for (const auto& [offset, m] : r.maps) mapped.emplace_back(buffer, offset);
      if (mapped.empty()) return false;
      const auto [buffer, start] = rng.Pick(mapped);
      const uint64_t size = model.reservations[buffer].maps[start].size;
      const uint64_t at = start + rng.Below(size / 4096) * 4096;
      // cuMemGetAddressRange does not find a mapping the current context's device has no access
      // to (the H200), and the current device is the last one a step ran on, which the model
      // does not follow: only ranges every device sees alike are asked about.
      const auto& access = model.reservations[buffer].maps[start].access;
      int without = 0;
      for (int d = 0; d < options.devices; ++d) without += access[d] == Perm::kNone;
      if (without != 0 && without != options.devices) return false;
      if (without != 0) {
        if (!options.expect_errors || !rng.Percent(30)) return false;
        Emit(Op("check_range")
                 .Add("buffer", buffer)
                 .Size("offset", at)
                 .Add("expect", MapBuilder().Size("size", size).Build())
                 .Add("expect_error", "CUDA_ERROR_NOT_FOUND")
                 .Build());
        return true;
      }
      MapBuilder expect;
      // Host memory's range has base 0 on the H200: its size alone is stated.
      if (model.phys[model.reservations[buffer].maps[start].phys].location == Location::kDevice) {
        expect.Add("base", buffer);
        if (start != 0 || rng.Percent(30)) expect.Size("base_offset", start);
      }
      expect.Size("size", size);
      Emit(Op("check_range")
               .Add("buffer", buffer)
               .Size("offset", at)
               .Add("expect", expect.Build())
               .Build());
      return true;
    }
    case 2: {  // check_granularity: a bound every VMM device meets at this granularity
      MapBuilder step = Op("check_granularity");
      if (options.host_memory && rng.Percent(30)) {
        step.Add("location", "host");
        requires_caps.insert("host_location");
      }
      step.Add("expect", MapBuilder()
                             .Size(rng.Percent(50) ? "minimum_at_most" : "recommended_at_most", G())
                             .Build());
      Emit(step.Build());
      return true;
    }
    default: {  // check_access over a tensor whose mapped bytes share one access
      const int device = Device();
      std::vector<std::pair<const Tensor*, Perm>> uniform;
      for (const Tensor* t : TensorsWhere([](const Tensor&) { return true; })) {
        std::optional<Perm> perm;
        bool same = !model.PhysOf(*t).empty();  // every byte mapped
        uint64_t at = t->offset;
        while (same && at < t->offset + t->Bytes()) {
          uint64_t start = 0;
          const Mapping* m = model.MappingAt(t->buffer, at, &start);
          if (m == nullptr) {
            same = false;
            break;
          }
          if (perm && *perm != m->access[device]) same = false;
          perm = m->access[device];
          at = start + m->size;
        }
        if (same && perm) uniform.emplace_back(t, *perm);
      }
      if (uniform.empty()) return false;
      const auto [t, perm] = rng.Pick(uniform);
      MapBuilder step = Op("check_access");
      step.Add("buffer", t->name);
      if (device != 0) step.Num("device", static_cast<uint64_t>(device));
      step.Add("expect", PermName(perm));
      Emit(step.Build());
      return true;
    }
  }
}

bool Generator::MarkOrCheckMemory() {
  if (marks.empty() || rng.Percent(35)) {
    const std::string name = Name("mark " + std::to_string(marks.size() + 1));
    marks[name] = model.HeldBytes(0);
    Emit(Op("mark").Add("name", name).Build());
    return true;
  }
  std::vector<std::string> names_;
  for (const auto& [name, held] : marks) names_.push_back(name);
  const std::string since = rng.Pick(names_);
  const uint64_t then = marks[since], now = model.HeldBytes(0);
  MapBuilder step = Op("check_memory");
  step.Add("since", since);
  if (rng.Percent(50)) step.Add("subject", "scenario");
  if (now >= then) {
    step.Add("used", MapBuilder().Size("about", now - then).Build());
  } else {
    step.Add("freed", MapBuilder().Size("about", then - now).Build());
  }
  Emit(step.Build());
  return true;
}

void Generator::Teardown() {
  for (auto& [buffer, r] : model.reservations) {
    if (!r.reserved) continue;
    while (!r.maps.empty()) {
      // One unmap per run of adjacent mappings.
      const uint64_t offset = r.maps.begin()->first;
      uint64_t size = 0;
      for (auto it = r.maps.begin(); it != r.maps.end() && it->first == offset + size;) {
        size += it->second.size;
        --model.phys[it->second.phys].mappings;
        it = r.maps.erase(it);
      }
      Emit(Op("unmap").Add("buffer", buffer).Size("offset", offset).Size("size", size).Build());
    }
  }
  for (auto& [name, a] : model.allocs) {
    if (!a.live) continue;
    a.live = false;
    --model.phys[a.phys].handles;
    Emit(Op("release").Add("alloc", name).Build());
  }
  for (auto& [buffer, r] : model.reservations) {
    if (!r.reserved) continue;
    r.reserved = false;
    Emit(Op("free").Add("buffer", buffer).Build());
  }
}

}  // namespace vmm::gen
