// Small formatting helpers shared by every layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vmm {

// "0x7f3a00000000": addresses and handles always print as lower-case hex strings.
std::string Hex(uint64_t value);

// "2 MiB", "256 KiB", "3000 B": the largest binary unit that divides the value exactly.
std::string FormatBytes(uint64_t bytes);

// "[256, 256]": a tensor shape as written in scenarios.
std::string FormatShape(const std::vector<uint64_t>& shape);

}  // namespace vmm
