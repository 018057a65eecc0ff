#include "kernels/kernels.h"
#include "kernels/launch_config.h"

namespace vmm::kernels {

const char* KernelNameForSymbol(const void* symbol) {
  if (symbol == nullptr) return nullptr;
  if (symbol == MatmulKernelSymbol()) return kMatmulKernelName;
  if (symbol == FillKernelSymbol()) return kFillKernelName;
  return nullptr;
}

}  // namespace vmm::kernels
