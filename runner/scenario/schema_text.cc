#include "runner/scenario/schema_text.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "runner/base/diagnostic.h"
#include "runner/scenario/schema_validator.h"

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

std::string SuggestName(const std::string& word, const std::vector<std::string>& candidates) {
  std::string close = ClosestMatch(word, candidates);
  if (!close.empty()) return close;
  // Two swapped neighbours ("nmae") count as one typo.
  for (const std::string& c : candidates) {
    if (c.size() != word.size()) continue;
    size_t first = 0;
    while (first < c.size() && c[first] == word[first]) ++first;
    if (first + 1 < c.size() && c[first] == word[first + 1] && c[first + 1] == word[first] &&
        c.compare(first + 2, std::string::npos, word, first + 2, std::string::npos) == 0)
      return c;
  }
  return "";
}

void SortByPosition(std::vector<Diagnostic>* diagnostics) {
  std::stable_sort(diagnostics->begin(), diagnostics->end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     if (a.loc.line != b.loc.line) return a.loc.line < b.loc.line;
                     return a.loc.column < b.loc.column;
                   });
}

}  // namespace vmm
