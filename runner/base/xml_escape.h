// Text for XML (JUnit reports, the timeline's SVG/HTML): names come from user files.
#pragma once

#include <string>

namespace vmm {

// Escapes `text` for XML 1.0 content or (with `attribute`) a double-quoted attribute value; C0
// controls XML cannot carry become U+FFFD.
std::string XmlEscape(const std::string& text, bool attribute);

}  // namespace vmm
