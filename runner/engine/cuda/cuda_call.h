// One error macro per API family (after nvbench's cuda_call.cuh): a failed call becomes a
// Code::kRuntime Status that names the call as written, the error's name and description, and
// where it was made:
//   "cuMemMap(va, size, offset, h, 0) failed: CUDA_ERROR_INVALID_VALUE (invalid argument) at
//    runner/engine/cuda/cuda_engine.cc:123"
//
//   CU_CALL(api, cuMemMap(va, size, offset, h, 0))  driver call through a DriverApi table `api`
//                                                   (the driver is reached only through entry
//                                                   points, so the macro names the table)
//   CU_LATE_CALL(api, cuX, v3020, kDriverAbiVersion, (a, b))
//                                                   driver call looked up at its first use
//                                                   (a function no table row names)
//   CUDA_CALL(cudaStreamSynchronize(s))             runtime call; also takes the int-returning
//                                                   kernels::Launch* functions
//   CU_CALL_NOTHROW / CUDA_CALL_NOTHROW             for destructors and cleanup paths: print the
//                                                   same message to stderr as "vmm-run: warning:
//                                                   ..." and return whether the call succeeded.
//
// Paths are project-relative when the target compiles with -fmacro-prefix-map (see CMakeLists.txt).
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "runner/base/status.h"
#include "runner/engine/cuda/driver_api.h"

namespace vmm::cuda {

// Ok when `result` is CUDA_SUCCESS; otherwise the message above. Error names come from
// api.cuGetErrorName/cuGetErrorString ("CUresult <n>" when the driver does not know the value).
// Status::cuda_error() is the CUresult's name from runner/vocab/cuda_errors.h (nullptr for a value
// newer than that table).
Status CuStatus(const DriverApi& api, CUresult result, const char* call, const char* file,
                int line);
// The same for the runtime (cudaGetErrorName / cudaGetErrorString). A failed call also leaves the
// thread's last-error state set; this clears it (a sticky error stays, as CUDA defines).
// Status::cuda_error() is the driver name the runtime error stands for (cudaErrorMemoryAllocation
// -> CUDA_ERROR_OUT_OF_MEMORY), or nullptr when it has none.
Status CudaStatus(cudaError_t result, const char* call, const char* file, int line);

// What the macros call: success is decided inline (VMM calls come back to back, and a call into
// another file between them is one more cold cache line); only failures reach the functions above.
inline Status CuResult(const DriverApi& api, CUresult result, const char* call, const char* file,
                       int line) {
  if (result == CUDA_SUCCESS) [[likely]]
    return Status();
  return CuStatus(api, result, call, file, line);
}
inline Status CudaResult(cudaError_t result, const char* call, const char* file, int line) {
  if (result == cudaSuccess) [[likely]]
    return Status();
  return CudaStatus(result, call, file, line);
}

// What CU_LATE_CALL calls: `invoke(fn)` makes the call; a null `fn` (the driver lacks `name`)
// fails with "CUDA driver too old: it has no entry point 'cuX' (needed by cuX(...))".
Status MissingDriverFunction(const char* name, const char* call);
template <typename Fn, typename Invoke>
Status CuLateResult(const DriverApi& api, Fn fn, const char* name, const char* call,
                    const char* file, int line, Invoke invoke) {
  if (fn == nullptr) [[unlikely]]
    return MissingDriverFunction(name, call);
  return CuResult(api, invoke(fn), call, file, line);
}

// Log variants: never throw, never abort; true when the call succeeded.
bool CuLogIfError(const DriverApi& api, CUresult result, const char* call, const char* file,
                  int line) noexcept;
bool CudaLogIfError(cudaError_t result, const char* call, const char* file, int line) noexcept;

}  // namespace vmm::cuda

#define CU_CALL(api, call) ::vmm::cuda::CuResult((api), (api).call, #call, __FILE__, __LINE__)
#define CUDA_CALL(call) \
  ::vmm::cuda::CudaResult(static_cast<cudaError_t>(call), #call, __FILE__, __LINE__)
#define CU_CALL_NOTHROW(api, call) \
  ::vmm::cuda::CuLogIfError((api), (api).call, #call, __FILE__, __LINE__)
#define CUDA_CALL_NOTHROW(call) \
  ::vmm::cuda::CudaLogIfError(static_cast<cudaError_t>(call), #call, __FILE__, __LINE__)
// A driver function looked up where it is called (VMM_DRIVER_FN), not in DriverApi's table:
//   CU_LATE_CALL(api_, cuMemsetD32Async, v3020, kDriverAbiVersion, (dst, pattern, n, stream))
#define CU_LATE_CALL(api, name, pfn, version, args)                                                \
  ::vmm::cuda::CuLateResult((api), VMM_DRIVER_FN_TYPED(PFN_##name##_##pfn, #name, version), #name, \
                            #name #args, __FILE__, __LINE__, [&](auto fn) { return fn args; })
