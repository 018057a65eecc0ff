// CreateCudaEngine and the CudaEngine lifecycle (devices, lanes, streams, captures). VMM calls
// are in cuda_engine_vmm.cc, kernels in cuda_engine_ops.cc, data in cuda_engine_data.cc, graphs
// in cuda_engine_graphs.cc and cuda_engine_execs.cc, queries in cuda_engine_queries.cc.
#include "runner/engine/cuda/cuda_engine.h"

#include <chrono>
#include <iterator>
#include <string>
#include <utility>

#include "kernels/check_kernels.h"
#include "runner/base/format.h"
#include "runner/base/hot_path.h"
#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/cuda_engine_impl.h"

namespace vmm {
namespace {

std::string ErrorText(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

// Why the runtime found no usable device, in the words the backend selection prints.
Status NoCuda(cudaError_t err) {
  switch (err) {
    case cudaErrorNoDevice:
      return Unavailable("no CUDA device: " + ErrorText(err));
    case cudaErrorInsufficientDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
      return Unavailable("no CUDA driver: " + ErrorText(err));
    default:
      return Unavailable("CUDA unavailable: " + ErrorText(err));
  }
}

// 13000 -> "13.0" (the encoding of cuDriverGetVersion and cudaRuntimeGetVersion).
std::string VersionString(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// A setup step failed: the device exists but vmm-run cannot use it.
Status Unusable(int ordinal, const Status& status) {
  return Unavailable("CUDA device " + std::to_string(ordinal) +
                     " is unusable: " + status.message());
}

template <typename T>
void ClearNewestFirst(std::map<uint64_t, T>& objects) noexcept {
  while (!objects.empty()) objects.erase(std::prev(objects.end()));
}

// What device `ordinal` is: name, compute capability, memory, PCI address, VMM support, the
// granularity of device memory on it and the devices whose memory it can reach
// (cudaDeviceCanAccessPeer). Needs some context current (for the granularity query).
Status DescribeCudaDevice(const cuda::DriverApi& api, int ordinal, int device_count,
                          DeviceInfo* info) {
  CUdevice device = 0;
  int vmm = 0;
  VMM_RETURN_IF_ERROR(CU_CALL(api, cuDeviceGet(&device, ordinal)));
  VMM_RETURN_IF_ERROR(CU_CALL(
      api,
      cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device)));
  cudaDeviceProp props = {};
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaGetDeviceProperties(&props, ordinal)));
  char bus_id[32] = {};
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, ordinal)));
  info->ordinal = ordinal;
  info->device_count = device_count;
  info->vmm_supported = vmm != 0;
  info->name = props.name;
  info->compute_capability = std::to_string(props.major) + "." + std::to_string(props.minor);
  info->total_memory = props.totalGlobalMem;
  info->pci_bus_id = bus_id;
  info->peers.clear();
  for (int other = 0; other < device_count; ++other) {
    int can = other == ordinal ? 1 : 0;
    if (other != ordinal)
      VMM_RETURN_IF_ERROR(CUDA_CALL(cudaDeviceCanAccessPeer(&can, ordinal, other)));
    if (can != 0) info->peers.push_back(other);
  }
  if (!info->vmm_supported) return Status::Ok();  // no granularity to ask for
  const CUmemAllocationProp prop = cuda::DeviceAllocationProp(ordinal);
  size_t minimum = 0;
  size_t recommended = 0;
  VMM_RETURN_IF_ERROR(CU_CALL(
      api, cuMemGetAllocationGranularity(&minimum, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM)));
  VMM_RETURN_IF_ERROR(CU_CALL(api, cuMemGetAllocationGranularity(
                                       &recommended, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)));
  info->granularity_min = minimum;
  info->granularity_recommended = recommended;
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<Engine>> CreateCudaEngine(int ordinal, bool driver_dot) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return NoCuda(err);
  }
  if (count <= 0) return Unavailable("no CUDA device: cudaGetDeviceCount found none");
  if (ordinal < 0 || ordinal >= count) {
    return Unavailable("no CUDA device " + std::to_string(ordinal) + ": this machine has " +
                       std::to_string(count) + " (ordinals 0.." + std::to_string(count - 1) + ")");
  }
  // cudaSetDevice initializes the device's primary context and makes it current on this thread;
  // the driver's VMM calls below run in it.
  Status s = CUDA_CALL(cudaSetDevice(ordinal));
  if (!s.ok()) return Unusable(ordinal, s);
  StatusOr<cuda::DriverApi> loaded = cuda::LoadDriverApi();
  if (!loaded.ok()) return loaded.status();
  const cuda::DriverApi& api = *loaded;

  CUcontext context = nullptr;
  int driver_version = 0;
  int runtime_version = 0;
  DeviceInfo info;
  info.backend = "cuda";
  s = CU_CALL(api, cuCtxGetCurrent(&context));
  if (s.ok()) s = CU_CALL(api, cuDriverGetVersion(&driver_version));
  if (s.ok()) s = CUDA_CALL(cudaRuntimeGetVersion(&runtime_version));
  if (s.ok()) s = DescribeCudaDevice(api, ordinal, count, &info);
  if (!s.ok()) return Unusable(ordinal, s);
  if (!info.vmm_supported) {
    return Unavailable("device " + std::to_string(ordinal) +
                       " does not support virtual memory management");
  }
  if (context == nullptr) {
    return Unusable(ordinal, InternalError("no current context after cudaSetDevice"));
  }
  info.driver_version = VersionString(driver_version);
  info.runtime_version = VersionString(runtime_version);

  auto engine = std::make_unique<cuda::CudaEngine>(api, ordinal, context, std::move(info));
  engine->set_driver_dot(driver_dot);
  s = engine->Init();
  if (!s.ok()) return Unusable(ordinal, s);
  return std::unique_ptr<Engine>(std::move(engine));
}

