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

struct DriverApi {
  PFN_cuGetErrorName_v6000 cuGetErrorName = nullptr;
  PFN_cuGetErrorString_v6000 cuGetErrorString = nullptr;
  PFN_cuDriverGetVersion_v2020 cuDriverGetVersion = nullptr;
  PFN_cuDeviceGet_v2000 cuDeviceGet = nullptr;
  PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute = nullptr;
  PFN_cuCtxGetCurrent_v4000 cuCtxGetCurrent = nullptr;
  PFN_cuMemGetAllocationGranularity_v10020 cuMemGetAllocationGranularity = nullptr;
  PFN_cuMemAddressReserve_v10020 cuMemAddressReserve = nullptr;
  PFN_cuMemAddressFree_v10020 cuMemAddressFree = nullptr;
  PFN_cuMemCreate_v10020 cuMemCreate = nullptr;
  PFN_cuMemRelease_v10020 cuMemRelease = nullptr;
  PFN_cuMemMap_v10020 cuMemMap = nullptr;
  PFN_cuMemUnmap_v10020 cuMemUnmap = nullptr;
  PFN_cuMemSetAccess_v10020 cuMemSetAccess = nullptr;
  // Optional: nullptr on drivers older than CUDA 12.4 (only KernelNodes needs it).
  PFN_cuFuncGetParamInfo_v12040 cuFuncGetParamInfo = nullptr;
};

// Looks every symbol up. Call after the runtime found a device (it initializes the runtime).
// Fails with Code::kUnavailable, "no CUDA driver: ..." when the runtime cannot reach a driver, or
// "CUDA driver too old: entry point 'cuMemCreate' (CUDA 12.0): ..." when a required symbol is
// missing.
StatusOr<DriverApi> LoadDriverApi();

}  // namespace vmm::cuda
