#include "runner/vocab/fault_kinds.h"

namespace vmm {
namespace {

// Indexed by FaultKind. The errors are the ones the driver returns for a refused call of that
// kind that leaves nothing behind (an allocation that does not fit, a launch without resources).
constexpr FaultKindInfo kKinds[kFaultKindCount] = {
    {"reserve", "cuMemAddressReserve", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"free", "cuMemAddressFree", "CUDA_ERROR_INVALID_VALUE"},
    {"create", "cuMemCreate", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"release", "cuMemRelease", "CUDA_ERROR_INVALID_VALUE"},
    {"map", "cuMemMap", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"set_access", "cuMemSetAccess", "CUDA_ERROR_INVALID_VALUE"},
    {"unmap", "cuMemUnmap", "CUDA_ERROR_INVALID_VALUE"},
    {"export", "cuMemExportToShareableHandle", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"import", "cuMemImportFromShareableHandle", "CUDA_ERROR_INVALID_VALUE"},
    {"launch", "cudaLaunchKernel", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {"copy", "cudaMemcpyAsync", "CUDA_ERROR_INVALID_VALUE"},
    {"snapshot", "cudaMalloc", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"check", "cudaLaunchKernel", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {"capture", "cudaStreamBeginCapture", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
    {"graph_node", "cudaStreamWaitEvent", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
    {"graph_memory", "cudaMallocAsync", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"instantiate", "cudaGraphInstantiate", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"replay", "cudaGraphLaunch", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {"update", "cudaGraphExecUpdate", "CUDA_ERROR_INVALID_VALUE"},
    {"query", "cudaGraphGetNodes", "CUDA_ERROR_INVALID_VALUE"},
    {"device", "cudaSetDevice", "CUDA_ERROR_INVALID_DEVICE"},
    {"destroy", "cudaGraphDestroy", "CUDA_ERROR_INVALID_VALUE"},
    {"retain", "cuMemRetainAllocationHandle", "CUDA_ERROR_INVALID_VALUE"},
    {"properties", "cuMemGetAllocationGranularity", "CUDA_ERROR_INVALID_VALUE"},
    {"memory_info", "cuMemGetInfo", "CUDA_ERROR_INVALID_CONTEXT"},
    {"address_range", "cuMemGetAddressRange", "CUDA_ERROR_NOT_FOUND"},
    {"same_memory", "cudaMemcpy", "CUDA_ERROR_INVALID_VALUE"},
    {"synchronize", "cudaStreamSynchronize", "CUDA_ERROR_LAUNCH_FAILED"},
    {"checkpoint", "cuCheckpointProcessCheckpoint", "CUDA_ERROR_ILLEGAL_STATE"},
};

}  // namespace

const FaultKindInfo& Describe(FaultKind kind) { return kKinds[static_cast<size_t>(kind)]; }

std::optional<FaultKind> FaultKindNamed(std::string_view name) {
  for (size_t i = 0; i < kFaultKindCount; ++i)
    if (name == kKinds[i].name) return static_cast<FaultKind>(i);
  return std::nullopt;
}

}  // namespace vmm
