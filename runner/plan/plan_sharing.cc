// PlanBuilder's shareable handles: create's handle_types, export (an allocation as a POSIX fd) and
// import (an fd as a new allocation of the same memory).
#include "runner/base/format.h"
#include "runner/plan/plan_builder.h"
#include "runner/vocab/handle_types.h"

namespace vmm {

uint32_t PlanBuilder::HandleTypes(const Step& step) {
  // The schema allows only the words of the table. Whether a type is granted is the driver's to
  // say (fabric: the H200 without an IMEX channel returns CUDA_ERROR_NOT_PERMITTED, as does the
  // host twin).
  uint32_t bits = 0;
  for (const Located<std::string>& type : step.handle_types()) bits |= HandleTypeBit(type.value);
  return bits;
}

void PlanBuilder::Export(const Step& step, PlanStep* p) {
  std::string error;
  p->alloc = allocs_.Resolve(step.alloc().value, &error);
  if (p->alloc < 0) {
    Error(At(step.alloc(), step), error);
  } else if (auto from = imported_from_.find(p->alloc); from != imported_from_.end()) {
    Error(At(step.alloc(), step), "alloc '" + step.alloc().value + "' was imported (from alloc '" +
                                      from->second +
                                      "'); export the allocation that was created, or the handle "
                                      "you already have");
  } else if ((plan_.alloc_specs[p->alloc].props.handle_types & kHandleTypePosixFd) == 0) {
    Error(At(step.alloc(), step),
          "alloc '" + step.alloc().value + "' was created (at line " +
              std::to_string(allocs_.MadeLine(step.alloc().value)) +
              ") without 'handle_types: [posix_fd]'; add it to the create (the driver's answer "
              "to such an export was not measured, so vmm-run does not send it)");
  }
  const std::string& name = step.handle().value;
  if (auto it = handles_.find(name); it != handles_.end()) {
    Error(At(step.handle(), step), "handle '" + name + "' was already exported (at line " +
                                       std::to_string(it->second.line) + "); use another name");
    p->handle = it->second.slot;
    return;
  }
  p->handle = static_cast<int>(plan_.handles.size());
  plan_.handles.push_back(name);
  handles_[name] = SharedHandle{p->handle, p->alloc, step.alloc().value, step.loc.line};
}

void PlanBuilder::Import(const Step& step, PlanStep* p) {
  const std::string& name = step.handle().value;
  std::unordered_map<std::string, SharedHandle>::const_iterator it = handles_.find(name);
  // Inside an isolate block, a handle the parent exported before the block: the child receives its
  // fd (SCM_RIGHTS) under the same name.
  const PlanBuilder* owner = this;
  if (it == handles_.end() && parent_ != nullptr) {
    if (auto in_parent = parent_->handles_.find(name); in_parent != parent_->handles_.end()) {
      owner = parent_;
      it = in_parent;
    }
  }
  const bool found = owner != this || it != handles_.end();
  uint64_t size = 0;
  AllocSpec spec;
  int device = p->device;
  std::string from;
  int shared_here = -1;  // the exporter's alloc slot when this process exported the handle
  if (!found) {
    std::vector<std::string> names;
    for (const auto& [n, h] : handles_) names.push_back(n);
    if (parent_ != nullptr)
      for (const auto& [n, h] : parent_->handles_) names.push_back(n);
    const std::string close = SuggestName(name, names);
    Error(At(step.handle(), step),
          "unknown handle '" + name + "'" +
              (!close.empty()  ? ", did you mean '" + close + "'?"
               : names.empty() ? "; no handle was exported before this step (export one first)"
                               : std::string("; export it first")));
  } else {
    const SharedHandle& shared = it->second;
    if (owner == this) {
      p->handle = shared.slot;
    } else {  // a slot of this (the block's) plan for the received handle
      p->handle = static_cast<int>(plan_.handles.size());
      plan_.handles.push_back(name);
    }
    std::string error;
    const int live = owner->allocs_.Resolve(shared.alloc_name, &error);
    if (live != shared.alloc) {
      Error(At(step.handle(), step),
            "handle '" + name + "' was exported from alloc '" + shared.alloc_name +
                "', which is no longer live" + (error.empty() ? "" : " (" + error + ")") +
                "; vmm-run imports a handle only while its allocation lives (the driver's answer "
                "otherwise was not measured)");
    }
    if (shared.alloc >= 0) {
      // The same memory as the exporter's: its size, its device, what it may be exported as.
      size = owner->plan_.alloc_sizes[shared.alloc];
      spec.props = owner->plan_.alloc_specs[shared.alloc].props;
      device = owner->plan_.alloc_devices[shared.alloc];
      from = shared.alloc_name;
      if (owner == this) shared_here = shared.alloc;
    }
  }
  std::string error;
  p->alloc = allocs_.Create(step.alloc().value, step.loc.line, &error);
  if (!error.empty()) return Error(At(step.alloc(), step), error);
  p->size = size;
  spec.props.size = size;
  if (!from.empty()) imported_from_[p->alloc] = from;
  plan_.alloc_sizes.push_back(size);
  // This process's own export is its own memory; a parent's (in a block) is the parent's.
  alloc_memory_.push_back(shared_here >= 0 ? alloc_memory_[shared_here] : -1);
  plan_.alloc_devices.push_back(device);
  plan_.alloc_specs.push_back(spec);
}

}  // namespace vmm
