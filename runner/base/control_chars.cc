#include "runner/base/control_chars.h"

#include <cstdio>

namespace vmm {

std::optional<ControlCharacter> FirstControlCharacter(std::string_view text, bool allow_newline) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if (IsRefusedControl(byte, allow_newline)) return ControlCharacter{i, byte};
    } else if (byte == 0xC2 && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9F) return ControlCharacter{i, next};
    }
  }
  return std::nullopt;
}

std::string DescribeControlCharacter(uint32_t code_point) {
  static constexpr const char* kNames[32] = {"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL",
                                             "BS",  "TAB", "LF",  "VT",  "FF",  "CR",  "SO",  "SI",
                                             "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB",
                                             "CAN", "EM",  "SUB", "ESC", "FS",  "GS",  "RS",  "US"};
  char buf[32];
  if (code_point < 32)
    std::snprintf(buf, sizeof buf, "U+%04X (%s)", code_point, kNames[code_point]);
  else if (code_point == 0x7F)
    std::snprintf(buf, sizeof buf, "U+007F (DEL)");
  else
    std::snprintf(buf, sizeof buf, "U+%04X", code_point);
  return buf;
}

}  // namespace vmm
