// CheckJsonLimits: a linear pre-scan of JSON text that every report reader runs before nlohmann
// builds a document, so that what follows (the parser, the DOM, the recursive readers of capture
// bodies, the diff) works on bounded input.
//
// Refused, with kInvalidInput and "NAME:LINE:COL: ..." (1-based; columns count bytes):
//   - arrays/objects nested deeper than kMaxJsonDepth (a report nests about 8 levels):
//     "r.json:1:65: invalid JSON: arrays and objects are nested deeper than 64 levels"
//   - numbers whose magnitude does not fit a double (6e906, 1e309, -1e400):
//     "r.json:3:12: invalid JSON: number '6e906' is out of range (larger than 1.8e308)"
//   - strings holding a control character other than tab and newline (base/control_chars.h),
//     escaped (\u001b, \r) or raw (DEL, C1): they would reach terminals and Markdown:
//     "r.json:4:20: invalid JSON: a string holds the control character U+001B (ESC) ..."
// Everything else (syntax) is left to the parser.
#pragma once

#include <string>

#include "runner/base/status.h"

namespace vmm::report {

inline constexpr int kMaxJsonDepth = 64;

Status CheckJsonLimits(const std::string& text, const std::string& name);

// The writer's side of the control-character rule: JSON text (as nlohmann dumps it) with every
// control character CheckJsonLimits refuses replaced by \ufffd, so every report written reads
// back. Text outside strings is left as it is.
std::string ReplaceControlCharacters(std::string json);

}  // namespace vmm::report
