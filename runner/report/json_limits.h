// CheckJsonLimits: a linear pre-scan of JSON text that every report reader runs before nlohmann
// builds a document, so that what follows (the parser, the DOM, the recursive readers of capture
// bodies, the diff) works on bounded input.
//
// Refused, with kInvalidInput and "NAME:LINE:COL: ..." (1-based; columns count bytes):
//   - arrays/objects nested deeper than kMaxJsonDepth (a report nests about 8 levels):
//     "r.json:1:65: invalid JSON: arrays and objects are nested deeper than 64 levels"
//   - numbers whose magnitude does not fit a double (6e906, 1e309, -1e400):
//     "r.json:3:12: invalid JSON: number '6e906' is out of range (larger than 1.8e308)"
// Everything else (syntax) is left to the parser. Strings are skipped with their escapes.
#pragma once

#include <string>

#include "runner/base/status.h"

namespace vmm::report {

inline constexpr int kMaxJsonDepth = 64;

Status CheckJsonLimits(const std::string& text, const std::string& name);

}  // namespace vmm::report
