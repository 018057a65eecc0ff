// Byte sizes as scenario files write them: "4096", "2MiB", "256 KiB" (binary units only).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vmm {

// Parses a decimal integer optionally followed by one space and a unit B, KiB, MiB, GiB or TiB.
// Returns nullopt for anything else; *overflow (when given) is set when the text has the right form
// but the value does not fit in 64 bits.
std::optional<uint64_t> ParseSize(std::string_view text, bool* overflow = nullptr);

// For text that is not a valid size but looks like one with a wrong unit ("2MB", "2 mib", "4k"),
// the size the author probably meant ("2MiB", "2 MiB", "4KiB"); "" when there is no good guess.
std::string SuggestSize(std::string_view text);

}  // namespace vmm
