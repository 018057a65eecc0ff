// Durations as scenario files write them: "200ms", "5s", "1500 us", "10ns" (an integer and a unit;
// no bare numbers: a duration without its unit is ambiguous).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace vmm {

// Parses a decimal integer, an optional space and a unit ns, us, ms, s or min, into nanoseconds.
// Returns nullopt for anything else; *overflow (when given) is set when the text has the right form
// but the value does not fit in 64 bits of nanoseconds.
std::optional<uint64_t> ParseDuration(std::string_view text, bool* overflow = nullptr);

}  // namespace vmm
