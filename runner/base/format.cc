#include "runner/base/format.h"

#include <cstdio>

namespace vmm {
namespace {
constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
}  // namespace

std::string Hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string FormatBytes(uint64_t bytes) {
  int unit = 0;
  while (unit < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + kUnits[unit];
}

}  // namespace vmm