namespace cuda {

// A new lane's check scratch covers buffers of up to this many words (1 GiB).
constexpr uint64_t kWarmCheckWords = uint64_t{1} << 28;

CudaEngine::CudaEngine(const DriverApi& api, int ordinal, CUcontext context, DeviceInfo info)
    : api_(api), ordinal_(ordinal), context_(context), info_(std::move(info)) {}

StatusOr<std::unique_ptr<Lane>> CudaEngine::MakeLane(int ordinal) {
  if (ordinal < 0 || ordinal >= info_.device_count) {
    return RuntimeError("no CUDA device " + std::to_string(ordinal) + ": this machine has " +
                        std::to_string(info_.device_count));
  }
  auto lane = std::make_unique<Lane>();
  lane->ordinal = ordinal;
  if (ordinal != ordinal_) {
    CUdevice device = 0;
    int vmm = 0;
    VMM_RETURN_IF_ERROR(CU_CALL(api_, cuDeviceGet(&device, ordinal)));
    VMM_RETURN_IF_ERROR(
        CU_CALL(api_, cuDeviceGetAttribute(
                          &vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device)));
    if (vmm == 0) {
      return RuntimeError("device " + std::to_string(ordinal) +
                          " does not support virtual memory management");
    }
    // Initializes the device's primary context and makes it current.
    VMM_RETURN_IF_ERROR(CUDA_CALL(cudaSetDevice(ordinal)));
  }
  VMM_RETURN_IF_ERROR(CU_CALL(api_, cuCtxGetCurrent(&lane->context)));
  if (lane->context == nullptr) return InternalError("no current context after cudaSetDevice");
  StatusOr<KernelRegistry> kernels = KernelRegistry::Create(api_);
  if (!kernels.ok()) return kernels.status();
  lane->kernels = std::move(kernels).value();
  StatusOr<Stream> stream = CreateStream();
  if (!stream.ok()) return stream.status();
  lane->stream = std::move(stream).value();
  for (Event* event : {&lane->start, &lane->stop, &lane->fence}) {
    StatusOr<Event> e = CreateEvent();
    if (!e.ok()) return e.status();
    *event = std::move(e).value();
  }
  int sms = 0;  // the grid of the data checks' streaming passes
  VMM_RETURN_IF_ERROR(
      CUDA_CALL(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal)));
  lane->sm_count = sms > 0 ? static_cast<uint32_t>(sms) : 1;
  // The checks' scratch, made here rather than inside the first check a run times: the pinned
  // read-back page (cudaHostAlloc alone costs hundreds of microseconds), the hash word and chunk
  // counts for buffers up to 1 GiB (a larger check grows them).
  VMM_RETURN_IF_ERROR(lane->hash_scratch.Reserve(sizeof(uint64_t)));
  VMM_RETURN_IF_ERROR(ReserveCheckScratch(*lane, kernels::WordChunkCount(kWarmCheckWords)));
  return lane;
}

