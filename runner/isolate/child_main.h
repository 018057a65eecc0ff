// The child side of an isolate block: `vmm-run __child --parent PID`, started by ChildBlockRunner
// with the channel socket as fd 3. Hidden from --help: it is not a command for people.
//
// What the child does, in order:
//   1. asks to be SIGKILLed when its parent dies (PR_SET_PDEATHSIG), and exits at once if the
//      parent is already gone; closes every descriptor but 0-3; turns core files off (a child
//      may crash on purpose);
//   2. reads the BlockRequest and the descriptors it names (kept by name: ReceivedBlock::fds);
//   3. rebuilds the parent's plan from the same scenario text and --set values, opens its own
//      engine on the parent's backend (host: with the fault trap on), and answers hello: ready,
//      the block's time limit starts now (a CUDA context takes a varying while to create);
//   4. runs the block's plan, streaming each step's record as it ends, then synchronizes (so a
//      fault of work left in flight is seen), sends done, and exits with the run's exit code
//      (0 pass, 1 a check failed, 4 a step failed) without tearing its engine down: a poisoned
//      CUDA context is the driver's to clean up, and the process is gone a moment later.
// It writes no report and nothing on stdout.
#pragma once

#include <map>
#include <string>

#include "runner/base/status.h"
#include "runner/base/unique_fd.h"
#include "runner/isolate/frame_channel.h"
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

// `vmm-run __child ...`: argv[1] is "__child". Returns the exit code (the caller exits with it).
int RunIsolateChild(int argc, char** argv);

}  // namespace vmm::isolate
