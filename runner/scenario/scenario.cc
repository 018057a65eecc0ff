#include "runner/scenario/scenario.h"

namespace vmm {

uint64_t BufferDecl::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

}  // namespace vmm
