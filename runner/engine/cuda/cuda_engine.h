// The CUDA backend: Engine on the CUDA driver's VMM API and CUDA graphs, for one device.
//
// The binary never links libcuda (driver_api.h): on a machine without a driver or device,
// CreateCudaEngine returns Code::kUnavailable with the reason, e.g.
//   "no CUDA device: cudaErrorNoDevice: no CUDA-capable device is detected"
//   "no CUDA driver: cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA
//    runtime version"
//   "device 0 does not support virtual memory management"
// and never crashes.
//
// Behaviour beyond engine.h:
//   - VMM calls go one to one to the driver (cuMemAddressReserve, cuMemCreate with pinned device
//     memory on the engine's device or the one AllocProps names, cuMemMap, cuMemSetAccess with one
//     descriptor per listed device in one call, cuMemGetAccess, cuMemUnmap,
//     cuMemRelease, cuMemAddressFree); a driver error comes back as a Code::kRuntime Status
//     naming the engine call, the driver call, the CUDA error and the source line. Ranges the
//     engine did not create are passed to the driver too (its verdict is the ground truth); the
//     engine's bookkeeping follows what the driver accepted.
//   - Devices: the engine's own device plus, on first SelectDevice of another ordinal, a lane for
//   it
//     (primary context, stream, events, scratch; cuda_engine_impl.h). Work runs on the selected
//     lane; an exec replays on the lane it was instantiated on; Unmap, Release and Synchronize
//     wait for every lane. SelectDevice during a capture is refused (a capture is one stream).
//   - Kernels run on one non-blocking stream per device. Fill and Matmul with a non-null OpTiming
//   wait for
//     the kernel (event timing); with timing == nullptr they return while the kernel runs, which
//     is how a scenario leaves work in flight for Unmap/Release to find (SyncNote::waited).
//   - Unmap and Release wait first: when the engine enqueued work it has not waited for yet, they
//     ask cudaStreamQuery; cudaErrorNotReady means in flight (SyncNote::waited = true) and they
//     synchronize the stream. wait_us is the wall time of that check and wait.
//   - BeginCapture first drains the stream, then captures in cudaStreamCaptureModeThreadLocal:
//     this thread may not make unsafe calls (the capture fails, as with Global mode), other
//     threads are unaffected. Because nothing is in flight during a capture, Unmap and Release
//     there do not query the stream (that would invalidate the capture) and report waited=false.
//   - Calls that synchronize the stream (Replay, CopyToHost, Checksum, the data checks,
//     Synchronize) during a capture fail as the runtime decides (cudaErrorStreamCaptureUnsupported)
//     and invalidate the capture; EndCapture then fails and ends it. Copy during a capture makes a
//     memcpy node over the snapshot's own memory (device, or pinned host) and allocates nothing;
//     a pageable host side is refused before the runtime sees it.
//   - Capture lanes 1, 2, ... are streams of the engine that join a capture through ForkLane
//     (an event, no node); EndCapture of a capture a lane never rejoined joins it first and fails.
//     NameCapturedNode reads the lane's dependency set (cudaStreamGetCaptureInfo): the node the
//     last call made; names follow a graph into child graph copies (cudaGraphNodeFindInClone).
//   - Graph allocations a launch leaves alive are tracked per exec and freed by the destructor if
//     the scenario did not free them.
//   - Handles (AllocHandle, GraphHandle, ExecHandle) are engine ids, never reused (allocation
//     handles carry a generation, so a released one stays unknown after its slot is reused); a
//     stale one is an error Status.
//   - Destruction ends a capture in progress, waits for the stream, then destroys execs, graphs,
//     mappings, physical allocations and reservations, each newest first, then the scratch
//     memory, events and stream. Failures there are logged to stderr, never thrown.
//   - All methods make the selected device's context current first (one cuCtxGetCurrent when it
//     already is), so the engine may be driven from any one thread at a time.
#pragma once

#include <memory>

#include "runner/base/status.h"
#include "runner/engine/engine.h"

namespace vmm {

// The engine for CUDA device `ordinal`. Code::kUnavailable when there is no usable driver or
// device, the device lacks VMM support, or vmm-run's kernels cannot run on it. A graph's DOT text
// (DescribeGraph) is written from its recorded structure as the host twin's is (StructureDot), or
// with `driver_dot` taken from cudaGraphDebugDotPrint (verbose; ~0.35 ms a graph on an H200).
StatusOr<std::unique_ptr<Engine>> CreateCudaEngine(int ordinal, bool driver_dot = false);

}  // namespace vmm
