#include "runner/engine/cuda/kernel_registry.h"

#include <cstring>

#include "kernels/graph_kernels.h"
#include "runner/engine/cuda/cuda_call.h"

namespace vmm::cuda {
namespace {

StatusOr<KernelEntry> Load(const DriverApi& api, int index) {
  const kernels::GraphKernel& row = kernels::kGraphKernels[index];
  KernelEntry e;
  e.name = row.name;
  e.symbol = kernels::GraphKernelSymbol(index);
  e.row = &row;
  Status s = CUDA_CALL(cudaGetFuncBySymbol(&e.function, e.symbol));
  if (!s.ok()) return s.WithContext(std::string("loading kernel '") + row.name + "'");
  // cudaGetKernel (CUDA 12.0+) only widens what Find recognises: a failure is not fatal.
  if (cudaGetKernel(&e.kernel, e.symbol) != cudaSuccess) {
    (void)cudaGetLastError();
    e.kernel = nullptr;
  }
  // The declared layout (graph_kernels.h) is what packs and launches; where the driver can say
  // its own (CUDA 12.4+), the two must agree.
  if (VMM_DRIVER_FN(cuFuncGetParamInfo, v12040, 12040) == nullptr) return e;
  auto* function = reinterpret_cast<CUfunction>(e.function);
  for (int i = 0; i < row.layout.count; ++i) {
    size_t offset = 0;
    size_t size = 0;
    s = CU_LATE_CALL(api, cuFuncGetParamInfo, v12040, 12040, (function, i, &offset, &size));
    if (!s.ok()) {
      return s.WithContext(std::string("reading parameter ") + std::to_string(i) + " of '" +
                           row.name + "'");
    }
    if (offset != row.layout.offset[i] || size != row.layout.size[i]) {
      return InternalError(std::string("kernel '") + row.name + "' parameter " + std::to_string(i) +
                           " ('" + row.params[i] + "') lies at offset " + std::to_string(offset) +
                           ", " + std::to_string(size) +
                           " bytes, on the device, but its declaration in kernels/graph_kernels.h "
                           "lays it out at offset " +
                           std::to_string(row.layout.offset[i]) + ", " +
                           std::to_string(row.layout.size[i]) + " bytes");
    }
  }
  return e;
}

}  // namespace

StatusOr<KernelRegistry> KernelRegistry::Create(const DriverApi& api) {
  KernelRegistry r;
  for (int i = 0; i < kernels::kGraphKernelCount; ++i) {
    StatusOr<KernelEntry> e = Load(api, i);
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
  if (kernel_params == nullptr) {
    return RuntimeError(std::string("kernel node of '") + entry.name +
                        "' has no kernelParams (its arguments were set through 'extra')");
  }
  const kernels::ArgLayout& layout = entry.row->layout;
  out->assign(layout.bytes, 0);
  for (int i = 0; i < layout.count; ++i) {
    if (kernel_params[i] == nullptr) {
      return RuntimeError(std::string("kernel node of '") + entry.name + "': argument " +
                          std::to_string(i) + " is null");
    }
    std::memcpy(out->data() + layout.offset[i], kernel_params[i], layout.size[i]);
  }
  return Status::Ok();
}

}  // namespace vmm::cuda
