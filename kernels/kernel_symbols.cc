// The host symbols of the graph kernels' rows (graph_kernels.h), in row order. Built with the
// kernels (CUDA builds only): the host stubs nvcc generates are defined there.
#include "kernels/graph_kernels.h"

namespace vmm::kernels {
namespace {

#define VMM_GRAPH_KERNEL_SYMBOL(kernel, ...) reinterpret_cast<const void*>(&::kernel),
const void* const kSymbols[] = {VMM_GRAPH_KERNELS(VMM_GRAPH_KERNEL_SYMBOL)};
#undef VMM_GRAPH_KERNEL_SYMBOL
static_assert(sizeof(kSymbols) / sizeof(kSymbols[0]) == kGraphKernelCount);

}  // namespace

const void* GraphKernelSymbol(int index) {
  return index >= 0 && index < kGraphKernelCount ? kSymbols[index] : nullptr;
}

}  // namespace vmm::kernels
