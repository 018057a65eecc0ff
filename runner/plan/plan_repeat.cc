// PlanBuilder's `repeat` of a VMM call: create, map, set_access, unmap and release can be timed
// over many calls. Between two calls the executor runs the steps that undo the last one (a
// release after a create, an unmap after a map, a map and the access it had after an unmap, a
// create after a release), untimed and unrecorded, so every timed call starts from the state the
// first one started from and the step leaves the state one call leaves. set_access needs no undo:
// setting the same access again is the same call. The undo steps live in PlanStep::body.
#include <algorithm>

#include "runner/plan/plan_builder.h"
#include "runner/vocab/cuda_errors.h"

namespace vmm {
namespace {

// A step of op `op` that undoes part of `of` (same line and index, for messages). It never waits
// for work in flight: no kernel in flight can touch what it undoes (memory mapped, or made, by the
// step it undoes; a range the step unmapped, after that step waited or was told not to), and a
// wait would let a running kernel end between repetitions, so that they did not start alike.
PlanStep UndoStep(Op op, const PlanStep& of) {
  PlanStep u;
  u.op = op;
  u.index = of.index;
  u.line = of.line;
  u.label = std::string("undo of ") + of.label;
  u.device = of.device;
  u.wait = false;
  return u;
}

}  // namespace

bool PlanBuilder::UndoesRepetitions(const Step& step, const PlanStep& p) {
  if (p.repeat <= 1) return false;
  if (p.expect_error == kObserveError) {
    // Observed, the call may or may not have changed anything: nothing to undo for certain.
    Error(step.repeat().loc,
          "'repeat' and expect_error: observe do not go together on a VMM call: whether a call "
          "must be undone before the next depends on what it returned; observe it once, pin it "
          "(vmm-run pin), then repeat it");
    return false;
  }
  // A call expected to fail changes nothing, so it repeats as it is.
  return !step.expect_error().set;
}

void PlanBuilder::UndoCreate(const Step& step, PlanStep* p) {
  if (!UndoesRepetitions(step, *p) || p->alloc < 0) return;
  PlanStep release = UndoStep(Op::kRelease, *p);
  release.alloc = p->alloc;
  p->body.push_back(std::move(release));
}

void PlanBuilder::UndoMap(const Step& step, PlanStep* p) {
  if (!UndoesRepetitions(step, *p) || p->buffer < 0) return;
  PlanStep unmap = UndoStep(Op::kUnmap, *p);
  unmap.buffer = p->buffer;
  unmap.offset = p->offset;
  unmap.size = p->size;
  p->body.push_back(std::move(unmap));
}

void PlanBuilder::UndoUnmap(const Step& step, const ReservationState& r, const ByteRange& range,
                            PlanStep* p) {
  if (!UndoesRepetitions(step, *p)) return;
  for (const MappingRecord& m : r.mappings()) {
    if (m.range.begin < range.begin || m.range.end > range.end) continue;
    if (m.alloc_slot < 0 || allocs_.LiveSlot(plan_.allocs[m.alloc_slot]) != m.alloc_slot) {
      const std::string alloc =
          m.alloc_slot < 0 ? "its allocation" : "alloc '" + plan_.allocs[m.alloc_slot] + "'";
      return Error(step.repeat().loc,
                   "'repeat' on unmap maps the range again between its calls, but " + alloc +
                       " (mapped by step '" + m.step_label + "' at line " + std::to_string(m.line) +
                       ") has no live handle any more: it was released while mapped. Repeat "
                       "an unmap whose allocations are still live, or drop 'repeat'");
    }
    PlanStep map = UndoStep(Op::kMap, *p);
    map.buffer = p->buffer;
    map.alloc = m.alloc_slot;
    map.offset = m.range.begin;
    map.size = m.range.end - m.range.begin;
    p->body.push_back(std::move(map));
  }
  // Access is per device; a mapping starts with none, so only what was granted is set again.
  for (int device = 0; device < r.devices(); ++device) {
    for (const auto& [run, access] : r.AccessRuns(range, device)) {
      if (access == Access::kNone) continue;
      PlanStep set = UndoStep(Op::kSetAccess, *p);
      set.buffer = p->buffer;
      set.offset = run.begin;
      set.size = run.end - run.begin;
      set.access = access;
      set.device_access = PackAccess(0, device, access);
      p->body.push_back(std::move(set));
    }
  }
}

void PlanBuilder::UndoRelease(const Step& step, PlanStep* p) {
  if (!UndoesRepetitions(step, *p) || p->alloc < 0) return;
  const SourceLoc& at = step.repeat().loc;
  const int memory = alloc_memory_[p->alloc];
  if (memory != p->alloc) {
    return Error(at, "'repeat' on release needs an allocation this scenario created: alloc '" +
                         plan_.allocs[p->alloc] +
                         "' came from an import or a retain, and vmm-run can only undo a release "
                         "by creating the allocation again; repeat the create's release instead");
  }
  std::string still;
  for (const ReservationState& r : reservations_)
    for (const MappingRecord& m : r.mappings())
      if (still.empty() && m.alloc_slot >= 0 && alloc_memory_[m.alloc_slot] == memory)
        still = "it is still mapped (by step '" + m.step_label + "' at line " +
                std::to_string(m.line) + ")";
  for (size_t slot = 0; slot < alloc_memory_.size() && still.empty(); ++slot) {
    if (static_cast<int>(slot) != p->alloc && alloc_memory_[slot] == memory &&
        allocs_.LiveSlot(plan_.allocs[slot]) == static_cast<int>(slot))
      still = "alloc '" + plan_.allocs[slot] + "' is another live handle to its memory";
  }
  if (!still.empty()) {
    return Error(at, "'repeat' on the release of alloc '" + plan_.allocs[p->alloc] + "': " + still +
                         ", so the release frees nothing and its repetitions (each of a new, "
                         "unmapped allocation) would time a different call; unmap it (and "
                         "release the other handles) first, or drop 'repeat'");
  }
  PlanStep create = UndoStep(Op::kCreate, *p);
  create.alloc = p->alloc;
  create.size = plan_.alloc_sizes[p->alloc];
  create.device = std::max(plan_.alloc_devices[p->alloc], 0);
  p->body.push_back(std::move(create));
}

}  // namespace vmm
