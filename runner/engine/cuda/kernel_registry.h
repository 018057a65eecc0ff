// KernelRegistry: what the engine knows about the kernels that can appear in its graphs (the rows
// of kernels::kGraphKernels, kernels/graph_kernels.h): how to recognise them in a kernel node and
// how their arguments are laid out, so KernelNodes can report a name and the packed argument
// bytes, and LaunchKernel can launch packed arguments.
//
// Recognition: a kernel node's `func` (cudaGraphKernelNodeGetParams) is matched against the
// kernel's host symbol (what the runtime reports for kernels it launched), its cudaFunction_t
// (cudaGetFuncBySymbol) and its cudaKernel_t (cudaGetKernel), so it does not matter which of the
// three a runtime version hands back.
//
// Argument layout: the row's, declared by the kernel's signature (graph_kernels.h), so the packed
// bytes are exactly the device-side parameter buffer: matmul (3 pointers, 3 uint32) = 36 bytes,
// fill (pointer, 2 uint64) = 24 bytes; padding bytes are zero, as the host backend packs them.
// Where the driver has cuFuncGetParamInfo (CUDA 12.4+), Create checks the row against it.
//
// Built once per engine, after the engine's context is current (it loads the kernels' module).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/graph_kernels.h"
#include "runner/base/status.h"
#include "runner/engine/cuda/driver_api.h"

namespace vmm::cuda {

struct KernelEntry {
  const char* name = nullptr;  // the row's name
  const void* symbol = nullptr;
  const kernels::GraphKernel* row = nullptr;
  cudaFunction_t function = nullptr;
  cudaKernel_t kernel = nullptr;  // nullptr when cudaGetKernel is not supported
};

class KernelRegistry {
 public:
  // Fails (Code::kRuntime) when a kernel cannot be loaded on the current device, e.g.
  // cudaErrorNoKernelImageForDevice when the binary has no code for this GPU; an internal error
  // when a row's declared layout is not the driver's.
  static StatusOr<KernelRegistry> Create(const DriverApi& api);

  // The entry whose symbol, function or kernel handle is `func`; nullptr for other kernels.
  const KernelEntry* Find(const void* func) const;

  // Packs the arguments a kernel node holds (`kernel_params`, one pointer per parameter, as
  // cudaKernelNodeParams::kernelParams) into the parameter-buffer layout of `entry`.
  static Status PackArgs(const KernelEntry& entry, void* const* kernel_params,
                         std::vector<uint8_t>* out);

  const std::vector<KernelEntry>& entries() const { return entries_; }

 private:
  std::vector<KernelEntry> entries_;
};

}  // namespace vmm::cuda
