#include "runner/yaml/schema_text.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "runner/base/diagnostic.h"
#include "runner/yaml/schema_validator.h"

namespace vmm {

std::string Quote(std::string_view s) {
  std::string out;  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "'" + string
  out.reserve(s.size() + 2);
  out += '\'';
  out += s;
  out += '\'';
  return out;
}

// "'a'", "'a' and 'b'", "'a', 'b' and 'c'".
std::string QuotedList(const std::vector<std::string>& items, const char* last_sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += (i + 1 == items.size()) ? last_sep : ", ";
    out += Quote(items[i]);
  }
  return out;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string FormatNumber(double d) {
  if (std::floor(d) == d && std::fabs(d) < 1e18) return std::to_string(static_cast<int64_t>(d));
  return std::to_string(d);
}

size_t Utf8Length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string WithArticle(const std::string& noun) {
  const bool vowel =
      !noun.empty() && std::string_view("aeiou").find(noun[0]) != std::string_view::npos;
  return (vowel ? "an " : "a ") + noun;
}

}  // namespace vmm
