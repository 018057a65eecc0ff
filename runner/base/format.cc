#include "runner/base/format.h"

#include <cstdio>

namespace vmm {
namespace {
constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
}  // namespace

std::string Hex(uint64_t value) {
  // Hand-rolled: addresses are formatted on the executor's hot path, where snprintf costs more
  // than the VMM call being timed.
  char buf[18];
  char* end = buf + sizeof buf;
  char* p = end;
  do {
    *--p = "0123456789abcdef"[value & 0xf];
    value >>= 4;
  } while (value != 0);
  *--p = 'x';
  *--p = '0';
  return std::string(p, end);
}

namespace {

// `bytes` in the largest unit of kUnits that divides it exactly: its index, and the count.
int LargestUnit(uint64_t* bytes) {
  int unit = 0;
  while (unit < 4 && *bytes != 0 && *bytes % 1024 == 0) {
    *bytes /= 1024;
    ++unit;
  }
  return unit;
}

}  // namespace

std::string FormatBytes(uint64_t bytes) {
  const int unit = LargestUnit(&bytes);
  return std::to_string(bytes) + " " + kUnits[unit];
}

std::string SizeLiteral(uint64_t bytes) {
  const int unit = LargestUnit(&bytes);
  return std::to_string(bytes) + (unit == 0 ? "" : kUnits[unit]);
}

std::string FormatShape(const std::vector<uint64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::string Excerpt(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace vmm
