#include "runner/engine/fault_engine.h"

#include <string>

namespace vmm {

void FaultEngine::Arm(FaultKind kind, uint64_t nth, const char* error, std::string why) {
  std::lock_guard<std::mutex> lock(mu_);
  armed_.push_back(Armed{kind, by_kind_[static_cast<size_t>(kind)] + nth, error, std::move(why)});
}

Status FaultEngine::Enter(FaultKind kind) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t overall = ++total_;
  const uint64_t of_kind = ++by_kind_[static_cast<size_t>(kind)];
  for (auto it = armed_.begin(); it != armed_.end(); ++it) {
    if (it->kind != kind || it->at != of_kind) continue;
    Status fault(Code::kRuntime,
                 std::string(Describe(kind).driver_call) + ": " + it->error + " (" + it->why + ")",
                 it->error);
    armed_.erase(it);
    return fault;
  }
  if (!plan_ || injected_) return Status::Ok();
  const bool hit =
      plan_->kind ? (*plan_->kind == kind && of_kind == plan_->nth) : overall == plan_->nth;
  if (!hit) return Status::Ok();
  injected_ = true;
  const FaultKindInfo& k = Describe(kind);
  return RuntimeError(std::string(k.driver_call) + ": " + k.error + " (injected fault)");
}

}  // namespace vmm