Status CudaEngine::Init() {
  StatusOr<std::unique_ptr<Lane>> lane = MakeLane(ordinal_);
  if (!lane.ok()) return lane.status();
  lanes_.push_back(std::move(lane).value());
  lane_ = lanes_.front().get();
  return Status::Ok();
}

CudaEngine::~CudaEngine() {
  // Nothing below may be destroyed under a running kernel (unmapping its memory is the
  // illegal-address fault this engine exists to avoid): end the capture, stop the busy kernels
  // that wait for a flag (a run that failed before its set_flag), then wait for every device's
  // stream in its own context.
  SetAllFlags();
  for (const std::unique_ptr<Lane>& lane : lanes_) {
    if (!BindLane(*lane).ok()) CUDA_CALL_NOTHROW(cudaSetDevice(lane->ordinal));
    if (capturing_ && lane.get() == lane_) AbortCapture();
    if (lane->stream) CUDA_CALL_NOTHROW(cudaStreamSynchronize(lane->stream.get()));
  }
  CUcontext current = nullptr;
  if (api_.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != context_) {
    CUDA_CALL_NOTHROW(cudaSetDevice(ordinal_));
  }
  // Graph allocations the scenario left alive: no graph frees them when destroyed. Each is freed
  // with its own device current.
  for (const auto& [p, device] : live_graph_allocs_) {
    CUDA_CALL_NOTHROW(cudaSetDevice(device));
    CUDA_CALL_NOTHROW(cudaFree(reinterpret_cast<void*>(static_cast<uintptr_t>(p))));
  }
  if (!live_graph_allocs_.empty()) CUDA_CALL_NOTHROW(cudaSetDevice(ordinal_));
  live_graph_allocs_.clear();
  ClearNewestFirst(execs_);
  ClearNewestFirst(graphs_);
  for (MappingShard& shard : mapping_shards_)
    while (!shard.list.empty()) shard.list.pop_back();  // newest first
  allocs_.ClearNewestFirst();
  ClearNewestFirst(reservations_);
  ClearNewestFirst(snapshots_);  // cudaFree / cudaFreeHost: no device needs to be current
  // Each lane's scratch memory, events and stream go with its own device current, newest lane
  // first; the engine's own lane last, leaving its device current.
  while (!lanes_.empty()) {
    CUDA_CALL_NOTHROW(cudaSetDevice(lanes_.back()->ordinal));
    lanes_.pop_back();
  }
}

Status CudaEngine::LeaveNoContext() {
  if (!t_context.has_no_context) return Status::Ok();
  t_context.known = nullptr;
  return CU_LATE_CALL(api_, cuCtxSetCurrent, v4000, kDriverAbiVersion, (nullptr));
}

void CudaEngine::HoldContext(bool hold) {
  t_context.holds = hold;
  t_context.known = nullptr;  // a bracket starts knowing nothing; outside one, nothing holds
}

