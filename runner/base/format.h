// Small formatting helpers shared by every layer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vmm {

// "0x7f3a00000000": addresses and handles always print as lower-case hex strings.
std::string Hex(uint64_t value);

// "2 MiB", "256 KiB", "3000 B": the largest binary unit that divides the value exactly.
std::string FormatBytes(uint64_t bytes);

// The same as a scenario writes it: "2MiB", "256KiB", or a plain count ("3000").
std::string SizeLiteral(uint64_t bytes);

// `text` as quoted in a message: whole when at most `max_bytes`, else its first bytes (never half
// a UTF-8 character) and "... (N bytes)", so a message never carries a whole long value.
std::string Excerpt(std::string_view text, size_t max_bytes = 80);

// "[256, 256]": a tensor shape as written in scenarios.
std::string FormatShape(const std::vector<uint64_t>& shape);

}  // namespace vmm
