// SHA-256 (FIPS 180-4) of a byte string, as 64 lower-case hex digits. Used for report provenance.
#pragma once

#include <string>
#include <string_view>

namespace vmm {

std::string Sha256Hex(std::string_view data);

}  // namespace vmm
