// HostEngine: conditional nodes (if / while). Capture records, on the current lane, the kernel
// node that sets the condition and the conditional node, whose body CaptureBuilder then fills
// (host_graph.h); a while body ends with the next-pass kernel node. A replay runs them for real:
// the condition kernel reads the word when the replay reaches it, the conditional node runs its
// body once (if) or again and again while the condition is not zero (while), and the next-pass
// kernel subtracts one from the counter and sets the condition again.
//
// Bound: a while loop on the twin stops with CUDA_ERROR_LAUNCH_TIMEOUT after kMaxWhilePasses
// passes. The language bounds every loop by its counter (the validator refuses a body that
// writes the counter's buffer), so only a counter above the bound meets it; on a GPU such a loop
// would run its 2^32 - 1 passes.
#include "kernels/launch_config.h"
#include "runner/engine/host/host_engine_impl.h"

namespace vmm::host {
namespace {

constexpr uint64_t kMaxWhilePasses = uint64_t{1} << 24;

}  // namespace

Status HostEngine::BeginConditional(ConditionKind kind, DevicePtr word, DevicePtr passes,
                                    const std::string& name) {
  VMM_RETURN_IF_ERROR(NeedCapture("cuGraphAddNode"));
  VMM_RETURN_IF_ERROR(kernels_.Poisoned());
  ConditionArgs condition;
  condition.kind = kind;
  condition.handle = ids_.Next();  // cuGraphConditionalHandleCreate
  condition.word = word;
  condition.passes = kind == ConditionKind::kWhile ? passes : 0;
  VMM_RETURN_IF_ERROR(capture_->Add(MakeSetConditionNode(condition)));
  VMM_RETURN_IF_ERROR(capture_->NameLast(name + kConditionNodeSuffix));
  return capture_->BeginBody(MakeConditionalNode(condition), name);
}

Status HostEngine::EndConditional() {
  VMM_RETURN_IF_ERROR(NeedCapture("cuStreamEndCapture"));
  std::string name;
  const ConditionArgs* condition = capture_->OpenCondition(&name);
  if (condition == nullptr) {
    return CudaError("cuStreamEndCapture", "CUDA_ERROR_ILLEGAL_STATE",
                     "no conditional body is being captured");
  }
  if (condition->kind == ConditionKind::kWhile) {
    VMM_RETURN_IF_ERROR(capture_->Add(MakeNextPassNode(*condition)));
    VMM_RETURN_IF_ERROR(capture_->NameLast(name + kNextPassNodeSuffix));
  }
  return capture_->EndBody();
}

Status HostEngine::RunConditionKernel(const GraphNode& node, int device) {
  const ConditionArgs& c = node.condition;
  const std::string& fn = node.params.function;
  if (fn == kernels::kSetConditionKernelName) {
    auto kernel = [&] { conditions_[c.handle] = *Ptr<const uint32_t>(c.word) != 0 ? 1 : 0; };
    return kernels_.Guarded(fn, device, {{"word", c.word, 4, Access::kRead}}, kernel);
  }
  auto kernel = [&] {
    uint32_t& counter = *Ptr<uint32_t>(c.word);
    if (counter != 0) --counter;
    if (c.passes != 0) ++*Ptr<uint32_t>(c.passes);
    conditions_[c.handle] = counter != 0 ? 1 : 0;
  };
  if (c.passes == 0)
    return kernels_.Guarded(fn, device, {{"counter", c.word, 4, Access::kReadWrite}}, kernel);
  return kernels_.Guarded(
      fn, device,
      {{"counter", c.word, 4, Access::kReadWrite}, {"passes", c.passes, 4, Access::kReadWrite}},
      kernel);
}

Status HostEngine::RunConditional(const GraphNode& node, const Exec* exec) {
  const uint64_t handle = node.condition.handle;
  auto condition = [&] {
    auto it = conditions_.find(handle);
    return it != conditions_.end() && it->second != 0;
  };
  if (node.condition.kind == ConditionKind::kIf) {
    if (!condition()) return Status::Ok();
    Status s = RunGraph(*node.child, exec);
    return s.ok() ? s : s.WithContext("the body of '" + node.name + "'");
  }
  for (uint64_t pass = 0; condition(); ++pass) {
    if (pass == kMaxWhilePasses) {
      return CudaError("cuGraphLaunch", "CUDA_ERROR_LAUNCH_TIMEOUT",
                       "while loop '" + node.name + "' ran " + std::to_string(pass) +
                           " passes, the host twin's bound (its counter is larger)");
    }
    Status s = RunGraph(*node.child, exec);
    if (!s.ok())
      return s.WithContext("pass " + std::to_string(pass + 1) + " of '" + node.name + "'");
  }
  return Status::Ok();
}

}  // namespace vmm::host
