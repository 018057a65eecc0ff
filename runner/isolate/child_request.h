// The child side of an isolate block's protocol: the request a child receives (ReceiveBlock) and
// the block it names in the plan the child rebuilt (BlockOf). The child's entry point, which
// rebuilds that plan through the pipeline, is runner/pipeline/isolate_child.h.
#pragma once

#include <map>
#include <string>

#include "runner/base/status.h"
#include "runner/base/unique_fd.h"
#include "runner/isolate/frame_channel.h"
#include "runner/plan/plan.h"
#include "runner/report/child_messages.h"

namespace vmm::isolate {

// The request and the descriptors that came with it, by the names the request gives them.
struct ReceivedBlock {
  report::BlockRequest request;
  std::map<std::string, UniqueFd> fds;
};

// Reads one request frame and takes its descriptors; fails on a closed channel, a malformed
// request, or descriptors that did not arrive.
StatusOr<ReceivedBlock> ReceiveBlock(FrameChannel& channel);

// The frame a together group's parent sends every child once all have said hello: the children's
// steps start together (a child of a group waits for it, AwaitGroupStart).
inline constexpr const char* kGroupStartFrame = "go";

// A child of a together group (`r.member >= 0`) waits here for the parent's start frame; Ok at
// once for a lone block. Fails when the channel closes or another frame comes.
Status AwaitGroupStart(FrameChannel& channel, const report::BlockRequest& r);

// The isolate block the request names in `plan` (top-level step `block`, or block `member` of the
// together group there), or nullptr.
const IsolatedBlock* BlockOf(const Plan& plan, const report::BlockRequest& r);

}  // namespace vmm::isolate
