#include "runner/engine/cuda/kernel_registry.h"

#include <cstring>

#include "kernels/kernels.h"
#include "kernels/launch_config.h"
#include "runner/engine/cuda/cuda_call.h"

namespace vmm::cuda {
namespace {

StatusOr<KernelEntry> Load(const DriverApi& api, const char* name, const void* symbol,
                           uint32_t param_count) {
  KernelEntry e;
  e.name = name;
  e.symbol = symbol;
  Status s = CUDA_CALL(cudaGetFuncBySymbol(&e.function, symbol));
  if (!s.ok()) return s.WithContext(std::string("loading kernel '") + name + "'");
  // cudaGetKernel (CUDA 12.0+) only widens what Find recognises: a failure is not fatal.
  if (cudaGetKernel(&e.kernel, symbol) != cudaSuccess) {
    (void)cudaGetLastError();
    e.kernel = nullptr;
  }
  // Null on drivers older than CUDA 12.4: then only KernelNodes lacks the argument layout.
  if (VMM_DRIVER_FN(cuFuncGetParamInfo, v12040, 12040) == nullptr) return e;
  auto* function = reinterpret_cast<CUfunction>(e.function);
  for (uint32_t i = 0; i < param_count; ++i) {
    size_t offset = 0;
    size_t size = 0;
    s = CU_LATE_CALL(api, cuFuncGetParamInfo, v12040, 12040, (function, i, &offset, &size));
    if (!s.ok()) {
      return s.WithContext(std::string("reading parameter ") + std::to_string(i) + " of '" + name +
                           "'");
    }
    e.params.push_back({offset, size});
    if (offset + size > e.arg_bytes) e.arg_bytes = offset + size;
  }
  return e;
}

}  // namespace

StatusOr<KernelRegistry> KernelRegistry::Create(const DriverApi& api) {
  KernelRegistry r;
  for (const kernels::GraphKernel& k : kernels::GraphKernels()) {
    StatusOr<KernelEntry> e = Load(api, k.name, k.symbol(), k.param_count);
    if (!e.ok()) return e.status();
    r.entries_.push_back(std::move(e).value());
  }
  return r;
}

const KernelEntry* KernelRegistry::Find(const void* func) const {
  if (func == nullptr) return nullptr;
  for (const KernelEntry& e : entries_) {
    if (func == e.symbol || func == static_cast<const void*>(e.function) ||
        (e.kernel != nullptr && func == static_cast<const void*>(e.kernel))) {
      return &e;
    }
  }
  return nullptr;
}

Status KernelRegistry::PackArgs(const KernelEntry& entry, void* const* kernel_params,
                                std::vector<uint8_t>* out) {
  if (entry.params.empty()) {
    return RuntimeError(std::string("cannot pack the arguments of '") + entry.name +
                        "': cuFuncGetParamInfo is unavailable (the driver is older than CUDA "
                        "12.4)");
  }
  if (kernel_params == nullptr) {
    return RuntimeError(std::string("kernel node of '") + entry.name +
                        "' has no kernelParams (its arguments were set through 'extra')");
  }
  out->assign(entry.arg_bytes, 0);
  for (size_t i = 0; i < entry.params.size(); ++i) {
    if (kernel_params[i] == nullptr) {
      return RuntimeError(std::string("kernel node of '") + entry.name + "': argument " +
                          std::to_string(i) + " is null");
    }
    std::memcpy(out->data() + entry.params[i].offset, kernel_params[i], entry.params[i].size);
  }
  return Status::Ok();
}

}  // namespace vmm::cuda
