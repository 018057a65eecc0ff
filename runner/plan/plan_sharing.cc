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
  for (const Located<std::string>& type : step.handle_types) bits |= HandleTypeBit(type.value);
  return bits;
}

void PlanBuilder::Export(const Step& step, PlanStep* p) {
  std::string error;
  p->alloc = allocs_.Resolve(step.alloc.value, &error);
  if (p->alloc < 0) {
    Error(At(step.alloc, step), error);
  } else if (const AllocShare& share = alloc_shares_[p->alloc]; !share.imported_from.empty()) {
    Error(At(step.alloc, step), "alloc '" + step.alloc.value + "' was imported (from alloc '" +
                                    share.imported_from +
                                    "'); export the allocation that was created, or the handle "
                                    "you already have");
  } else if ((share.handle_types & HandleTypeBit("posix_fd")) == 0) {
    Error(At(step.alloc, step),
          "alloc '" + step.alloc.value + "' was created (at line " +
              std::to_string(allocs_.MadeLine(step.alloc.value)) +
              ") without 'handle_types: [posix_fd]'; add it to the create (the driver's answer "
              "to such an export was not measured, so vmm-run does not send it)");
  }
  const std::string& name = step.handle.value;
  if (auto it = handles_.find(name); it != handles_.end()) {
    Error(At(step.handle, step), "handle '" + name + "' was already exported (at line " +
                                     std::to_string(it->second.line) + "); use another name");
    p->handle = it->second.slot;
    return;
  }
  p->handle = static_cast<int>(plan_.handles.size());
  plan_.handles.push_back(name);
  handles_[name] = SharedHandle{p->handle, p->alloc, step.alloc.value, step.loc.line};
}

void PlanBuilder::Import(const Step& step, PlanStep* p) {
  const std::string& name = step.handle.value;
  auto it = handles_.find(name);
  uint64_t size = 0;
  if (it == handles_.end()) {
    std::vector<std::string> names;
    for (const auto& [n, h] : handles_) names.push_back(n);
    const std::string close = SuggestName(name, names);
    Error(At(step.handle, step),
          "unknown handle '" + name + "'" +
              (!close.empty()  ? ", did you mean '" + close + "'?"
               : names.empty() ? "; no handle was exported before this step (export one first)"
                               : std::string("; export it first")));
  } else {
    const SharedHandle& shared = it->second;
    p->handle = shared.slot;
    std::string error;
    const int live = allocs_.Resolve(shared.alloc_name, &error);
    if (live != shared.alloc) {
      Error(At(step.handle, step),
            "handle '" + name + "' was exported from alloc '" + shared.alloc_name +
                "', which is no longer live" + (error.empty() ? "" : " (" + error + ")") +
                "; vmm-run imports a handle only while its allocation lives (the driver's answer "
                "otherwise was not measured)");
    }
    if (shared.alloc >= 0) size = plan_.alloc_sizes[shared.alloc];
  }
  std::string error;
  p->alloc = allocs_.Create(step.alloc.value, step.loc.line, &error);
  if (!error.empty()) return Error(At(step.alloc, step), error);
  p->size = size;
  plan_.alloc_sizes.push_back(size);
  alloc_shares_.push_back({0, it != handles_.end() ? it->second.alloc_name : std::string()});
}

}  // namespace vmm
