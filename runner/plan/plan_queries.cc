// PlanBuilder's queries (retain, check_properties, check_range, check_granularity, mark,
// check_memory) and the keys they share with create (allocation properties) and reserve (the
// address hint). What each answer is compared with is decided here, once, into PlanQuery.
#include <string>

#include "runner/base/format.h"
#include "runner/plan/plan_builder.h"
#include "runner/scenario/size.h"

namespace vmm {

bool Bound::Holds(int64_t observed) const {
  const int64_t v = static_cast<int64_t>(value);
  switch (cmp) {
    case Cmp::kEqual:
      return observed == v;
    case Cmp::kAtLeast:
      return observed >= v;
    case Cmp::kAtMost:
      return observed <= v;
    case Cmp::kAbout:
      return observed >= v - static_cast<int64_t>(tolerance) &&
             observed <= v + static_cast<int64_t>(tolerance);
  }
  return false;
}

std::string Bound::Text() const {
  switch (cmp) {
    case Cmp::kEqual:
      return quantity + " " + FormatBytes(value);
    case Cmp::kAtLeast:
      return quantity + " at least " + FormatBytes(value);
    case Cmp::kAtMost:
      return quantity + " at most " + FormatBytes(value);
    case Cmp::kAbout:
      return quantity + " about " + FormatBytes(value) + " ± " + FormatBytes(tolerance);
  }
  return quantity;
}

AllocProps PlanBuilder::PropsFromKeys(const Step& step, bool* any) {
  AllocProps props;
  *any = step.location().set || step.numa_node().set || step.compression().set ||
         step.gpudirect_rdma().set;
  ParseMemLocation(step.location().value, &props.location);  // the schema allows the three words
  if (step.numa_node().set) {
    if (props.location != MemLocation::kHostNuma) {
      Error(step.numa_node().loc,
            std::string("'numa_node' is for location host_numa; this step asks "
                        "for ") +
                MemLocationName(props.location) + " memory");
    }
    props.location_id = static_cast<int>(step.numa_node().value);  // the schema bounds it
  } else if (props.location == MemLocation::kHostNuma) {
    props.location_id = 0;
  }
  props.compression = step.compression().value;
  props.gpudirect_rdma = step.gpudirect_rdma().value;
  return props;
}

bool PlanBuilder::EntrySize(const StepMapEntry& e, uint64_t* bytes) {
  bool overflow = false;
  if (std::optional<uint64_t> v = ParseSize(e.value.value, &overflow)) {
    *bytes = *v;
    return true;
  }
  Error(e.value.loc, "'" + e.key + "' is too large: '" + e.value.value +
                         "' does not fit in 64 bits");  // the schema allows only sizes here
  return false;
}

bool PlanBuilder::ReadBound(const StepMap& map, const char* quantity, const Step& step,
                            Bound* out) {
  out->quantity = quantity;
  int given = 0;
  const StepMapEntry* tolerance = nullptr;
  bool ok = true;
  for (const StepMapEntry& e : map.entries) {
    uint64_t bytes = 0;
    ok = EntrySize(e, &bytes) && ok;
    if (e.key == "tolerance") {
      tolerance = &e;
      out->tolerance = bytes;
      continue;
    }
    ++given;
    out->value = bytes;
    out->cmp = e.key == "at_least"  ? Bound::Cmp::kAtLeast
               : e.key == "at_most" ? Bound::Cmp::kAtMost
                                    : Bound::Cmp::kAbout;
  }
  if (given != 1) {
    Error(map.set ? map.loc : step.loc, std::string("'") + quantity +
                                            "' needs exactly one of 'at_least', 'at_most' or "
                                            "'about'");
    return false;
  }
  if (tolerance != nullptr && out->cmp != Bound::Cmp::kAbout) {
    Error(tolerance->value.loc, "'tolerance' goes with 'about'");
    return false;
  }
  return ok;
}

void PlanBuilder::AddressHint(const Step& step, PlanStep* p) {
  const bool hint = step.address().set || step.address_map().set;
  const Located<std::string>& expect_address = Key(step, "expect_address");
  if (expect_address.set && !hint) {
    Error(expect_address.loc, "'expect_address' needs 'address' (the hint to compare with)");
  }
  if (expect_address.value == "honoured") p->expect = Expectation::kHonoured;
  if (expect_address.value == "moved") p->expect = Expectation::kMoved;
  if (step.address().set) {
    p->offset = step.address().value;
    if (p->offset == 0 || p->offset % granularity_ != 0) {
      Error(step.address().loc, "'address' " + Hex(p->offset) +
                                    " is not a non-zero multiple of the granularity (" +
                                    FormatBytes(granularity_) + ")");
    }
    return;
  }
  if (!step.address_map().set) return;
  const StepMap& m = step.address_map();
  if (m.entries.size() != 1) {
    Error(m.loc, "'address' needs exactly one of 'at' or 'after'");
    return;
  }
  const StepMapEntry& e = m.entries.front();
  Located<std::string> ref = e.value;
  const int slot = ResolveBuffer(ref, step);
  if (slot < 0) return;
  const PlanBuffer& b = plan_.buffers[slot];
  if (b.base >= 0) {
    Error(e.value.loc, "'" + e.key + "' names view '" + b.name +
                           "'; an address hint names a buffer (its reservation)");
    return;
  }
  if (last_reserved_size_[slot] == 0) {
    Error(e.value.loc, "'" + e.key + "' names buffer '" + b.name +
                           "', which has not been reserved before this step");
    return;
  }
  p->other = slot;
  p->offset = e.key == "after" ? last_reserved_size_[slot] : 0;
}

const MappingRecord* PlanBuilder::MappedAt(int slot, uint64_t offset, const Step& step,
                                           uint64_t* at) {
  const PlanBuffer& b = plan_.buffers[slot];
  const int owner = b.base >= 0 ? b.base : slot;
  const ReservationState& r = reservations_[owner];
  *at = b.offset + offset;
  const std::string where =
      std::string(OpName(step.op)) + " at " + FormatBytes(offset) + " into '" + b.name + "'" +
      (b.base >= 0 ? " (" + FormatBytes(*at) + " into '" + plan_.buffers[owner].name + "')" : "");
  if (!r.reserved()) {
    Error(At(step.buffer(), step),
          where + ": '" + plan_.buffers[owner].name + "' is not reserved at this step");
    return nullptr;
  }
  if (*at >= r.size()) {
    Error(At(step.offset(), step), where + " is past the end of the " + FormatBytes(r.size()) +
                                       " reservation of '" + plan_.buffers[owner].name + "'");
    return nullptr;
  }
  const MappingRecord* m = r.FirstOverlap(ByteRange{*at, *at + 1});
  if (m == nullptr)
    Error(At(step.buffer(), step), where + ": nothing is mapped there at this step");
  return m;
}

template <>
void PlanBuilder::PlanOp<Op::kRetain>(const Step& step, PlanStep* p, BufferUses*) {
  p->query = PlanQuery{};
  p->buffer = ResolveBuffer(step.buffer(), step);
  p->offset = step.offset().value;
  const MappingRecord* m = nullptr;
  uint64_t at = 0;
  if (p->buffer >= 0) m = MappedAt(p->buffer, p->offset, step, &at);
  if (const StepMapEntry* same = step.expect_map().Find("same_as")) {
    std::string error;
    p->query->same_as = allocs_.Resolve(same->value.value, &error);
    if (p->query->same_as < 0) Error(same->value.loc, error);
    p->expect = Expectation::kAnswers;
  }
  std::string error;
  p->alloc = allocs_.Create(step.alloc().value, step.loc.line, &error);
  if (!error.empty()) return Error(At(step.alloc(), step), error);
  // The retained handle is the mapped allocation: its size (a whole allocation is mapped).
  const uint64_t size = m != nullptr && m->alloc_slot >= 0 ? plan_.alloc_sizes[m->alloc_slot] : 0;
  plan_.alloc_sizes.push_back(size);
  alloc_memory_.push_back(m != nullptr && m->alloc_slot >= 0 ? alloc_memory_[m->alloc_slot] : -1);
  AllocSpec spec;
  spec.props.size = size;
  plan_.alloc_specs.push_back(spec);
  plan_.alloc_devices.push_back(
      m != nullptr && m->alloc_slot >= 0 ? plan_.alloc_devices[m->alloc_slot] : -1);
}

template <>
void PlanBuilder::PlanOp<Op::kCheckProperties>(const Step& step, PlanStep* p, BufferUses*) {
  p->query = PlanQuery{};
  p->expect = Expectation::kAnswers;
  std::string error;
  p->alloc = allocs_.Resolve(step.alloc().value, &error);
  if (p->alloc < 0) Error(At(step.alloc(), step), error);
  PlanQuery& q = *p->query;
  for (const StepMapEntry& e : step.expect_map().entries) {
    if (e.key == "location") {
      ParseMemLocation(e.value.value, &q.props.location);
      q.asserted |= kCheckLocation;
    } else if (e.key == "numa_node") {
      q.props.location_id = std::stoi(e.value.value);  // the schema bounds it
      q.asserted |= kCheckNumaNode;
    } else if (e.key == "compression") {
      q.props.compression = e.value.value == "true";
      q.asserted |= kCheckCompression;
    } else if (e.key == "gpudirect_rdma") {
      q.props.gpudirect_rdma = e.value.value == "true";
      q.asserted |= kCheckGpuDirectRdma;
    } else if (e.key == "device") {
      q.device = std::stoi(e.value.value);  // the schema bounds it to 0..31
      q.asserted |= kCheckDevice;
      if (q.device >= plan_.devices) {
        Error(e.value.loc, "device " + std::to_string(q.device) + " is not one of the scenario's " +
                               std::to_string(plan_.devices) +
                               " devices; raise 'requires: {devices: N}' or check another device");
      }
    }
  }
  if (q.asserted == 0) {
    Error(step.expect_map().set ? step.expect_map().loc : step.loc,
          "check_properties needs at least one property under 'expect' (location, numa_node, "
          "compression, gpudirect_rdma, device)");
  }
}

template <>
void PlanBuilder::PlanOp<Op::kCheckRange>(const Step& step, PlanStep* p, BufferUses*) {
  p->query = PlanQuery{};
  p->expect = Expectation::kAnswers;
  PlanQuery& q = *p->query;
  p->buffer = ResolveBuffer(step.buffer(), step);
  p->offset = step.offset().value;
  uint64_t at = 0;
  const MappingRecord* m = p->buffer >= 0 ? MappedAt(p->buffer, p->offset, step, &at) : nullptr;
  if (m != nullptr) {
    // cuMemGetAddressRange finds a mapping only once the device has access to it.
    const int owner = Owner(p->buffer);
    const AccessProblem problem =
        reservations_[owner].FirstProblem(ByteRange{at, at + 1}, Access::kRead, 0);
    if (problem == AccessProblem::kNeverSet || problem == AccessProblem::kAccessNone) {
      Refusal(
          At(step.buffer(), step),
          "check_range at " + FormatBytes(p->offset) + " into '" + step.buffer().value +
              "': the mapping there " +
              (problem == AccessProblem::kNeverSet ? "has no access yet" : "has access 'none'") +
              ", and cuMemGetAddressRange finds a mapping only once the device has access to "
              "it (CUDA_ERROR_NOT_FOUND on the H200); set_access first",
          "range_without_access");
    }
  }
  const StepMapEntry* base = step.expect_map().Find("base");
  const StepMapEntry* base_offset = step.expect_map().Find("base_offset");
  const StepMapEntry* size = step.expect_map().Find("size");
  if (base != nullptr) q.base = ResolveBuffer(base->value, step);
  if (base_offset != nullptr) {
    EntrySize(*base_offset, &q.base_offset);
    if (base == nullptr) Error(base_offset->value.loc, "'base_offset' needs 'base'");
  }
  if (size != nullptr) {
    Bound b;
    b.quantity = "size";
    if (EntrySize(*size, &b.value)) q.bounds.push_back(b);
  }
  if (base == nullptr && size == nullptr)
    Error(step.expect_map().set ? step.expect_map().loc : step.loc,
          "check_range needs 'base' or 'size' under 'expect'");
}

template <>
void PlanBuilder::PlanOp<Op::kCheckGranularity>(const Step& step, PlanStep* p, BufferUses*) {
  p->query = PlanQuery{};
  p->expect = Expectation::kAnswers;
  PlanQuery& q = *p->query;
  bool any = false;
  q.props = PropsFromKeys(step, &any);
  for (const StepMapEntry& e : step.expect_map().entries) {
    Bound b;
    const bool minimum = e.key.rfind("minimum", 0) == 0;
    b.quantity = minimum ? "minimum" : "recommended";
    b.cmp = e.key.find("_at_most") != std::string::npos ? Bound::Cmp::kAtMost : Bound::Cmp::kEqual;
    if (EntrySize(e, &b.value)) q.bounds.push_back(b);
  }
  if (step.expect_map().entries.empty()) {
    Error(step.expect_map().set ? step.expect_map().loc : step.loc,
          "check_granularity needs at least one of 'minimum', 'recommended', 'minimum_at_most' or "
          "'recommended_at_most' under 'expect'");
  }
}

template <>
void PlanBuilder::PlanOp<Op::kMark>(const Step& step, PlanStep* p, BufferUses*) {
  p->query = PlanQuery{};
  p->query->mark = static_cast<int>(plan_.marks.size());
  p->query->held_at_mark = HeldBytes(p->device);
  plan_.marks.push_back(step.name.value);
  mark_held_.push_back(p->query->held_at_mark);
  marks_.emplace(step.name.value, p->query->mark);  // names are unique (checked for every step)
}

template <>
void PlanBuilder::PlanOp<Op::kCheckMemory>(const Step& step, PlanStep* p, BufferUses*) {
  p->query = PlanQuery{};
  p->expect = Expectation::kAnswers;
  PlanQuery& q = *p->query;
  const Located<std::string>& since = Key(step, "since");
  if (auto it = marks_.find(since.value); it != marks_.end()) {
    q.mark = it->second;
    q.held_at_mark = mark_held_[q.mark];
  } else if (auto named = step_names_.find(since.value); named != step_names_.end()) {
    Error(since.loc, named->second.op == Op::kMark
                         ? "'since' names mark '" + since.value + "' (line " +
                               std::to_string(named->second.line) + "), which comes after this step"
                         : "'since' names '" + since.value + "', a " + OpName(named->second.op) +
                               " step; check_memory counts from a mark step");
  } else {
    std::vector<std::string> names(plan_.marks.begin(), plan_.marks.end());
    const std::string close = SuggestName(since.value, names);
    Error(since.loc, "'since' names '" + since.value + "', which is not a mark step" +
                         (!close.empty()  ? "; did you mean '" + close + "'?"
                          : names.empty() ? "; add {op: mark, name: ...} before this step"
                                          : std::string()));
  }
  q.held_now = HeldBytes(p->device);
  const Located<std::string>& subject = Key(step, "subject");
  if (subject.set && subject.value != "scenario" && subject.value != "device") {
    Error(subject.loc,
          "'subject' must be scenario (the bytes this scenario's creates hold) or "
          "device (the device's free memory, cuMemGetInfo), got '" +
              subject.value + "'");
  }
  q.device_subject = subject.set && subject.value == "device";
  if (step.freed().set == step.used().set) {
    Error(step.loc, "check_memory needs exactly one of 'freed' or 'used'");
    return;
  }
  Bound b;
  if (ReadBound(step.freed().set ? step.freed() : step.used(), step.freed().set ? "freed" : "used",
                step, &b)) {
    q.bounds.push_back(b);
  }
}

}  // namespace vmm

namespace vmm {

uint64_t PlanBuilder::HeldBytes(int device) const {
  std::vector<bool> alive(alloc_memory_.size(), false);
  for (size_t slot = 0; slot < alloc_memory_.size(); ++slot) {
    const int memory = alloc_memory_[slot];
    if (memory >= 0 && allocs_.LiveSlot(plan_.allocs[slot]) == static_cast<int>(slot))
      alive[memory] = true;
  }
  for (const ReservationState& r : reservations_)
    for (const MappingRecord& m : r.mappings())
      if (m.alloc_slot >= 0 && alloc_memory_[m.alloc_slot] >= 0)
        alive[alloc_memory_[m.alloc_slot]] = true;
  uint64_t held = 0;
  for (size_t memory = 0; memory < alive.size(); ++memory)
    if (alive[memory] && plan_.alloc_devices[memory] == device) held += plan_.alloc_sizes[memory];
  return held;
}

}  // namespace vmm
