#include <iterator>

#include "kernels/kernels.h"
#include "kernels/launch_config.h"

namespace vmm::kernels {
namespace {

// One row per kernel a captured graph may hold (the graph's kernel nodes are recognised, named and
// read back by this table).
const GraphKernel kGraphKernels[] = {
    {kMatmulKernelName, &MatmulKernelSymbol, kMatmulParamCount},
    {kFillKernelName, &FillKernelSymbol, kFillParamCount},
    {kAxpyKernelName, &AxpyKernelSymbol, kAxpyParamCount},
    {kSetConditionKernelName, &SetConditionKernelSymbol, kSetConditionParamCount},
    {kNextPassKernelName, &NextPassKernelSymbol, kNextPassParamCount},
};

}  // namespace

GraphKernelRange GraphKernels() { return {std::begin(kGraphKernels), std::end(kGraphKernels)}; }

const char* KernelNameForSymbol(const void* symbol) {
  if (symbol == nullptr) return nullptr;
  for (const GraphKernel& k : kGraphKernels)
    if (symbol == k.symbol()) return k.name;
  return nullptr;
}

}  // namespace vmm::kernels
