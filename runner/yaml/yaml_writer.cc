#include "runner/yaml/yaml_writer.h"

#include <cstdio>
#include <string_view>

namespace vmm {
namespace {

// Plain scalars YAML would read as something other than a string.
bool LooksTyped(const std::string& s) {
  if (s == "~" || s == "null" || s == "Null" || s == "NULL" || s == "true" || s == "false" ||
      s == "True" || s == "False" || s == "TRUE" || s == "FALSE")
    return true;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  bool digit = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+' && c != '_') {
      return false;
    }
  }
  return digit;
}

// True when `s` can be written plain in flow context and reads back as the same text.
bool PlainSafe(const std::string& s) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ') return false;
  constexpr std::string_view kNoStart = "-?:,[]{}#&*!|>'\"%@`";
  if (kNoStart.find(s[0]) != std::string_view::npos) {
    // "-5" and "-x" are plain scalars; "- x" and a lone "-" are not.
    if (!(s[0] == '-' && s.size() > 1 && s[1] != ' ')) return false;
  }
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c == ',' || c == '[' || c == ']' || c == '{' || c == '}') return false;
    if (c == ':' && (i + 1 == s.size() || s[i + 1] == ' ')) return false;
    if (c == '#' && i > 0 && s[i - 1] == ' ') return false;
  }
  return true;
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

void Flow(const YamlValue& v, std::string* out) {
  switch (v.kind) {
    case YamlValue::Kind::kNull:
      *out += "~";
      return;
    case YamlValue::Kind::kScalar:
      *out += YamlScalarText(v.scalar, v.quoted);
      return;
    case YamlValue::Kind::kSequence:
      *out += "[";
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i > 0) *out += ", ";
        Flow(v.items[i], out);
      }
      *out += "]";
      return;
    case YamlValue::Kind::kMap:
      *out += "{";
      for (size_t i = 0; i < v.members.size(); ++i) {
        if (i > 0) *out += ", ";
        *out += YamlScalarText(v.members[i].key, false) + ": ";
        Flow(v.members[i].value, out);
      }
      *out += "}";
      return;
  }
}

// A value of the top-level map: maps and lists one entry per line, deeper levels in flow style.
void Block(const YamlValue& v, std::string* out) {
  if (v.IsMap() && !v.members.empty()) {
    for (const YamlMember& m : v.members) {
      *out += "\n  " + YamlScalarText(m.key, false) + ": ";
      Flow(m.value, out);
    }
  } else if (v.IsSequence() && !v.items.empty()) {
    for (const YamlValue& item : v.items) {
      *out += "\n  - ";
      Flow(item, out);
    }
  } else {
    *out += " ";
    Flow(v, out);
  }
}

}  // namespace

std::string YamlScalarText(const std::string& text, bool quoted) {
  if (PlainSafe(text) && !(quoted && LooksTyped(text))) return text;
  return Quote(text);
}

std::string WriteYaml(const YamlValue& document) {
  std::string out;
  if (!document.IsMap()) {
    Flow(document, &out);
    return out + "\n";
  }
  for (const YamlMember& m : document.members) {
    out += YamlScalarText(m.key, false) + ":";
    Block(m.value, &out);
    out += "\n";
  }
  return out;
}

}  // namespace vmm