void CudaEngine::PrepareThread(bool with_context) {
  t_context.has_no_context = !with_context;
  (void)(with_context ? Bind() : LeaveNoContext());  // a failure is the first call's to report
}

VMM_HOT Status CudaEngine::BindLane(const Lane& lane) {
  // Asked every call outside a HoldContext bracket: code sharing the thread may switch contexts.
  // Inside one, only this engine's memory calls run on the thread, so what BindLane saw or made
  // current last stays current. The query is ~10 ns alone, but with threads calling the driver
  // at once it is one more call in the gap between a thread's driver calls, where (measured on
  // the H200) every nanosecond costs several of the threads' throughput.
  if (t_context.known != nullptr && t_context.known == lane.context) return Status::Ok();
  t_context.known = nullptr;  // until the driver says (a failure below leaves it unknown)
  CUcontext current = nullptr;
  VMM_RETURN_IF_ERROR(CU_CALL(api_, cuCtxGetCurrent(&current)));
  if (current != lane.context) VMM_RETURN_IF_ERROR(CUDA_CALL(cudaSetDevice(lane.ordinal)));
  if (t_context.holds) t_context.known = lane.context;
  return Status::Ok();
}

bool CudaEngine::WaitForWork() {
  // Called from any thread beside the other calls (SharedEngine): the lanes are not added to while
  // threads run (they run on device 0), the streams are the runtime's to query and synchronize
  // from any thread, and nothing of the engine's own is written (errors are the next waiting
  // call's).
  bool was_busy = false;
  for (const std::unique_ptr<Lane>& lane : lanes_) {
    if (!BindLane(*lane).ok()) continue;
    if (cudaStreamQuery(lane->stream.get()) != cudaErrorNotReady) continue;
    was_busy = true;
    (void)cudaStreamSynchronize(lane->stream.get());
  }
  (void)LeaveNoContext();
  return was_busy;
}

Status CudaEngine::SyncStream(Lane& lane) {
  const uint64_t covers = lane.WaitCovers();
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaStreamSynchronize(lane.stream.get())));
  lane.CoveredUpTo(covers);
  return Status::Ok();
}

Status CudaEngine::Drain(Lane& lane, bool* waited) {
  if (waited != nullptr) *waited = false;
  if (!lane.Busy()) return Status::Ok();  // everything enqueued has been waited for
  const uint64_t covers = lane.WaitCovers();
  const cudaError_t query = cudaStreamQuery(lane.stream.get());
  if (query == cudaSuccess) {  // finished on its own: nothing to wait for
    lane.CoveredUpTo(covers);
    return Status::Ok();
  }
  if (query != cudaErrorNotReady) {
    return CudaStatus(query, "cudaStreamQuery(lane.stream)", __FILE__, __LINE__);
  }
  (void)cudaGetLastError();
  if (waited != nullptr) *waited = true;
  return SyncStream(lane);
}

VMM_HOT Status CudaEngine::WaitForStream(SyncNote* note) {
  SyncNote result;
  if (note != nullptr && !note->wait) {  // wait: false (isolate blocks): the call goes out now
    result.wait = false;
    *note = result;
    return Status::Ok();
  }
  // During a capture nothing is in flight (BeginCapture drained the stream), and querying or
  // synchronizing a capturing stream would invalidate the capture. Idle streams need neither a
  // query nor the clock (the common case, which the VMM calls check inline: WaitIfBusy; it is
  // still marked hot, as it was measured).
  if (!capturing_ && AnyLaneBusy()) {
    const auto start = std::chrono::steady_clock::now();
    for (const std::unique_ptr<Lane>& lane : lanes_) {
      if (!lane->Busy()) continue;
      bool waited = false;
      VMM_RETURN_IF_ERROR(BindLane(*lane));
      VMM_RETURN_IF_ERROR(Drain(*lane, &waited));
      result.waited = result.waited || waited;
    }
    VMM_RETURN_IF_ERROR(LeaveNoContext());  // the call itself goes out as the thread had it
    result.wait_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  if (note != nullptr) *note = result;
  return Status::Ok();
}

Status CudaEngine::Follow(Lane& from, Lane& to) {
  if (!from.Busy() || &from == &to) return Status::Ok();
  VMM_RETURN_IF_ERROR(BindLane(from));
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaEventRecord(from.fence.get(), from.stream.get())));
  VMM_RETURN_IF_ERROR(BindLane(to));
  Enqueuing enqueuing(to);  // its stream now holds the wait
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaStreamWaitEvent(to.stream.get(), from.fence.get(), 0)));
  return Status::Ok();
}

