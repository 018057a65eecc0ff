#include "runner/report/json_limits.h"

#include <cmath>
#include <cstdlib>
#include <optional>

#include "runner/base/control_chars.h"

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

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// At `text[i]` inside a string: the length of the character (escape or raw bytes) starting there,
// and in *refused the control character it stands for when CheckJsonLimits refuses it.
size_t StringCharacter(const std::string& text, size_t i, std::optional<uint32_t>* refused) {
  refused->reset();
  const size_t n = text.size();
  const auto byte = static_cast<unsigned char>(text[i]);
  if (byte == '\\') {
    if (i + 1 >= n) return 1;
    const char e = text[i + 1];
    if (e == 'b' || e == 'f' || e == 'r') *refused = e == 'b' ? 0x08u : e == 'f' ? 0x0Cu : 0x0Du;
    if (e != 'u' || i + 5 >= n) return 2;
    uint32_t code = 0;
    for (size_t k = i + 2; k < i + 6; ++k) {
      const int d = HexDigit(text[k]);
      if (d < 0) return 2;  // malformed: the parser reports it
      code = code * 16 + static_cast<uint32_t>(d);
    }
    if (IsRefusedControl(code, true)) *refused = code;
    return 6;
  }
  if (byte == 0x7F) *refused = 0x7Fu;
  if (byte == 0xC2 && i + 1 < n) {
    const auto next = static_cast<unsigned char>(text[i + 1]);
    if (next >= 0x80 && next <= 0x9F) *refused = next;
    return 2;
  }
  return 1;
}

}  // namespace

std::string ReplaceControlCharacters(std::string json) {
  std::string out;
  const size_t n = json.size();
  size_t copied = 0;  // json[copied, i) is still to be copied into out
  for (size_t i = 0; i < n; ++i) {
    if (json[i] != '"') continue;
    for (++i; i < n && json[i] != '"';) {
      std::optional<uint32_t> refused;
      const size_t len = StringCharacter(json, i, &refused);
      if (refused) {
        out.append(json, copied, i - copied);
        out += "\\ufffd";
        copied = i + len;
      }
      i += len;
    }
  }
  if (copied == 0) return json;
  out.append(json, copied, std::string::npos);
  return out;
}

Status CheckJsonLimits(const std::string& text, const std::string& name) {
  int depth = 0;
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < n && text[i] != '"';) {
        std::optional<uint32_t> refused;
        const size_t len = StringCharacter(text, i, &refused);  // an escape never closes it
        if (refused)
          return ErrorAt(text, name, i,
                         "a string holds the control character " +
                             DescribeControlCharacter(*refused) +
                             " (reports hold no control characters other than tab and newline: "
                             "they would reach terminals)");
        i += len;
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
