// The child of an isolate block: `vmm-run __child --parent PID`, started by ChildBlockRunner
// (runner/isolate) with the channel socket as fd 3. Hidden from --help: it is not a command for
// people.
//
// What the child does, in order:
//   1. asks to be SIGKILLed when its parent dies (PR_SET_PDEATHSIG), and exits at once if the
//      parent is already gone; closes every descriptor but 0-3; turns core files off (a child
//      may crash on purpose);
//   2. reads the BlockRequest and the descriptors it names (isolate/child_request.h);
//   3. prepares the run as the parent did, through the pipeline (PrepareRun: the same scenario
//      text, --set values, include roots, limits, backend, device and emulated devices; host: with
//      the fault trap on), and answers hello: ready, the block's time limit starts now (a CUDA
//      context takes a varying while to create);
//   4. runs the block's plan, streaming each step's record as it ends, then synchronizes (so a
//      fault of work left in flight is seen), sends done, and exits with the run's exit code
//      (0 pass, 1 a check failed, 4 a step failed) without tearing its engine down: a poisoned
//      CUDA context is the driver's to clean up, and the process is gone a moment later.
// It writes no report and nothing on stdout.
#pragma once

namespace vmm {

// `vmm-run __child ...`: argv[1] is "__child". Returns the exit code (the caller exits with it).
int RunIsolateChild(int argc, char** argv);

}  // namespace vmm
