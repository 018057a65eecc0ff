// CreateCudaEngine, the CudaEngine lifecycle and its VMM methods. Kernels, graphs and data are in
// cuda_engine_ops.cc.
#include "runner/engine/cuda/cuda_engine.h"

#include <chrono>
#include <iterator>
#include <string>
#include <utility>

#include "runner/base/format.h"
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

}  // namespace

StatusOr<std::unique_ptr<Engine>> CreateCudaEngine(int ordinal) {
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

  CUdevice device = 0;
  int vmm = 0;
  CUcontext context = nullptr;
  int driver_version = 0;
  s = CU_CALL(api, cuDeviceGet(&device, ordinal));
  if (s.ok()) {
    s = CU_CALL(api, cuDeviceGetAttribute(
                         &vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device));
  }
  if (s.ok()) s = CU_CALL(api, cuCtxGetCurrent(&context));
  if (s.ok()) s = CU_CALL(api, cuDriverGetVersion(&driver_version));
  if (!s.ok()) return Unusable(ordinal, s);
  if (vmm == 0) {
    return Unavailable("device " + std::to_string(ordinal) +
                       " does not support virtual memory management");
  }
  if (context == nullptr) {
    return Unusable(ordinal, InternalError("no current context after cudaSetDevice"));
  }

  DeviceInfo info;
  info.backend = "cuda";
  info.ordinal = ordinal;
  info.vmm_supported = true;
  info.driver_version = VersionString(driver_version);
  cudaDeviceProp props = {};
  int runtime_version = 0;
  s = CUDA_CALL(cudaGetDeviceProperties(&props, ordinal));
  if (s.ok()) s = CUDA_CALL(cudaRuntimeGetVersion(&runtime_version));
  if (!s.ok()) return Unusable(ordinal, s);
  info.name = props.name;
  info.compute_capability = std::to_string(props.major) + "." + std::to_string(props.minor);
  info.total_memory = props.totalGlobalMem;
  if (!CUDA_CALL(cudaGetDeviceCount(&info.device_count)).ok()) info.device_count = 1;
  info.runtime_version = VersionString(runtime_version);
  const CUmemAllocationProp prop = cuda::DeviceAllocationProp(ordinal);
  size_t minimum = 0;
  size_t recommended = 0;
  s = CU_CALL(api,
              cuMemGetAllocationGranularity(&minimum, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  if (s.ok()) {
    s = CU_CALL(api, cuMemGetAllocationGranularity(&recommended, &prop,
                                                   CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  }
  if (!s.ok()) return Unusable(ordinal, s);
  info.granularity_min = minimum;
  info.granularity_recommended = recommended;

  auto engine = std::make_unique<cuda::CudaEngine>(api, ordinal, context, std::move(info));
  s = engine->Init();
  if (!s.ok()) return Unusable(ordinal, s);
  return std::unique_ptr<Engine>(std::move(engine));
}

namespace cuda {

CudaEngine::CudaEngine(const DriverApi& api, int ordinal, CUcontext context, DeviceInfo info)
    : api_(api), ordinal_(ordinal), context_(context), info_(std::move(info)) {}

Status CudaEngine::Init() {
  StatusOr<KernelRegistry> kernels = KernelRegistry::Create(api_);
  if (!kernels.ok()) return kernels.status();
  kernels_ = std::move(kernels).value();
  StatusOr<Stream> stream = CreateStream();
  if (!stream.ok()) return stream.status();
  stream_ = std::move(stream).value();
  for (Event* event : {&start_, &stop_}) {
    StatusOr<Event> e = CreateEvent();
    if (!e.ok()) return e.status();
    *event = std::move(e).value();
  }
  return Status::Ok();
}

CudaEngine::~CudaEngine() {
  CUcontext current = nullptr;
  if (api_.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != context_) {
    CUDA_CALL_NOTHROW(cudaSetDevice(ordinal_));
  }
  if (capturing_) AbortCapture();
  // Nothing below may be destroyed under a running kernel (unmapping its memory is the
  // illegal-address fault this engine exists to avoid).
  if (stream_) CUDA_CALL_NOTHROW(cudaStreamSynchronize(stream()));
  ClearNewestFirst(execs_);
  ClearNewestFirst(graphs_);
  while (!mappings_.empty()) mappings_.pop_back();  // newest first
  allocs_.ClearNewestFirst();
  ClearNewestFirst(reservations_);
  // Scratch memory, events and the stream follow as members, in reverse declaration order.
}

Status CudaEngine::Bind() {
  // Asked every call (cuCtxGetCurrent is ~10 ns): code sharing the thread may switch contexts.
  CUcontext current = nullptr;
  VMM_RETURN_IF_ERROR(CU_CALL(api_, cuCtxGetCurrent(&current)));
  if (current == context_) return Status::Ok();
  return CUDA_CALL(cudaSetDevice(ordinal_));
}

Status CudaEngine::SyncStream() {
  VMM_RETURN_IF_ERROR(CUDA_CALL(cudaStreamSynchronize(stream())));
  stream_busy_ = false;
  return Status::Ok();
}

Status CudaEngine::Drain(bool* waited) {
  if (waited != nullptr) *waited = false;
  if (!stream_busy_) return Status::Ok();  // everything enqueued has been waited for
  const cudaError_t query = cudaStreamQuery(stream());
  if (query == cudaSuccess) {  // finished on its own: nothing to wait for
    stream_busy_ = false;
    return Status::Ok();
  }
  if (query != cudaErrorNotReady) {
    return CudaStatus(query, "cudaStreamQuery(stream())", __FILE__, __LINE__);
  }
  (void)cudaGetLastError();
  if (waited != nullptr) *waited = true;
  return SyncStream();
}

Status CudaEngine::WaitForStream(SyncNote* note) {
  SyncNote result;
  if (note != nullptr && !note->wait) {  // wait: false (isolate blocks): the call goes out now
    result.wait = false;
    *note = result;
    return Status::Ok();
  }
  // During a capture nothing is in flight (BeginCapture drained the stream), and querying or
  // synchronizing a capturing stream would invalidate the capture. An idle stream needs neither a
  // query nor the clock (the common case, kept off the VMM hot path).
  if (!capturing_ && stream_busy_) {
    const auto start = std::chrono::steady_clock::now();
    VMM_RETURN_IF_ERROR(Drain(&result.waited));
    result.wait_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  if (note != nullptr) *note = result;
  return Status::Ok();
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
  cudaGraph_t graph = nullptr;
  // Fails with cudaErrorStreamCaptureInvalidated when the capture was already broken; either way
  // the capture is over afterwards.
  if (cudaStreamEndCapture(stream(), &graph) != cudaSuccess) (void)cudaGetLastError();
  if (graph != nullptr) CUDA_CALL_NOTHROW(cudaGraphDestroy(graph));
  capturing_ = false;
}

// --- VMM ---

Status CudaEngine::Reserve(uint64_t size, uint64_t alignment, DevicePtr* va) {
  auto what = [&] {
    return "Reserve(size=" + FormatBytes(size) + ", alignment=" + FormatBytes(alignment) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  if (alignment == 0) alignment = info_.granularity_min;
  StatusOr<Reservation> r = CreateReservation(api_, size, alignment);
  if (!r.ok()) return Annotate(r.status(), what);
  *va = r->get().va;
  reservations_.emplace(NextId(), std::move(r).value());
  return Status::Ok();
}

Status CudaEngine::Free(DevicePtr va, uint64_t size) {
  auto what = [&] { return "Free(va=" + Hex(va) + ", size=" + FormatBytes(size) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  auto it = reservations_.begin();
  while (it != reservations_.end() && it->second->va != va) ++it;
  if (it != reservations_.end() && it->second->size == size) {
    VMM_RETURN_IF_ERROR(Annotate(FreeReservation(&it->second), what));
    reservations_.erase(it);
    return Status::Ok();
  }
  // Not a range this engine reserved as given: the driver decides (and names the error).
  VMM_RETURN_IF_ERROR(Annotate(CU_CALL(api_, cuMemAddressFree(va, size)), what));
  if (it != reservations_.end()) {
    it->second.release();  // freed by the call above
    reservations_.erase(it);
  }
  return Status::Ok();
}

Status CudaEngine::Create(const AllocProps& props, AllocHandle* out) {
  auto what = [&] { return "Create(size=" + FormatBytes(props.size) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  StatusOr<PhysicalAlloc> a =
      CreatePhysicalAlloc(api_, AllocationProp(props, ordinal_), props.size);
  if (!a.ok()) return Annotate(a.status(), what);
  out->value = allocs_.Insert(std::move(a).value());
  return Status::Ok();
}

Status CudaEngine::Release(AllocHandle handle, SyncNote* note) {
  auto what = [&] { return "Release(handle=" + std::to_string(handle.value) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  PhysicalAlloc* alloc = allocs_.Find(handle.value);
  if (alloc == nullptr) {
    return RuntimeError(what() +
                        ": unknown allocation handle (never created by this engine, or "
                        "already released)");
  }
  VMM_RETURN_IF_ERROR(
      Annotate(WaitForStream(note), [&] { return what() + ": waiting for in-flight work"; }));
  VMM_RETURN_IF_ERROR(Annotate(ReleasePhysicalAlloc(alloc), what));
  allocs_.Erase(handle.value);
  return Status::Ok();
}

Status CudaEngine::Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle) {
  auto what = [&] {
    return "Map(va=" + Hex(va) + ", size=" + FormatBytes(size) + ", offset=" + FormatBytes(offset) +
           ", handle=" + std::to_string(handle.value) + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  const PhysicalAlloc* alloc = allocs_.Find(handle.value);
  if (alloc == nullptr) {
    return RuntimeError(what() +
                        ": unknown allocation handle (never created by this engine, or "
                        "already released)");
  }
  StatusOr<Mapping> m = CreateMapping(api_, va, size, offset, alloc->get().handle);
  if (!m.ok()) return Annotate(m.status(), what);
  mappings_.push_back(std::move(m).value());
  return Status::Ok();
}

Status CudaEngine::SetAccess(DevicePtr va, uint64_t size, Access access) {
  const char* name = access == Access::kNone   ? "none"
                     : access == Access::kRead ? "read"
                                               : "read_write";
  auto what = [&] {
    return "SetAccess(va=" + Hex(va) + ", size=" + FormatBytes(size) + ", access=" + name + ")";
  };
  VMM_RETURN_IF_ERROR(Bind());
  CUmemAccessDesc desc = {};
  desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  desc.location.id = ordinal_;
  desc.flags = access == Access::kNone   ? CU_MEM_ACCESS_FLAGS_PROT_NONE
               : access == Access::kRead ? CU_MEM_ACCESS_FLAGS_PROT_READ
                                         : CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return Annotate(CU_CALL(api_, cuMemSetAccess(va, size, &desc, 1)), what);
}

Status CudaEngine::Unmap(DevicePtr va, uint64_t size, SyncNote* note) {
  auto what = [&] { return "Unmap(va=" + Hex(va) + ", size=" + FormatBytes(size) + ")"; };
  VMM_RETURN_IF_ERROR(Bind());
  // cuMemUnmap does not wait for kernels still using the range: wait here, or they fault (unless
  // the scenario asked for exactly that: wait: false inside an isolate block).
  VMM_RETURN_IF_ERROR(
      Annotate(WaitForStream(note), [&] { return what() + ": waiting for in-flight work"; }));
  VMM_RETURN_IF_ERROR(Annotate(CU_CALL(api_, cuMemUnmap(va, size)), what));
  // The driver unmapped the whole range: forget every mapping it touched.
  std::erase_if(mappings_, [&](Mapping& m) {
    if (!m->Overlaps(va, size)) return false;
    m.release();  // unmapped by the call above
    return true;
  });
  return Status::Ok();
}

}  // namespace cuda
}  // namespace vmm
