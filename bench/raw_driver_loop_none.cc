// Builds without the CUDA backend have no driver to compare against.
#include "bench/raw_driver_loop.h"

namespace vmm::bench {

std::unique_ptr<RawDriverLoop> MakeRawDriverLoop(int, uint64_t) { return nullptr; }

}  // namespace vmm::bench
