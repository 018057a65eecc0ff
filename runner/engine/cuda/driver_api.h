// DriverApi: the CUDA driver functions vmm-run uses, looked up at run time.
//
// libcuda is never on the link line: the statically linked CUDA runtime finds the installed driver
// and hands out its entry points through cudaGetDriverEntryPointByVersion. So one binary runs on
// machines without a driver (the CUDA backend then reports itself unavailable) and there is no
// link-time dependency on a driver version. Each symbol is requested at a CUDA 12.x ABI version
// (kDriverAbiVersion, or the version that introduced it), so the function-pointer types below are
// the ones the driver returns, whatever newer driver is installed.
//
// The table is a plain value: copy it freely; the pointers stay valid for the life of the process.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include "runner/base/status.h"

namespace vmm::cuda {

// The CUDA version passed to cudaGetDriverEntryPointByVersion for every symbol except the few that
// are newer (see LoadDriverApi).
inline constexpr unsigned kDriverAbiVersion = 12000;

// The driver functions the backend cannot start without (and those tests replace), one row each:
// X(name, PFN version suffix, ABI version to request, required). A required symbol the driver
// lacks makes the CUDA backend unavailable; an optional one is left null. A function that one
// place alone calls is not a row: it is looked up where it is called (VMM_DRIVER_FN below).
#define VMM_DRIVER_FUNCTIONS(X)                                              \
  X(cuGetErrorName, v6000, kDriverAbiVersion, true)                          \
  X(cuGetErrorString, v6000, kDriverAbiVersion, true)                        \
  X(cuDriverGetVersion, v2020, kDriverAbiVersion, true)                      \
  X(cuDeviceGet, v2000, kDriverAbiVersion, true)                             \
  X(cuDeviceGetAttribute, v2000, kDriverAbiVersion, true)                    \
  X(cuCtxGetCurrent, v4000, kDriverAbiVersion, true)                         \
  X(cuMemGetAllocationGranularity, v10020, kDriverAbiVersion, true)          \
  X(cuMemAddressReserve, v10020, kDriverAbiVersion, true)                    \
  X(cuMemAddressFree, v10020, kDriverAbiVersion, true)                       \
  X(cuMemCreate, v10020, kDriverAbiVersion, true)                            \
  X(cuMemRelease, v10020, kDriverAbiVersion, true)                           \
  X(cuMemMap, v10020, kDriverAbiVersion, true)                               \
  X(cuMemUnmap, v10020, kDriverAbiVersion, true)                             \
  X(cuMemSetAccess, v10020, kDriverAbiVersion, true)                         \
  X(cuMemGetAccess, v10020, kDriverAbiVersion, true)                         \
  X(cuMemExportToShareableHandle, v10020, kDriverAbiVersion, true)           \
  X(cuMemImportFromShareableHandle, v10020, kDriverAbiVersion, true)         \
  X(cuMemGetInfo, v3020, kDriverAbiVersion, true)                            \
  X(cuMemGetAddressRange, v3020, kDriverAbiVersion, true)                    \
  X(cuMemGetAllocationPropertiesFromHandle, v10020, kDriverAbiVersion, true) \
  X(cuMemRetainAllocationHandle, v11000, kDriverAbiVersion, true)

struct DriverApi {
#define VMM_DRIVER_MEMBER(name, pfn, version, required) PFN_##name##_##pfn name = nullptr;
  VMM_DRIVER_FUNCTIONS(VMM_DRIVER_MEMBER)
#undef VMM_DRIVER_MEMBER
};

// Looks every symbol up. Call after the runtime found a device (it initializes the runtime).
// Fails with Code::kUnavailable, "no CUDA driver: ..." when the runtime cannot reach a driver, or
// "CUDA driver too old: entry point 'cuMemCreate' (CUDA 12.0): ..." when a required symbol is
// missing.
StatusOr<DriverApi> LoadDriverApi();

// The entry point of driver function `name` at ABI `version`, or null when the driver lacks it (or
// there is none). Call it after LoadDriverApi succeeded; VMM_DRIVER_FN caches its answer.
void* LookUpDriverFunction(const char* name, unsigned version);

// VMM_DRIVER_FN(cuMemsetD32Async, v3020, kDriverAbiVersion): that function as its PFN type, looked
// up at the first use of this call site and then kept; null when the driver lacks it. Adding a
// driver call this way touches only the file that makes it (CU_LATE_CALL in cuda_call.h calls it).
// Call sites are engine methods, which run only after LoadDriverApi succeeded: a null kept here is
// a driver without the function, not a driver that was not loaded yet.
// `name` is pasted, never expanded: cuda.h defines some names as macros of their newest version
// (cuStreamWriteValue32 -> cuStreamWriteValue32_v2), and the driver looks up the plain name.
#define VMM_DRIVER_FN(name, pfn, version) VMM_DRIVER_FN_TYPED(PFN_##name##_##pfn, #name, version)
#define VMM_DRIVER_FN_TYPED(pfn_type, name_text, version)                                  \
  ([] {                                                                                    \
    static const auto fn =                                                                 \
        reinterpret_cast<pfn_type>(::vmm::cuda::LookUpDriverFunction(name_text, version)); \
    return fn;                                                                             \
  }())

}  // namespace vmm::cuda
