#include "runner/scenario/scenario.h"

namespace vmm {

uint64_t BufferDecl::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

const StepMapEntry* StepMap::Find(std::string_view key) const {
  for (const StepMapEntry& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

}  // namespace vmm
