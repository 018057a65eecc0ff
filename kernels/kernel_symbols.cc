#include "kernels/kernels.h"
#include "kernels/launch_config.h"

namespace vmm::kernels {

const char* KernelNameForSymbol(const void* symbol) {
  if (symbol == nullptr) return nullptr;
  if (symbol == MatmulKernelSymbol()) return kMatmulKernelName;
  if (symbol == FillKernelSymbol()) return kFillKernelName;
  if (symbol == SetConditionKernelSymbol()) return kSetConditionKernelName;
  if (symbol == NextPassKernelSymbol()) return kNextPassKernelName;
  return nullptr;
}

}  // namespace vmm::kernels
