#include "runner/engine/cuda/driver_api.h"

#include <cuda_runtime_api.h>

#include <string>

namespace vmm::cuda {
namespace {

std::string VersionText(unsigned version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// Looks `name` up at ABI `version`. `required` = false leaves *out null when the driver lacks it.
template <typename Fn>
Status Load(const char* name, unsigned version, bool required, Fn* out) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t err =
      cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &query);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    // cudaErrorInvalidValue also means "version newer than the driver": fine for optional symbols.
    if (!required) {
      *out = nullptr;
      return Status::Ok();
    }
    return Unavailable("no CUDA driver: cudaGetDriverEntryPointByVersion(\"" + std::string(name) +
                       "\", " + VersionText(version) + ") failed: " + cudaGetErrorName(err) + ": " +
                       cudaGetErrorString(err));
  }
  if (query != cudaDriverEntryPointSuccess || fn == nullptr) {
    *out = nullptr;
    if (!required) return Status::Ok();
    const char* why = query == cudaDriverEntryPointVersionNotSufficent
                          ? "the driver's version of it is not sufficient"
                          : "symbol not found";
    return Unavailable("CUDA driver too old: entry point '" + std::string(name) + "' (CUDA " +
                       VersionText(version) + "): " + why);
  }
  *out = reinterpret_cast<Fn>(fn);
  return Status::Ok();
}

}  // namespace

void* LookUpDriverFunction(const char* name, unsigned version) {
  void* fn = nullptr;
  (void)Load(name, version, /*required=*/false, &fn);
  return fn;
}

StatusOr<DriverApi> LoadDriverApi() {
  DriverApi api;
#define VMM_DRIVER_LOAD(name, pfn, version, required) \
  VMM_RETURN_IF_ERROR(Load(#name, version, required, &api.name));
  VMM_DRIVER_FUNCTIONS(VMM_DRIVER_LOAD)
#undef VMM_DRIVER_LOAD
  return api;
}

}  // namespace vmm::cuda
