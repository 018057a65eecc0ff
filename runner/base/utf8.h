// UTF-8 validation for input text (scenarios are UTF-8; see docs/limits-and-safety.md).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace vmm {

// The byte offset of the first byte that does not begin or continue a well-formed UTF-8 sequence
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or nullopt when `text` is
// entirely valid. A sequence cut short reports the offset of its first byte.
std::optional<size_t> FirstInvalidUtf8(std::string_view text);

// The 1-based line and column of byte `offset` in `text`; columns count characters (UTF-8 lead
// bytes and ASCII), so they match what an editor shows for the valid text before the offset.
struct TextPosition {
  int line = 1;
  int column = 1;
};
TextPosition PositionOfOffset(std::string_view text, size_t offset);

}  // namespace vmm
