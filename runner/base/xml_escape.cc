#include "runner/base/xml_escape.h"

namespace vmm {

std::string XmlEscape(const std::string& text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += attribute ? "&quot;" : "\"";
        break;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        // XML 1.0 cannot carry other C0 controls, not even as character references.
        if (c < 0x20 || c == 0x7f) {
          out += "\xEF\xBF\xBD";  // U+FFFD
        } else {
          out += ch;
        }
    }
  }
  return out;
}

}  // namespace vmm
