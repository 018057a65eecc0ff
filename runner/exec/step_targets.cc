#include "runner/exec/step_targets.h"

#include <algorithm>
#include <string>

#include "runner/vocab/access.h"
#include "runner/vocab/op.h"

namespace vmm {
namespace {

using TargetList = std::vector<report::Detail>;

void AddSlot(report::DetailKey role, int slot, const std::vector<std::string>& names,
             TargetList* out) {
  if (slot >= 0 && static_cast<size_t>(slot) < names.size()) out->emplace_back(role, names[slot]);
}

void AddBuffer(report::DetailKey role, int slot, const Plan& plan, TargetList* out) {
  if (slot >= 0 && static_cast<size_t>(slot) < plan.buffers.size())
    out->emplace_back(role, plan.buffers[slot].name);
}

// The steps whose records nest under `step`'s record, in record order: a capture's body; a
// parallel step's branches one after the other (the executor records each branch's steps in turn
// into the parallel step's body). A set_node's body (the node's new parameters) has no records.
std::vector<const PlanStep*> RecordedChildren(const PlanStep& step) {
  std::vector<const PlanStep*> out;
  // A set_node's body is the node's new parameters, a repeated VMM call's its undo steps.
  if (step.op == Op::kSetNode || IsMemoryOp(step.op)) return out;
  for (const PlanStep& s : step.body) out.push_back(&s);
  for (const std::vector<PlanStep>& branch : step.branches)
    for (const PlanStep& s : branch) out.push_back(&s);
  return out;
}

// Records and steps are matched by index; a run that stopped early has fewer records than steps
// (a failed capture records the steps up to the failure), so only the common prefix is visited.
void AddTargets(const Plan& plan, const std::vector<const PlanStep*>& steps,
                std::vector<report::StepRecord>* records) {
  const size_t n = std::min(steps.size(), records->size());
  TargetList t;  // built here, then moved into a list of exactly its size
  for (size_t i = 0; i < n; ++i) {
    const PlanStep& step = *steps[i];
    report::StepRecord& record = (*records)[i];
    t.clear();
    AddBuffer("buffer", step.buffer, plan, &t);
    AddSlot("alloc", step.alloc, plan.allocs, &t);
    AddSlot("graph", step.graph, plan.graphs, &t);
    AddSlot("exec", step.exec, plan.execs, &t);
    AddSlot("snapshot", step.snapshot, plan.snapshots, &t);
    AddSlot("handle", step.handle, plan.handles, &t);  // export / import
    AddBuffer("other", step.other, plan, &t);
    AddBuffer("a", step.a, plan, &t);
    AddBuffer("b", step.b, plan, &t);
    AddBuffer("c", step.c, plan, &t);
    if (step.op == Op::kSignal || step.op == Op::kWaitFor)
      AddSlot("point", step.event, plan.sync_points, &t);
    if (IsMemoryOp(step.op) && step.buffer >= 0) {  // the range within the reservation
      t.emplace_back("offset_bytes", static_cast<int64_t>(step.offset));
      t.emplace_back("size_bytes", static_cast<int64_t>(step.size));
      if (step.op == Op::kSetAccess) t.emplace_back("access", std::string(AccessName(step.access)));
    }
    record.targets.clear();
    record.targets.reserve(t.size());
    for (report::Detail& d : t) record.targets.push_back(std::move(d));
    if (!record.body.empty()) AddTargets(plan, RecordedChildren(step), &record.body);
  }
}

}  // namespace

std::vector<report::BufferRecord> BufferTable(const Plan& plan) {
  std::vector<report::BufferRecord> out;
  out.reserve(plan.buffers.size());
  for (const PlanBuffer& b : plan.buffers) {
    report::BufferRecord r;
    r.name = b.name;
    r.bytes = b.bytes;
    if (b.base >= 0) {
      r.view_of = plan.buffers[b.base].name;
      r.offset = b.offset;
    } else {
      r.reservation_bytes = b.reservation_size;
    }
    out.push_back(std::move(r));
  }
  return out;
}

void AddTargets(const Plan& plan, std::vector<report::StepRecord>* records) {
  std::vector<const PlanStep*> steps;
  steps.reserve(plan.steps.size());
  for (const PlanStep& s : plan.steps) steps.push_back(&s);
  AddTargets(plan, steps, records);
}

}  // namespace vmm
