// Control characters in text that came from outside (scenarios, reports). They would reach
// terminals (ESC starts escape sequences that move the cursor, retitle the window or rewrite the
// clipboard; CR overwrites a line) and Markdown/JUnit files, so both inputs refuse them and the
// report writer never emits them (see docs/limits-and-safety.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vmm {

// Control characters are C0 (U+0000-U+001F) but tab, DEL (U+007F) and C1 (U+0080-U+009F, the
// UTF-8 bytes C2 80-9F); a newline (U+000A) counts only when `allow_newline` is false.
inline bool IsRefusedControl(uint32_t code_point, bool allow_newline) {
  if (code_point == '\t' || (allow_newline && code_point == '\n')) return false;
  return code_point < 0x20 || (code_point >= 0x7F && code_point <= 0x9F);
}

struct ControlCharacter {
  size_t offset = 0;        // of its first byte in the text
  uint32_t code_point = 0;  // U+0000-U+009F
};

// The first refused control character of UTF-8 `text`, or nullopt.
std::optional<ControlCharacter> FirstControlCharacter(std::string_view text, bool allow_newline);

// "U+001B (ESC)", "U+000D (CR)", "U+0085": for messages.
std::string DescribeControlCharacter(uint32_t code_point);

}  // namespace vmm