Status CudaEngine::SelectDevice(int device) {
  const int ordinal = device < 0 ? ordinal_ : device;
  if (ordinal == lane_->ordinal) return Status::Ok();
  if (capturing_) {
    return RuntimeError("SelectDevice(" + std::to_string(ordinal) +
                        "): a capture is in progress on device " + std::to_string(lane_->ordinal) +
                        " (a capture records one device's stream)");
  }
  auto what = [&] { return "SelectDevice(" + std::to_string(ordinal) + ")"; };
  Lane* next = nullptr;
  for (const std::unique_ptr<Lane>& lane : lanes_) {
    if (lane->ordinal == ordinal) next = lane.get();
  }
  if (next == nullptr) {
    StatusOr<std::unique_ptr<Lane>> lane = MakeLane(ordinal);
    if (!lane.ok()) return Annotate(lane.status(), what);
    lanes_.push_back(std::move(lane).value());
    next = lanes_.back().get();
  }
  VMM_RETURN_IF_ERROR(Annotate(Follow(*lane_, *next), what));
  lane_ = next;
  return Status::Ok();
}

Status CudaEngine::DescribeDevice(int ordinal, DeviceInfo* out) {
  if (ordinal < 0 || ordinal == ordinal_) {
    *out = info_;
    return Status::Ok();
  }
  auto what = [&] { return "DescribeDevice(" + std::to_string(ordinal) + ")"; };
  if (ordinal >= info_.device_count) {
    return RuntimeError(what() + ": no such device; this machine has " +
                        std::to_string(info_.device_count));
  }
  VMM_RETURN_IF_ERROR(Bind());
  *out = info_;  // backend, driver and runtime versions are the machine's
  return Annotate(DescribeCudaDevice(api_, ordinal, info_.device_count, out), what);
}

void CudaEngine::RefreshCapturing() noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream(), &status) == cudaSuccess) {
    capturing_ = status != cudaStreamCaptureStatusNone;
  } else {
    (void)cudaGetLastError();
  }
}

void CudaEngine::AbortCapture() noexcept {
  AbortBodies();
  // Join every lane still in the capture into the stream, so the capture can end (a fork left
  // unjoined would make cudaStreamEndCapture fail without ending it); the graph is dropped anyway.
  for (Stream& lane : lane_->capture_streams) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(lane.get(), &status) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    if (status != cudaStreamCaptureStatusActive) continue;
    cudaEvent_t event = nullptr;
    if (!ForkEvent(&event).ok()) continue;
    if (cudaEventRecord(event, lane.get()) != cudaSuccess ||
        cudaStreamWaitEvent(stream(), event, 0) != cudaSuccess) {
      (void)cudaGetLastError();
    }
  }
  capture_lane_ = 0;
  cudaGraph_t graph = nullptr;
  // Fails with cudaErrorStreamCaptureInvalidated when the capture was already broken; either way
  // the capture is over afterwards.
  if (cudaStreamEndCapture(stream(), &graph) != cudaSuccess) (void)cudaGetLastError();
  if (graph != nullptr) CUDA_CALL_NOTHROW(cudaGraphDestroy(graph));
  capturing_ = false;
}

}  // namespace cuda
}  // namespace vmm
