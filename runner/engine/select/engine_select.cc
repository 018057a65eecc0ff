#include "runner/engine/select/engine_select.h"

#include "runner/base/format.h"
#include "runner/engine/host/host_engine.h"
#if VMMRUN_HAVE_CUDA
#include "runner/engine/cuda/checkpoint_helper.h"
#include "runner/engine/cuda/cuda_engine.h"
#endif

namespace vmm {
namespace {

StatusOr<EngineChoice> MakeHost(const EngineRequest& request, std::string reason) {
  HostEngineOptions options;
  options.granularity = request.granularity;
  options.device_count = request.host_devices;
  options.device = request.device;
  options.trap_faults = request.trap_faults;
  options.memory_bytes = request.host_memory;
  StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine(options);
  if (!engine.ok()) return engine.status();
  return EngineChoice{std::move(engine).value(), std::move(reason)};
}

// The CUDA engine, or the reason there is none.
StatusOr<std::unique_ptr<Engine>> MakeCuda(int device, bool driver_dot) {
#if VMMRUN_HAVE_CUDA
  return CreateCudaEngine(device, driver_dot);
#else
  (void)device;
  (void)driver_dot;
  return Unavailable("this vmm-run was built without the CUDA backend (no nvcc at build time)");
#endif
}

}  // namespace

bool ParseBackendKind(const std::string& name, BackendKind* out) {
  if (name == "auto")
    *out = BackendKind::kAuto;
  else if (name == "host")
    *out = BackendKind::kHost;
  else if (name == "cuda")
    *out = BackendKind::kCuda;
  else
    return false;
  return true;
}

bool CudaBackendBuilt() { return VMMRUN_HAVE_CUDA != 0; }

namespace {

// The one granularity rule: every size and offset of the scenario is a multiple of its
// granularity, so that granularity must be a multiple of the device's minimum.
StatusOr<EngineChoice> CheckGranularity(StatusOr<EngineChoice> choice, uint64_t granularity) {
  if (!choice.ok() || granularity == 0) return choice;
  const DeviceInfo& info = choice->engine->info();
  if (info.granularity_min == 0 || granularity % info.granularity_min != 0) {
    return InvalidInput("the scenario's granularity " + FormatBytes(granularity) +
                        " is not a multiple of the " + info.backend +
                        " device's minimum granularity " + FormatBytes(info.granularity_min) +
                        "; set `granularity:` to a multiple of it");
  }
  return choice;
}

StatusOr<EngineChoice> Choose(const EngineRequest& request) {
  switch (request.kind) {
    case BackendKind::kHost:
      return MakeHost(request, "requested with --backend host");
    case BackendKind::kCuda: {
      StatusOr<std::unique_ptr<Engine>> cuda = MakeCuda(request.device, request.driver_dot);
      if (!cuda.ok()) return Unavailable("cuda backend unavailable: " + cuda.status().message());
      return EngineChoice{std::move(cuda).value(), "requested with --backend cuda"};
    }
    case BackendKind::kAuto: {
      StatusOr<std::unique_ptr<Engine>> cuda = MakeCuda(request.device, request.driver_dot);
      if (cuda.ok()) {
        return EngineChoice{std::move(cuda).value(), "auto: CUDA device " +
                                                         std::to_string(request.device) +
                                                         " supports virtual memory management"};
      }
      if (cuda.status().code() != Code::kUnavailable) return cuda.status();
      return MakeHost(request, "auto: " + cuda.status().message() + "; using the host backend");
    }
  }
  return InternalError("unknown backend kind");
}

}  // namespace

StatusOr<EngineChoice> SelectEngine(const EngineRequest& request) {
  return CheckGranularity(Choose(request), request.granularity);
}

int RunCheckpointHelperProcess(int argc, char** argv) {
#if VMMRUN_HAVE_CUDA
  return cuda::RunCheckpointHelper(argc, argv);
#else
  (void)argc;
  (void)argv;
  return 2;
#endif
}

}  // namespace vmm
