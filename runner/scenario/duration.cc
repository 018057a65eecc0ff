#include "runner/scenario/duration.h"

#include <limits>

namespace vmm {

std::optional<uint64_t> ParseDuration(std::string_view text, bool* overflow) {
  if (overflow != nullptr) *overflow = false;
  size_t i = 0;
  uint64_t value = 0;
  bool too_big = false;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) too_big = true;
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) return std::nullopt;
  if (i < text.size() && text[i] == ' ') ++i;
  const std::string_view unit = text.substr(i);
  struct Unit {
    std::string_view name;
    uint64_t ns;
  };
  constexpr Unit kUnits[] = {
      {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {"min", 60000000000}};
  for (const Unit& u : kUnits) {
    if (unit != u.name) continue;
    if (too_big || value > std::numeric_limits<uint64_t>::max() / u.ns) {
      if (overflow != nullptr) *overflow = true;
      return std::nullopt;
    }
    return value * u.ns;
  }
  return std::nullopt;
}

}  // namespace vmm
