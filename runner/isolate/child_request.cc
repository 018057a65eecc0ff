#include "runner/isolate/child_request.h"

namespace vmm::isolate {

const IsolatedBlock* BlockOf(const Plan& plan, const report::BlockRequest& r) {
  if (r.block < 0 || static_cast<size_t>(r.block) >= plan.steps.size()) return nullptr;
  const PlanStep& step = plan.steps[r.block];
  if (r.member < 0) return step.block.get();
  if (step.op != Op::kTogether || static_cast<size_t>(r.member) >= step.body.size()) return nullptr;
  return step.body[r.member].block.get();
}

StatusOr<ReceivedBlock> ReceiveBlock(FrameChannel& channel) {
  std::string frame;
  bool eof = false;
  VMM_RETURN_IF_ERROR(channel.Receive(&frame, &eof));
  if (eof) return RuntimeError("the parent closed the channel before sending a request");
  StatusOr<report::BlockRequest> request = report::DecodeBlockRequest(frame);
  if (!request.ok()) return request.status();
  StatusOr<std::vector<UniqueFd>> fds = channel.TakeFds(request->fds.size());
  if (!fds.ok()) return fds.status();
  ReceivedBlock received;
  for (size_t i = 0; i < request->fds.size(); ++i)
    received.fds[request->fds[i]] = std::move(fds.value()[i]);
  received.request = std::move(request).value();
  return received;
}

Status AwaitGroupStart(FrameChannel& channel, const report::BlockRequest& r) {
  if (r.member < 0) return Status::Ok();
  std::string frame;
  bool eof = false;
  VMM_RETURN_IF_ERROR(channel.Receive(&frame, &eof));
  if (eof) return RuntimeError("the parent closed the channel before the group started");
  if (frame != kGroupStartFrame)
    return RuntimeError("the parent sent something other than the group's start");
  return Status::Ok();
}

}  // namespace vmm::isolate
