// PlanBuilder's data and check steps: snapshot, check_equal, check_address, check_kernel_params,
// and the decoding of every step's `expect`.
#include "runner/base/format.h"
#include "runner/plan/plan_builder.h"

namespace vmm {

void PlanBuilder::Snapshot(const Step& step, PlanStep* p) {
  p->buffer = ResolveBuffer(step.buffer(), step);
  if (p->buffer >= 0) Use(p->buffer, Access::kRead, "snapshot reads", At(step.buffer(), step));
  // Where it lives: `to: device` (the default) or `to: host`, pinned unless `pinned: false`.
  const bool host = step.to().set && step.to().value == "host";
  if (step.to().set && !host && step.to().value != "device") {
    Error(At(step.to(), step),
          "'to' of snapshot must be device or host, got '" + step.to().value + "'");
  }
  if (step.pinned().set && !host) {
    Error(At(step.pinned(), step),
          "'pinned' applies to a snapshot kept on the host (to: host); a device snapshot is "
          "device memory");
  }
  p->place = !host                                         ? DataPlace::kDevice
             : (!step.pinned().set || step.pinned().value) ? DataPlace::kHostPinned
                                                           : DataPlace::kHostPageable;
  auto [it, inserted] = snapshots_.try_emplace(step.snapshot().value);
  if (!inserted) {
    Error(At(step.snapshot(), step), "snapshot '" + step.snapshot().value +
                                         "' already exists (taken at line " +
                                         std::to_string(it->second.line) + "); use another name");
    p->snapshot = it->second.slot;
    return;
  }
  it->second = SnapshotInfo{static_cast<int>(plan_.snapshots.size()), p->buffer, step.loc.line};
  p->snapshot = it->second.slot;
  plan_.snapshots.push_back(step.snapshot().value);
  plan_.snapshot_bytes.push_back(p->buffer >= 0 ? plan_.buffers[p->buffer].bytes : 0);
  plan_.snapshot_places.push_back(p->place);
}

void PlanBuilder::CheckEqual(const Step& step, PlanStep* p) {
  p->buffer = ResolveBuffer(step.buffer(), step);
  if (p->buffer >= 0) Use(p->buffer, Access::kRead, "check_equal reads", At(step.buffer(), step));
  if (step.snapshot().set == step.other().set) {
    Error(step.loc, "check_equal needs exactly one of 'snapshot' or 'other'");
    return;
  }
  int against = -1;  // buffer whose element count must match
  std::string against_name;
  if (step.other().set) {
    p->other = ResolveBuffer(step.other(), step);
    if (p->other < 0) return;
    Use(p->other, Access::kRead, "check_equal reads", At(step.other(), step));
    against = p->other;
    against_name = "'" + step.other().value + "'";
  } else {
    auto it = snapshots_.find(step.snapshot().value);
    if (it == snapshots_.end()) {
      std::vector<std::string> names;
      for (const std::string& n : plan_.snapshots) names.push_back(n);
      const std::string close = SuggestName(step.snapshot().value, names);
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      Error(At(step.snapshot(), step),
            "unknown snapshot '" + step.snapshot().value + "'" +
                (!close.empty()  ? ", did you mean '" + close + "'?"
                 : names.empty() ? "; no snapshot was taken before this step"
                                 : "; snapshots so far: " + list));
      return;
    }
    p->snapshot = it->second.slot;
    against = it->second.buffer;
    against_name = "snapshot '" + step.snapshot().value + "'";
  }
  if (p->buffer >= 0 && against >= 0 &&
      plan_.buffers[p->buffer].elements != plan_.buffers[against].elements) {
    Error(step.loc, "check_equal compares different sizes: '" + step.buffer().value + "' has " +
                        std::to_string(plan_.buffers[p->buffer].elements) + " elements, " +
                        against_name + " has " + std::to_string(plan_.buffers[against].elements));
  }
}

void PlanBuilder::CheckAddress(const Step& step, PlanStep* p) {
  const int index = p->index;
  if (step.of().size() < 2)
    Error(step.loc,
          "check_address needs at least 2 steps in 'of', got " + std::to_string(step.of().size()));
  for (const Located<std::string>& ref : step.of()) {
    auto it = step_names_.find(ref.value);
    if (it == step_names_.end()) {
      std::vector<std::string> earlier;
      for (int i = 0; i < index; ++i) {
        const Step& s = steps_[i];
        if (s.name.set && (s.op == Op::kReserve || s.op == Op::kMap))
          earlier.push_back(s.name.value);
      }
      const std::string close = SuggestName(ref.value, earlier);
      Error(ref.loc, "'of' names '" + ref.value + "', which is not the name of a step" +
                         (close.empty() ? "" : "; did you mean '" + close + "'?"));
    } else if (it->second.index < 0 || it->second.index >= index) {
      Error(ref.loc, "'of' names '" + ref.value + "' (line " + std::to_string(it->second.line) +
                         "), which is not an earlier top-level step");
    } else if (it->second.op != Op::kReserve && it->second.op != Op::kMap) {
      Error(ref.loc, "'of' names '" + ref.value + "', a " + OpName(it->second.op) +
                         " step; check_address compares the addresses of reserve and map steps");
    } else {
      p->of_steps.push_back(it->second.index);
    }
  }
}

void PlanBuilder::CheckKernelParams(const Step& step, PlanStep* p) {
  if (step.graphs().size() != 2) {
    Error(step.loc, "check_kernel_params needs exactly 2 graphs, got " +
                        std::to_string(step.graphs().size()));
  }
  for (const Located<std::string>& ref : step.graphs()) {
    std::string error;
    const int slot = graphs_.Resolve(ref.value, &error);
    if (slot < 0) Error(ref.loc, error);
    p->graphs.push_back(slot);
  }
}

void PlanBuilder::DecodeExpect(
    const Step& step, PlanStep* p,
    std::initializer_list<std::pair<const char*, enum Expectation>> choices) {
  const std::string& e = step.expect().value;
  p->expect = choices.begin()->second;
  if (e.empty()) return;
  std::string allowed;
  for (const auto& [word, expectation] : choices) {
    if (e == word) {
      p->expect = expectation;
      return;
    }
    allowed += (allowed.empty() ? "" : " or ") + std::string(word);
  }
  Error(At(step.expect(), step), std::string("'expect' of ") + OpName(step.op) + " must be " +
                                     allowed + ", got '" + e + "'");
}

// One side of a copy: a buffer or view (its slot in *buffer, `need` checked at this step, or in a
// capture recorded in the node's uses and checked at replay), else a snapshot taken before this
// step (its slot in *snapshot). Returns the side's bytes, 0 when unknown.
uint64_t PlanBuilder::CopySide(const Step& step, const Located<std::string>& ref, Access need,
                               int device, BufferUses* capture_uses, int* buffer, int* snapshot) {
  if (buffer_slots_.count(ref.value) != 0) {
    *buffer = ResolveBuffer(ref, step);
    if (*buffer < 0) return 0;
    if (capture_uses != nullptr) {
      AddUse(capture_uses, *buffer, need);
      // Unlike a kernel's, a copy's memory is checked when it is captured: on the H200
      // cudaMemcpyAsync refused (cudaErrorInvalidValue) a destination without read_write access
      // and a source without read access (tools/twin_fidelity_probe.cc).
      bool graph_memory = false;
      for (const NodeModel& n : capture_->model.nodes)
        graph_memory = graph_memory || n.alloc == Owner(*buffer);
      if (std::string why = graph_memory ? "" : AccessProblemText(*buffer, need, device);
          !why.empty()) {
        Error(At(ref, step), std::string("the captured copy ") +
                                 (need == Access::kRead ? "reads '" : "writes '") + ref.value +
                                 "', which " + why +
                                 " at this step: a copy's memory is checked when it is captured "
                                 "(cudaMemcpyAsync refuses it, CUDA_ERROR_INVALID_VALUE on the "
                                 "H200); set_access before the capture");
      }
    } else {
      Use(*buffer, need, need == Access::kRead ? "copy reads" : "copy writes", At(ref, step),
          device);
    }
    return plan_.buffers[*buffer].bytes;
  }
  if (auto it = snapshots_.find(ref.value); it != snapshots_.end()) {
    *snapshot = it->second.slot;
    return plan_.snapshot_bytes[it->second.slot];
  }
  std::vector<std::string> names;
  for (const PlanBuffer& b : plan_.buffers) names.push_back(b.name);
  for (const std::string& n : plan_.snapshots) names.push_back(n);
  const std::string close = SuggestName(ref.value, names);
  Error(At(ref, step), std::string("copy ") + (need == Access::kRead ? "from" : "to") + " '" +
                           ref.value + "': not a buffer, view or snapshot taken before this step" +
                           (close.empty() ? "" : "; did you mean '" + close + "'?"));
  return 0;
}

// copy: each side is a buffer, a view or a snapshot taken earlier (device to device, a restore
// from a snapshot, an offload into one, in any direction). Both sides have the same size and do
// not overlap. In a capture the buffers are recorded in the node (checked at replay); a snapshot
// source makes a memcpy node that reads the snapshot's memory at every replay (device memory, or
// pinned host memory: the runtime refuses a memcpy node over pageable memory), and a snapshot
// cannot be written by a node (its hash is known only when a step writes it).
template <>
void PlanBuilder::PlanOp<Op::kCopy>(const Step& step, PlanStep* p, BufferUses* capture_uses) {
  const uint64_t from_bytes =
      CopySide(step, step.from(), Access::kRead, p->device, capture_uses, &p->other, &p->snapshot);
  const uint64_t to_bytes = CopySide(step, step.to(), Access::kReadWrite, p->device, capture_uses,
                                     &p->buffer, &p->to_snapshot);
  if (p->snapshot >= 0 && p->snapshot == p->to_snapshot) {
    return Error(At(step.to(), step), "copy from '" + step.from().value +
                                          "' to itself: a copy needs "
                                          "two different places");
  }
  if (p->buffer >= 0 && p->other >= 0 && Overlap(p->buffer, p->other)) {
    return Error(At(step.to(), step), "copy from '" + step.from().value + "' to '" +
                                          step.to().value +
                                          "': the two overlap; copy through another buffer");
  }
  if (capture_uses != nullptr && p->to_snapshot >= 0) {
    return Error(At(step.to(), step), "copy to snapshot '" + step.to().value +
                                          "' in a capture: a graph node cannot write a snapshot; "
                                          "copy into it outside the capture");
  }
  if (capture_uses != nullptr && p->snapshot >= 0 &&
      plan_.snapshot_places[p->snapshot] == DataPlace::kHostPageable) {
    return Error(At(step.from(), step),
                 "copy from snapshot '" + step.from().value +
                     "' in a capture: it is pageable host memory (pinned: false), which a graph "
                     "cannot copy; take it pinned (the default) or on the device");
  }
  if (p->buffer >= 0) p->memory_devices = uint64_t{MemoryDevices(p->buffer)} << 32;
  if (p->other >= 0) p->memory_devices |= MemoryDevices(p->other);
  if (from_bytes != 0 && to_bytes != 0 && from_bytes != to_bytes) {
    Error(step.loc, "copy from '" + step.from().value + "' (" + FormatBytes(from_bytes) + ") to '" +
                        step.to().value + "' (" + FormatBytes(to_bytes) + "): the sizes differ");
  }
}

template <>
void PlanBuilder::PlanOp<Op::kSnapshot>(const Step& step, PlanStep* p, BufferUses*) {
  Snapshot(step, p);
}

template <>
void PlanBuilder::PlanOp<Op::kCheckMatmul>(const Step& step, PlanStep* p, BufferUses* uses) {
  Kernel(step, p, uses);
  p->expect = Expectation::kPass;
  const Located<std::string>& verify = Key(step, "verify");
  if (verify.set && verify.value != "device" && verify.value != "host") {
    Error(At(verify, step),
          "'verify' of check_matmul must be device or host, got '" + verify.value + "'");
  }
  p->verify_host = verify.value == "host";
}

template <>
void PlanBuilder::PlanOp<Op::kCheckElementwise>(const Step& step, PlanStep* p, BufferUses*) {
  Elementwise(step, p);
  p->expect = Expectation::kPass;
}

template <>
void PlanBuilder::PlanOp<Op::kCheckEqual>(const Step& step, PlanStep* p, BufferUses*) {
  CheckEqual(step, p);
  DecodeExpect(step, p, {{"equal", Expectation::kEqual}, {"different", Expectation::kDifferent}});
}

template <>
void PlanBuilder::PlanOp<Op::kCheckValue>(const Step& step, PlanStep* p, BufferUses*) {
  Pattern(step, p);
  p->buffer = ResolveBuffer(step.buffer(), step);
  if (p->buffer >= 0) Use(p->buffer, Access::kRead, "check_value reads", At(step.buffer(), step));
  DecodeExpect(step, p, {{"equal", Expectation::kEqual}, {"different", Expectation::kDifferent}});
}

template <>
void PlanBuilder::PlanOp<Op::kCheckAddress>(const Step& step, PlanStep* p, BufferUses*) {
  CheckAddress(step, p);
  DecodeExpect(step, p, {{"same", Expectation::kSame}, {"different", Expectation::kDifferent}});
}

// check_record: the named step must come earlier (a top-level step before this one, or a step
// nested in a block written above it); the facts are judged against its record at run time.
template <>
void PlanBuilder::PlanOp<Op::kCheckRecord>(const Step& step, PlanStep* p, BufferUses*) {
  const Located<std::string>& target = Key(step, "step");
  p->node_name = target.value;
  if (!step.equals_map().set && !step.at_least_map().set && !step.at_most_map().set) {
    Error(step.loc,
          "check_record needs the facts to judge: 'equals', 'at_least' or 'at_most' "
          "(e.g. equals: {waited_for_work: true})");
  }
  for (const StepMap* map : {&step.equals_map(), &step.at_least_map(), &step.at_most_map()}) {
    if (map->set && map->entries.empty())
      Error(map->loc,
            "an empty map judges nothing: name a fact and its value, e.g. "
            "{waited_for_work: true}");
  }
  auto it = step_names_.find(target.value);
  if (it == step_names_.end()) {
    std::vector<std::string> names;
    for (const auto& [name, named] : step_names_)
      if (named.line < step.loc.line) names.emplace_back(name);
    const std::string close = SuggestName(target.value, names);
    Error(At(target, step), "'step' names '" + target.value + "', which is not the name of a step" +
                                (close.empty() ? " (check_record reads a step given a name:)"
                                               : "; did you mean '" + close + "'?"));
    return;
  }
  const bool earlier =
      it->second.index >= 0 ? it->second.index < p->index : it->second.line < step.loc.line;
  if (!earlier) {
    Error(At(target, step), "'step' names '" + target.value + "' (line " +
                                std::to_string(it->second.line) +
                                "), which has not run yet here: check_record reads the record of "
                                "an earlier step");
  }
}

template <>
void PlanBuilder::PlanOp<Op::kCheckKernelParams>(const Step& step, PlanStep* p, BufferUses*) {
  CheckKernelParams(step, p);
  DecodeExpect(step, p,
               {{"identical", Expectation::kIdentical}, {"different", Expectation::kDifferent}});
}

}  // namespace vmm
