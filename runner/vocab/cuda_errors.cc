#include "runner/vocab/cuda_errors.h"

namespace vmm {
namespace {

// From CUDA 13.0's cuda.h, enum cudaError_enum, in its order.
constexpr CudaErrorName kCudaErrors[] = {
    {"CUDA_SUCCESS", 0},
    {"CUDA_ERROR_INVALID_VALUE", 1},
    {"CUDA_ERROR_OUT_OF_MEMORY", 2},
    {"CUDA_ERROR_NOT_INITIALIZED", 3},
    {"CUDA_ERROR_DEINITIALIZED", 4},
    {"CUDA_ERROR_PROFILER_DISABLED", 5},
    {"CUDA_ERROR_PROFILER_NOT_INITIALIZED", 6},
    {"CUDA_ERROR_PROFILER_ALREADY_STARTED", 7},
    {"CUDA_ERROR_PROFILER_ALREADY_STOPPED", 8},
    {"CUDA_ERROR_STUB_LIBRARY", 34},
    {"CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", 36},
    {"CUDA_ERROR_DEVICE_UNAVAILABLE", 46},
    {"CUDA_ERROR_NO_DEVICE", 100},
    {"CUDA_ERROR_INVALID_DEVICE", 101},
    {"CUDA_ERROR_DEVICE_NOT_LICENSED", 102},
    {"CUDA_ERROR_INVALID_IMAGE", 200},
    {"CUDA_ERROR_INVALID_CONTEXT", 201},
    {"CUDA_ERROR_CONTEXT_ALREADY_CURRENT", 202},
    {"CUDA_ERROR_MAP_FAILED", 205},
    {"CUDA_ERROR_UNMAP_FAILED", 206},
    {"CUDA_ERROR_ARRAY_IS_MAPPED", 207},
    {"CUDA_ERROR_ALREADY_MAPPED", 208},
    {"CUDA_ERROR_NO_BINARY_FOR_GPU", 209},
    {"CUDA_ERROR_ALREADY_ACQUIRED", 210},
    {"CUDA_ERROR_NOT_MAPPED", 211},
    {"CUDA_ERROR_NOT_MAPPED_AS_ARRAY", 212},
    {"CUDA_ERROR_NOT_MAPPED_AS_POINTER", 213},
    {"CUDA_ERROR_ECC_UNCORRECTABLE", 214},
    {"CUDA_ERROR_UNSUPPORTED_LIMIT", 215},
    {"CUDA_ERROR_CONTEXT_ALREADY_IN_USE", 216},
    {"CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", 217},
    {"CUDA_ERROR_INVALID_PTX", 218},
    {"CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", 219},
    {"CUDA_ERROR_NVLINK_UNCORRECTABLE", 220},
    {"CUDA_ERROR_JIT_COMPILER_NOT_FOUND", 221},
    {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 222},
    {"CUDA_ERROR_JIT_COMPILATION_DISABLED", 223},
    {"CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", 224},
    {"CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", 225},
    {"CUDA_ERROR_CONTAINED", 226},
    {"CUDA_ERROR_INVALID_SOURCE", 300},
    {"CUDA_ERROR_FILE_NOT_FOUND", 301},
    {"CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", 302},
    {"CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", 303},
    {"CUDA_ERROR_OPERATING_SYSTEM", 304},
    {"CUDA_ERROR_INVALID_HANDLE", 400},
    {"CUDA_ERROR_ILLEGAL_STATE", 401},
    {"CUDA_ERROR_LOSSY_QUERY", 402},
    {"CUDA_ERROR_NOT_FOUND", 500},
    {"CUDA_ERROR_NOT_READY", 600},
    {"CUDA_ERROR_ILLEGAL_ADDRESS", 700},
    {"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 701},
    {"CUDA_ERROR_LAUNCH_TIMEOUT", 702},
    {"CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", 703},
    {"CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", 704},
    {"CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", 705},
    {"CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", 708},
    {"CUDA_ERROR_CONTEXT_IS_DESTROYED", 709},
    {"CUDA_ERROR_ASSERT", 710},
    {"CUDA_ERROR_TOO_MANY_PEERS", 711},
    {"CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", 712},
    {"CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", 713},
    {"CUDA_ERROR_HARDWARE_STACK_ERROR", 714},
    {"CUDA_ERROR_ILLEGAL_INSTRUCTION", 715},
    {"CUDA_ERROR_MISALIGNED_ADDRESS", 716},
    {"CUDA_ERROR_INVALID_ADDRESS_SPACE", 717},
    {"CUDA_ERROR_INVALID_PC", 718},
    {"CUDA_ERROR_LAUNCH_FAILED", 719},
    {"CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", 720},
    {"CUDA_ERROR_TENSOR_MEMORY_LEAK", 721},
    {"CUDA_ERROR_NOT_PERMITTED", 800},
    {"CUDA_ERROR_NOT_SUPPORTED", 801},
    {"CUDA_ERROR_SYSTEM_NOT_READY", 802},
    {"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", 803},
    {"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", 804},
    {"CUDA_ERROR_MPS_CONNECTION_FAILED", 805},
    {"CUDA_ERROR_MPS_RPC_FAILURE", 806},
    {"CUDA_ERROR_MPS_SERVER_NOT_READY", 807},
    {"CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", 808},
    {"CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED", 809},
    {"CUDA_ERROR_MPS_CLIENT_TERMINATED", 810},
    {"CUDA_ERROR_CDP_NOT_SUPPORTED", 811},
    {"CUDA_ERROR_CDP_VERSION_MISMATCH", 812},
    {"CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", 900},
    {"CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", 901},
    {"CUDA_ERROR_STREAM_CAPTURE_MERGE", 902},
    {"CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", 903},
    {"CUDA_ERROR_STREAM_CAPTURE_UNJOINED", 904},
    {"CUDA_ERROR_STREAM_CAPTURE_ISOLATION", 905},
    {"CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", 906},
    {"CUDA_ERROR_CAPTURED_EVENT", 907},
    {"CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", 908},
    {"CUDA_ERROR_TIMEOUT", 909},
    {"CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", 910},
    {"CUDA_ERROR_EXTERNAL_DEVICE", 911},
    {"CUDA_ERROR_INVALID_CLUSTER_SIZE", 912},
    {"CUDA_ERROR_FUNCTION_NOT_LOADED", 913},
    {"CUDA_ERROR_INVALID_RESOURCE_TYPE", 914},
    {"CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION", 915},
    {"CUDA_ERROR_KEY_ROTATION", 916},
    {"CUDA_ERROR_UNKNOWN", 999},
};

// Runtime errors the engine's runtime calls (graphs, copies, streams, kernel launches) can return,
// with the driver error each one is. cudaErrorInvalidConfiguration (a launch the device cannot
// take) has no name of its own in the driver API, whose cuLaunchKernel answers it with
// CUDA_ERROR_INVALID_VALUE.
constexpr RuntimeErrorName kRuntimeErrors[] = {
    {"cudaErrorInvalidValue", "CUDA_ERROR_INVALID_VALUE"},
    {"cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY"},
    {"cudaErrorInitializationError", "CUDA_ERROR_NOT_INITIALIZED"},
    {"cudaErrorCudartUnloading", "CUDA_ERROR_DEINITIALIZED"},
    {"cudaErrorInvalidConfiguration", "CUDA_ERROR_INVALID_VALUE"},
    {"cudaErrorInvalidDevice", "CUDA_ERROR_INVALID_DEVICE"},
    {"cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE"},
    {"cudaErrorInvalidKernelImage", "CUDA_ERROR_INVALID_IMAGE"},
    {"cudaErrorNoKernelImageForDevice", "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {"cudaErrorInvalidResourceHandle", "CUDA_ERROR_INVALID_HANDLE"},
    {"cudaErrorIllegalState", "CUDA_ERROR_ILLEGAL_STATE"},
    {"cudaErrorNotReady", "CUDA_ERROR_NOT_READY"},
    {"cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {"cudaErrorLaunchOutOfResources", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {"cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT"},
    {"cudaErrorContextIsDestroyed", "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
    {"cudaErrorAssert", "CUDA_ERROR_ASSERT"},
    {"cudaErrorHardwareStackError", "CUDA_ERROR_HARDWARE_STACK_ERROR"},
    {"cudaErrorIllegalInstruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
    {"cudaErrorMisalignedAddress", "CUDA_ERROR_MISALIGNED_ADDRESS"},
    {"cudaErrorInvalidAddressSpace", "CUDA_ERROR_INVALID_ADDRESS_SPACE"},
    {"cudaErrorInvalidPc", "CUDA_ERROR_INVALID_PC"},
    {"cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED"},
    {"cudaErrorNotPermitted", "CUDA_ERROR_NOT_PERMITTED"},
    {"cudaErrorNotSupported", "CUDA_ERROR_NOT_SUPPORTED"},
    {"cudaErrorOperatingSystem", "CUDA_ERROR_OPERATING_SYSTEM"},
    {"cudaErrorStreamCaptureUnsupported", "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"},
    {"cudaErrorStreamCaptureInvalidated", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
    {"cudaErrorStreamCaptureMerge", "CUDA_ERROR_STREAM_CAPTURE_MERGE"},
    {"cudaErrorStreamCaptureUnmatched", "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED"},
    {"cudaErrorStreamCaptureUnjoined", "CUDA_ERROR_STREAM_CAPTURE_UNJOINED"},
    {"cudaErrorStreamCaptureIsolation", "CUDA_ERROR_STREAM_CAPTURE_ISOLATION"},
    {"cudaErrorStreamCaptureImplicit", "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"},
    {"cudaErrorCapturedEvent", "CUDA_ERROR_CAPTURED_EVENT"},
    {"cudaErrorStreamCaptureWrongThread", "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD"},
    {"cudaErrorTimeout", "CUDA_ERROR_TIMEOUT"},
    {"cudaErrorGraphExecUpdateFailure", "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"},
    {"cudaErrorUnknown", "CUDA_ERROR_UNKNOWN"},
};

}  // namespace

std::span<const CudaErrorName> CudaErrorNames() { return kCudaErrors; }

const CudaErrorName* FindCudaError(std::string_view name) {
  for (const CudaErrorName& e : kCudaErrors)
    if (name == e.name) return &e;
  return nullptr;
}

const CudaErrorName* FindCudaErrorByValue(int value) {
  for (const CudaErrorName& e : kCudaErrors)
    if (e.value == value) return &e;
  return nullptr;
}

std::span<const RuntimeErrorName> RuntimeErrorNames() { return kRuntimeErrors; }

const char* DriverNameOfRuntimeError(std::string_view runtime_name) {
  for (const RuntimeErrorName& e : kRuntimeErrors)
    if (runtime_name == e.runtime) return e.driver;
  return nullptr;
}

}  // namespace vmm
