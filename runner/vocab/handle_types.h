// The shareable handle types a scenario's create may ask for (`handle_types: [posix_fd, fabric]`),
// as words and as bits. The bits are the values of CUmemAllocationHandleType, the same as
// engine.h's kHandleType* (runner/exec checks that they agree), so a plan passes them through
// unchanged.
#pragma once

#include <cstdint>
#include <string_view>

namespace vmm {

struct HandleTypeWord {
  std::string_view word;  // as written in scenarios
  uint32_t bit;           // CUmemAllocationHandleType
};

inline constexpr HandleTypeWord kHandleTypeWords[] = {
    {"posix_fd", 0x1},  // CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    {"fabric", 0x8},    // CU_MEM_HANDLE_TYPE_FABRIC (needs an IMEX channel)
};

// The bit of `word`, or 0 when it is none of kHandleTypeWords.
constexpr uint32_t HandleTypeBit(std::string_view word) {
  for (const HandleTypeWord& w : kHandleTypeWords)
    if (w.word == word) return w.bit;
  return 0;
}

}  // namespace vmm
