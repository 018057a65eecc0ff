#include "runner/report/json_limits.h"

#include <cmath>
#include <cstdlib>

namespace vmm::report {
namespace {

bool IsNumberChar(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

Status ErrorAt(const std::string& text, const std::string& name, size_t at,
               const std::string& what) {
  int line = 1, column = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return InvalidInput(name + ":" + std::to_string(line) + ":" + std::to_string(column) +
                      ": invalid JSON: " + what);
}

}  // namespace

Status CheckJsonLimits(const std::string& text, const std::string& name) {
  int depth = 0;
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < n && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;  // the escaped character cannot close the string
      }
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        return ErrorAt(text, name, i,
                       "arrays and objects are nested deeper than " +
                           std::to_string(kMaxJsonDepth) + " levels");
      }
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;  // unbalanced input is the parser's to report
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t end = i;
      while (end < n && IsNumberChar(text[end])) ++end;
      const std::string number = text.substr(i, end - i);
      // strtod reads a prefix; a malformed number is left to the parser.
      const double value = std::strtod(number.c_str(), nullptr);
      if (std::isinf(value)) {
        const std::string shown = number.size() > 40 ? number.substr(0, 40) + "..." : number;
        return ErrorAt(text, name, i,
                       "number '" + shown + "' is out of range (larger than 1.8e308)");
      }
      i = end - 1;
    }
  }
  return Status::Ok();
}

}  // namespace vmm::report
