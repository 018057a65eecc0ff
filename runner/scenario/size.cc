#include "runner/scenario/size.h"

#include <array>
#include <cctype>
#include <utility>

namespace vmm {
namespace {

struct Unit {
  const char* name;
  int shift;
};
constexpr std::array<Unit, 5> kUnits = {
    {{"B", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}}};

// Splits "12 MiB" into digits "12", separator " " and unit "MiB"; false when there are no digits.
bool Split(std::string_view text, std::string_view* digits, std::string_view* space,
           std::string_view* unit) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0) return false;
  *digits = text.substr(0, i);
  size_t j = i;
  if (j < text.size() && text[j] == ' ') ++j;
  *space = text.substr(i, j - i);
  *unit = text.substr(j);
  return true;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::optional<uint64_t> ParseSize(std::string_view text, bool* overflow) {
  if (overflow != nullptr) *overflow = false;
  std::string_view digits, space, unit;
  if (!Split(text, &digits, &space, &unit)) return std::nullopt;
  int shift = -1;
  if (unit.empty()) {
    if (!space.empty()) return std::nullopt;  // "12 " is not a size
    shift = 0;
  } else {
    for (const Unit& u : kUnits)
      if (unit == u.name) shift = u.shift;
    if (shift < 0) return std::nullopt;
  }
  uint64_t value = 0;
  bool too_big = false;
  for (char c : digits) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - d) / 10) too_big = true;
    value = value * 10 + d;
  }
  if (!too_big && shift > 0 && value > (UINT64_MAX >> shift)) too_big = true;
  if (too_big) {
    if (overflow != nullptr) *overflow = true;
    return std::nullopt;
  }
  return value << shift;
}

std::string SuggestSize(std::string_view text) {
  std::string_view digits, space, unit;
  if (!Split(text, &digits, &space, &unit) || unit.empty()) return "";
  // Decimal and abbreviated spellings of each binary unit, lower-cased.
  constexpr std::array<std::pair<const char*, const char*>, 19> kFixes = {{
      {"b", "B"},     {"byte", "B"},  {"bytes", "B"}, {"k", "KiB"},   {"kb", "KiB"},
      {"ki", "KiB"},  {"kib", "KiB"}, {"m", "MiB"},   {"mb", "MiB"},  {"mi", "MiB"},
      {"mib", "MiB"}, {"g", "GiB"},   {"gb", "GiB"},  {"gi", "GiB"},  {"gib", "GiB"},
      {"t", "TiB"},   {"tb", "TiB"},  {"ti", "TiB"},  {"tib", "TiB"},
  }};
  const std::string lower = Lower(unit);
  for (const auto& [from, to] : kFixes) {
    if (lower == from) {
      std::string fixed = std::string(digits) + std::string(space) + to;
      return fixed == text ? "" : fixed;
    }
  }
  return "";
}

}  // namespace vmm
