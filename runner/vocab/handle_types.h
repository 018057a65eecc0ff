// The shareable handle types a scenario's create may ask for (`handle_types: [posix_fd, fabric]`),
// as words and as the AllocProps bits of runner/vocab/alloc_props.h (the values of
// CUmemAllocationHandleType), so a plan passes them to the engine unchanged.
#pragma once

#include <cstdint>
#include <string_view>

#include "runner/vocab/alloc_props.h"

namespace vmm {

struct HandleTypeWord {
  std::string_view word;  // as written in scenarios
  uint32_t bit;           // AllocProps::handle_types bit
};

inline constexpr HandleTypeWord kHandleTypeWords[] = {
    {"posix_fd", kHandleTypePosixFd},  // CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    {"fabric", kHandleTypeFabric},     // CU_MEM_HANDLE_TYPE_FABRIC (needs an IMEX channel)
};

// The bit of `word`, or 0 when it is none of kHandleTypeWords.
constexpr uint32_t HandleTypeBit(std::string_view word) {
  for (const HandleTypeWord& w : kHandleTypeWords)
    if (w.word == word) return w.bit;
  return 0;
}

}  // namespace vmm
