// PlanBuilder's VMM steps: reserve, free, create, release, map, set_access, unmap, and the access
// check every kernel and replay goes through. The VMM rules refused here, with what the CUDA driver
// returns for each, are one table in runner/vocab/vmm_rules.h; tests/vmm_rules_test.cc pins the
// exact messages below against it.
#include "runner/base/format.h"
#include "runner/plan/plan_builder.h"

namespace vmm {
namespace {

uint64_t RoundUp(uint64_t value, uint64_t granularity) {
  return (value + granularity - 1) / granularity * granularity;
}

}  // namespace

bool PlanBuilder::Aligned(const Located<uint64_t>& field, const char* key, uint64_t value,
                          const Step& step, std::string_view rule_id) {
  if (value % granularity_ == 0) return true;
  std::string message = std::string("'") + key + "' " + FormatBytes(value) +
                        " is not a multiple of the granularity (" + FormatBytes(granularity_) + ")";
  if (rule_id.empty()) {
    Error(At(field, step), std::move(message));
  } else {
    Refusal(At(field, step), std::move(message), rule_id);
  }
  return false;
}

int PlanBuilder::MemoryBuffer(const Step& step) {
  const int slot = ResolveBuffer(step.buffer(), step);
  if (slot < 0 || plan_.buffers[slot].base < 0) return slot;
  const std::string& owner = plan_.buffers[plan_.buffers[slot].base].name;
  Error(At(step.buffer(), step), "'" + step.buffer().value + "' is a view into '" + owner + "'; " +
                                     OpName(step.op) + " acts on reservations: use buffer '" +
                                     owner + "' (with an offset)");
  return -1;
}

void PlanBuilder::Reserve(const Step& step, PlanStep* p) {
  p->buffer = MemoryBuffer(step);
  // Alignment 0 (the default) means the scenario's granularity, resolved here once for every
  // backend.
  p->alignment = step.alignment().value != 0 ? step.alignment().value : granularity_;
  Aligned(step.alignment(), "alignment", p->alignment, step);
  if (p->buffer < 0) return;
  PlanBuffer& buffer = plan_.buffers[p->buffer];
  p->size = step.size().set ? step.size().value : RoundUp(buffer.bytes, granularity_);
  if (step.size().set) {
    if (p->size < buffer.bytes) {
      Error(At(step.size(), step), "'size' " + FormatBytes(p->size) + " is smaller than buffer '" +
                                       buffer.name + "' (" + FormatBytes(buffer.bytes) + ")");
    } else if (p->size == 0) {
      Error(At(step.size(), step), "'size' must be greater than 0");
    } else {
      Aligned(step.size(), "size", p->size, step, "reserve_size_not_granular");
    }
  }
  if (const GraphAllocation& a = graph_allocs_[p->buffer]; a.graph >= 0) {
    Error(At(step.buffer(), step),
          "buffer '" + buffer.name + "' holds a graph allocation (mem_alloc at line " +
              std::to_string(a.alloc_line) + "); reserve a buffer of its own");
    return;
  }
  ReservationState& r = reservations_[p->buffer];
  if (r.reserved()) {
    const auto& [label, line] = reserved_by_[p->buffer];
    Error(At(step.buffer(), step), "buffer '" + buffer.name + "' is already reserved (by step '" +
                                       label + "' at line " + std::to_string(line) +
                                       "); free it first");
    return;
  }
  if (buffer.reservation_size == 0) buffer.reservation_size = p->size;
  AddressHint(step, p);  // before this reservation counts: a hint may name the buffer's last one
  r.Reserve(p->size);
  reservation_id_[p->buffer] = reservations_made_++;
  reserved_by_[p->buffer] = {p->label, step.loc.line};
  last_reserved_size_[p->buffer] = p->size;
}

int PlanBuilder::ReservedBuffer(const Step& step, std::string_view freed_rule) {
  const int buffer = MemoryBuffer(step);
  if (buffer < 0) return -1;
  if (reservations_[buffer].reserved()) return buffer;
  const int freed = freed_line_[buffer];
  std::string message =
      "buffer '" + step.buffer().value + "' is not reserved" +
      (freed > 0 ? ": it was freed at line " + std::to_string(freed)
                 : " at this step" + (ReservedInParent(buffer) ? BlockHint() : ""));
  if (freed == 0 || freed_rule.empty()) {
    Error(At(step.buffer(), step), std::move(message));
    return -1;
  }
  const size_t errors = diagnostics_->size();
  Refusal(At(step.buffer(), step), std::move(message), freed_rule);
  return diagnostics_->size() == errors ? buffer : -1;  // let through: the freed range is named
}

void PlanBuilder::Free(const Step& step, PlanStep* p) {
  p->buffer = ReservedBuffer(step, "double_free");
  if (p->buffer < 0) return;
  ReservationState& r = reservations_[p->buffer];
  if (!r.reserved()) {  // a second free, let through for expect_error: the range freed before
    p->size = last_reserved_size_[p->buffer];
    return;
  }
  p->size = r.size();
  if (!r.mappings().empty()) {
    const MappingRecord& m = r.mappings().front();
    Refusal(At(step.buffer(), step),
            "cannot free buffer '" + step.buffer().value + "': " + FormatRange(m.range) +
                " is still mapped (by step '" + m.step_label + "' at line " +
                std::to_string(m.line) + "); unmap it first",
            "free_while_mapped");
  }
  r.Free();
  reservation_id_[p->buffer] = -1;
  freed_line_[p->buffer] = step.loc.line;
}

void PlanBuilder::Create(const Step& step, PlanStep* p) {
  p->size = step.size().value;
  if (p->size == 0) {
    Error(At(step.size(), step), "'size' must be greater than 0");
  } else {
    Aligned(step.size(), "size", p->size, step, "create_size_not_granular");
  }
  AllocSpec spec;
  spec.props = PropsFromKeys(step, &spec.read_back);
  spec.props.size = p->size;
  spec.props.handle_types = HandleTypes(step);
  if (spec.props.handle_types != 0) spec.read_back = true;
  if (step.granularity().set) {
    spec.granularity = step.granularity().value == "recommended" ? GranularityKind::kRecommended
                                                                 : GranularityKind::kMinimum;
    spec.read_back = true;
  }
  std::string error;
  p->alloc = allocs_.Create(step.alloc().value, step.loc.line, &error);
  if (!error.empty()) return Error(At(step.alloc(), step), error);
  plan_.alloc_sizes.push_back(p->size);
  alloc_memory_.push_back(p->alloc);
  // Visit resolved the step's `device`; memory in host RAM belongs to no device (-1).
  plan_.alloc_devices.push_back(spec.props.location == MemLocation::kDevice ? p->device : -1);
  plan_.alloc_specs.push_back(spec);
  UndoCreate(step, p);
}

void PlanBuilder::Release(const Step& step, PlanStep* p) {
  NoWaitOnlyInBlocks(step);
  std::string error;
  p->alloc = allocs_.Resolve(step.alloc().value, &error);
  if (p->alloc < 0 && allocs_.Ended(step.alloc().value)) {
    // Let through only in an isolate block (VmmRule::blocks_only): the released handle, again.
    Refusal(At(step.alloc(), step), error, "double_release");
    if (current_plan_->broken_rule != nullptr) p->alloc = allocs_.LastSlot(step.alloc().value);
    return;
  }
  if (p->alloc < 0) return Error(At(step.alloc(), step), error + AllocHint(step.alloc().value));
  UndoRelease(step, p);
  // Legal while still mapped: the memory lives until its last mapping is unmapped.
  allocs_.End(step.alloc().value, step.loc.line);
}

void PlanBuilder::Map(const Step& step, PlanStep* p) {
  std::string error;
  p->alloc = allocs_.Resolve(step.alloc().value, &error);
  if (p->alloc < 0 && allocs_.Ended(step.alloc().value)) {
    // Let through only in an isolate block (VmmRule::blocks_only): the released handle.
    Refusal(At(step.alloc(), step), error, "map_after_release");
    if (current_plan_->broken_rule != nullptr) p->alloc = allocs_.LastSlot(step.alloc().value);
  } else if (p->alloc < 0) {
    Error(At(step.alloc(), step), error + AllocHint(step.alloc().value));
  }
  p->buffer = ReservedBuffer(step);
  p->offset = step.offset().value;
  p->alloc_offset = step.alloc_offset().value;
  bool ok = Aligned(step.offset(), "offset", p->offset, step, "map_misaligned_address");
  ok = Aligned(step.alloc_offset(), "alloc_offset", p->alloc_offset, step, "map_part_of_alloc") &&
       ok;
  if (p->alloc >= 0) {
    const uint64_t alloc_size = plan_.alloc_sizes[p->alloc];
    if (step.size().set) {
      p->size = step.size().value;
    } else if (p->alloc_offset < alloc_size) {
      p->size = alloc_size - p->alloc_offset;
    } else {
      Error(At(step.alloc_offset(), step), "'alloc_offset' " + FormatBytes(p->alloc_offset) +
                                               " leaves nothing of alloc '" + step.alloc().value +
                                               "' (" + FormatBytes(alloc_size) + ") to map");
      return;
    }
    if (step.size().set && p->alloc_offset + p->size > alloc_size) {
      Error(At(step.size(), step), "'alloc_offset' + 'size' is " +
                                       FormatBytes(p->alloc_offset + p->size) +
                                       ", past the end of alloc '" + step.alloc().value + "' (" +
                                       FormatBytes(alloc_size) + ")");
      ok = false;
    } else if (p->alloc_offset != 0 || p->size != alloc_size) {
      // Seen on the H200 (driver 580.159): cuMemMap of part of a handle returns
      // CUDA_ERROR_NOT_SUPPORTED, as the driver documentation's "offset must be zero" warns.
      Refusal(step.alloc_offset().set ? step.alloc_offset().loc : At(step.size(), step),
              "map of part of alloc '" + step.alloc().value + "' (" + FormatBytes(p->size) +
                  " at offset " + FormatBytes(p->alloc_offset) + " of " + FormatBytes(alloc_size) +
                  "): the CUDA driver maps whole allocations only (CUDA_ERROR_NOT_SUPPORTED); "
                  "create an allocation of the size to map",
              "map_part_of_alloc");
      ok = false;
    }
  } else {
    p->size = step.size().value;
  }
  if (p->size == 0 && step.size().set) {
    Error(At(step.size(), step), "'size' must be greater than 0");
    ok = false;
  } else if (step.size().set) {
    ok = Aligned(step.size(), "size", p->size, step, "map_part_of_alloc") && ok;
  }
  if (p->buffer < 0 || p->size == 0) return;
  ReservationState& r = reservations_[p->buffer];
  const ByteRange range{p->offset, p->offset + p->size};
  if (range.end > r.size() || range.end < range.begin) {
    Refusal(step.offset().set ? step.offset().loc : At(step.size(), step),
            "mapping " + FormatRange(range) + " does not fit in the " + FormatBytes(r.size()) +
                " reservation of '" + step.buffer().value + "'",
            "map_past_reservation_end");
    return;
  }
  if (const MappingRecord* m = r.FirstOverlap(range)) {
    Refusal(step.loc,
            FormatRange(m->range) + " of '" + step.buffer().value +
                "' is already mapped (by step '" + m->step_label + "' at line " +
                std::to_string(m->line) + "); unmap it first",
            "map_over_live_mapping");
    return;
  }
  // Recorded even when an offset was misaligned or the alloc unknown, so later steps are judged
  // against what the author meant instead of repeating this step's error.
  (void)ok;
  r.AddMapping(MappingRecord{range, p->alloc, p->label, step.loc.line});
  UndoMap(step, p);
}

bool PlanBuilder::Range(const Step& step, int buffer, PlanStep* p, ByteRange* range) {
  const ReservationState& r = reservations_[buffer];
  p->offset = step.offset().value;
  bool ok = Aligned(step.offset(), "offset", p->offset, step);
  if (step.size().set) {
    p->size = step.size().value;
    if (p->size == 0) {
      Error(At(step.size(), step), "'size' must be greater than 0");
      ok = false;
    } else {
      ok = Aligned(step.size(), "size", p->size, step) && ok;
    }
  } else if (p->offset < r.size()) {
    p->size = r.size() - p->offset;
  } else {
    Error(At(step.offset(), step), "'offset' " + FormatBytes(p->offset) +
                                       " is past the end of the " + FormatBytes(r.size()) +
                                       " reservation of '" + step.buffer().value + "'");
    return false;
  }
  *range = ByteRange{p->offset, p->offset + p->size};
  if (ok && (range->end > r.size() || range->end <= range->begin)) {
    Error(step.offset().set ? step.offset().loc : At(step.size(), step),
          "range " + FormatRange(*range) + " does not fit in the " + FormatBytes(r.size()) +
              " reservation of '" + step.buffer().value + "'");
    ok = false;
  }
  return ok;
}

void PlanBuilder::DefaultToMappedRun(const Step& step, const ReservationState& r, PlanStep* p,
                                     ByteRange* range) const {
  if (step.size().set) return;
  const std::optional<ByteRange> hole = r.FirstUnmapped(*range);
  if (!hole || hole->begin == range->begin) return;
  range->end = hole->begin;
  p->size = range->end - range->begin;
}

void PlanBuilder::SetAccess(const Step& step, PlanStep* p) {
  NoWaitOnlyInBlocks(step);
  DeviceAccessList(step, p);
  p->buffer = ReservedBuffer(step);
  ByteRange range;
  if (p->buffer < 0 || !Range(step, p->buffer, p, &range)) return;
  ReservationState& r = reservations_[p->buffer];
  DefaultToMappedRun(step, r, p, &range);
  if (std::optional<ByteRange> hole = r.FirstUnmapped(range)) {
    std::string hint = hole->begin == range.begin ? "; map it first"
                       : step.size().set
                           ? "; leave out 'size' to cover what is mapped from 'offset'"
                           : "";
    // Nothing mapped where a default range starts, something further on: say where.
    if (hole->begin == range.begin && !step.size().set) {
      const MappingRecord* next = nullptr;
      for (const MappingRecord& m : r.mappings())
        if (m.range.begin >= range.begin && (next == nullptr || m.range.begin < next->range.begin))
          next = &m;
      if (next != nullptr)
        hint =
            "; without 'size', set_access covers what is mapped from its offset, and the first "
            "mapping after it starts at " +
            FormatBytes(next->range.begin) + ": write 'offset: " + SizeLiteral(next->range.begin) +
            "' (or map " + FormatRange(*hole) + " first)";
    }
    Refusal(step.loc,
            "cannot set access on " + FormatRange(range) + " of '" + step.buffer().value +
                "': " + FormatRange(*hole) + " is not mapped" + hint,
            "set_access_unmapped");
    return;
  }
  // Seen on the H200 (driver 580.159): cuMemSetAccess over half of a mapping returns
  // CUDA_ERROR_INVALID_VALUE; several whole mappings at once are fine.
  if (const MappingRecord* m = r.FirstCut(range)) {
    Refusal(step.loc,
            "cannot set access on " + FormatRange(range) + " of '" + step.buffer().value +
                "': it covers part of the mapping " + FormatRange(m->range) + " made by step '" +
                m->step_label + "' at line " + std::to_string(m->line) +
                " (CUDA sets access on whole mappings only, CUDA_ERROR_INVALID_VALUE)",
            "set_access_part_of_mapping");
    return;
  }
  ApplyAccess(r, range, p->device_access);
}

void PlanBuilder::Unmap(const Step& step, PlanStep* p) {
  NoWaitOnlyInBlocks(step);
  p->buffer = ReservedBuffer(step);
  ByteRange range;
  if (p->buffer < 0 || !Range(step, p->buffer, p, &range)) return;
  ReservationState& r = reservations_[p->buffer];
  DefaultToMappedRun(step, r, p, &range);
  const std::string what =
      "cannot unmap " + FormatRange(range) + " of '" + step.buffer().value + "': ";
  if (r.FirstOverlap(range) == nullptr) {
    Refusal(step.loc, what + "nothing is mapped there", "unmap_not_mapped");
    return;
  }
  if (const MappingRecord* m = r.FirstCut(range)) {
    Refusal(step.loc,
            what + "it would split the mapping " + FormatRange(m->range) + " made by step '" +
                m->step_label + "' at line " + std::to_string(m->line) +
                " (CUDA unmaps whole mappings only)",
            "unmap_splits_mapping");
    return;
  }
  if (std::optional<ByteRange> hole = r.FirstUnmapped(range)) {
    // The driver skips unmapped space (as for a range where nothing is mapped).
    Refusal(step.loc, what + FormatRange(*hole) + " is not mapped", "unmap_not_mapped");
  }
  UndoUnmap(step, r, range, p);
  r.RemoveMappings(range);
}

void PlanBuilder::Use(int buffer, Access need, const std::string& actor, const SourceLoc& loc,
                      int device) {
  const PlanBuffer& b = plan_.buffers[buffer];
  const int owner = b.base >= 0 ? b.base : buffer;  // a view lives in its buffer's reservation
  const ReservationState& r = reservations_[owner];
  const std::string who = b.base < 0 ? actor + " buffer '" + b.name + "', which "
                                     : actor + " view '" + b.name + "' (" +
                                           FormatRange({b.offset, b.offset + b.bytes}) + " of '" +
                                           plan_.buffers[owner].name + "'), which ";
  // A graph allocation (mem_alloc) is read_write memory while it lives.
  if (const GraphAllocation& a = graph_allocs_[owner]; a.graph >= 0) {
    if (a.live) return;
    return Error(
        loc,
        who + "is a graph allocation (mem_alloc at line " + std::to_string(a.alloc_line) +
            ") that holds no memory at this step" +
            (a.freed_line > 0 ? ": it was freed at line " + std::to_string(a.freed_line)
                              : ": replay an exec of graph '" + plan_.graphs[a.graph] + "' first"));
  }
  // Every problem below is a device fault when the work runs (never sent, expect_error or not).
  constexpr std::string_view kFault = "write_without_access";
  if (!r.reserved()) {
    const int freed = freed_line_[owner];
    Refusal(loc,
            who + (freed > 0 ? "was freed at line " + std::to_string(freed)
                             : "is not reserved at this step" +
                                   (ReservedInParent(owner) ? BlockHint() : "")),
            kFault);
    return;
  }
  const ByteRange range{b.offset, b.offset + b.bytes};
  if (range.end > r.size()) {
    return Refusal(loc, who + "ends past the " + FormatBytes(r.size()) + " reservation", kFault);
  }
  // Inside an isolate block that expects an error, a signal or a timeout, touching memory without
  // access is what the block is about: the child faults (CUDA_ERROR_ILLEGAL_ADDRESS on the GPU and
  // on the host twin). An unreserved range or one past the reservation stays an error: its address
  // is not the scenario's at all.
  if (faults_allowed_) return;
  const std::string on = ForDevice(device);
  switch (r.FirstProblem(range, need, device)) {
    case AccessProblem::kNone:
      return;
    case AccessProblem::kNotMapped:
      return Refusal(loc, who + "is not mapped at this step", kFault);
    case AccessProblem::kPartlyMapped:
      return Refusal(
          loc, who + "is only partly mapped (" + FormatRange(*r.FirstUnmapped(range)) + " is not)",
          kFault);
    case AccessProblem::kNeverSet:
      return Refusal(loc,
                     who + "has no access yet" + on + " (a new mapping has none until set_access)",
                     kFault);
    case AccessProblem::kAccessNone:
      return Refusal(loc, who + "has access 'none'" + on, kFault);
    case AccessProblem::kReadOnly:
      return Refusal(loc, who + "is mapped read-only" + on + " (set_access with read_write first)",
                     "write_read_only");
  }
}

std::string PlanBuilder::AllocHint(const std::string& name) const {
  return LiveInParent(&PlanBuilder::allocs_, name) ? BlockHint() : "";
}

void PlanBuilder::NoWaitOnlyInBlocks(const Step& step) {
  if (!step.wait().set || step.wait().value || parent_ != nullptr) return;
  Error(step.wait().loc, std::string("'wait: false' on ") + OpName(step.op) +
                             " is allowed only inside an isolate block: a call that does not wait "
                             "for running kernels faults them, and the fault poisons the process "
                             "that makes it; put the step in {isolate: {expect: "
                             "CUDA_ERROR_ILLEGAL_ADDRESS}, steps: [...]}");
}

#define VMM_PLAN_MEMORY(Enum, Method)                                              \
  template <>                                                                      \
  void PlanBuilder::PlanOp<Op::Enum>(const Step& step, PlanStep* p, BufferUses*) { \
    Method(step, p);                                                               \
  }
VMM_PLAN_MEMORY(kReserve, Reserve)
VMM_PLAN_MEMORY(kFree, Free)
VMM_PLAN_MEMORY(kCreate, Create)
VMM_PLAN_MEMORY(kRelease, Release)
VMM_PLAN_MEMORY(kMap, Map)
VMM_PLAN_MEMORY(kSetAccess, SetAccess)
VMM_PLAN_MEMORY(kUnmap, Unmap)
VMM_PLAN_MEMORY(kExport, Export)
VMM_PLAN_MEMORY(kImport, Import)
#undef VMM_PLAN_MEMORY

}  // namespace vmm
