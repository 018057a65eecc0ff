// DetailKey: the name of a detail, address or target in a step record ("size_bytes", "va").
// It views text that lives as long as the process, so a record holds its keys without
// allocating: a string literal is viewed where it is; any other text is interned once (one copy
// per distinct key for the life of the process, shared by every record that uses it). The
// executor names its details with literals; keys read from a report or made at run time
// ("create_p99_us") are interned. Compares, hashes and orders by its text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vmm::report {

class DetailKey {
 public:
  DetailKey() = default;
  // A string literal (or any char array of static storage duration: the key views it in place).
  template <size_t N>
  DetailKey(const char (&literal)[N])  // NOLINT(google-explicit-constructor): as a string
      : text_(literal) {}
  // Text that may not outlive the key: interned. It ends at its first NUL (a report's strings
  // hold none: the reader refuses control characters).
  DetailKey(const std::string& text);  // NOLINT(google-explicit-constructor): as a string
  explicit DetailKey(std::string_view text);

  std::string_view view() const { return text_; }
  operator std::string_view() const { return text_; }  // NOLINT: reads as its text
  std::string str() const { return std::string(text_); }
  const char* c_str() const { return text_; }
  size_t size() const { return view().size(); }
  bool empty() const { return text_[0] == '\0'; }

  friend bool operator==(DetailKey a, DetailKey b) {
    return a.text_ == b.text_ || a.view() == b.view();
  }
  friend bool operator==(DetailKey a, std::string_view b) { return a.view() == b; }
  friend bool operator==(DetailKey a, const char* b) { return a.view() == b; }
  friend bool operator==(DetailKey a, const std::string& b) { return a.view() == b; }
  friend auto operator<=>(DetailKey a, DetailKey b) { return a.view() <=> b.view(); }

 private:
  // NUL-terminated (a literal, or an interned std::string's characters): one pointer, so that a
  // detail is a pointer and a value. Its length is counted where it is needed (keys are short).
  const char* text_ = "";
};

// "a" + key, key + "a": a key in text that is built from it.
inline std::string operator+(const std::string& a, DetailKey b) {
  return a + std::string(b.view());
}
inline std::string operator+(DetailKey a, const std::string& b) {
  return std::string(a.view()) + b;
}
inline std::string operator+(const char* a, DetailKey b) { return a + std::string(b.view()); }
inline std::string operator+(DetailKey a, const char* b) { return std::string(a.view()) + b; }

// The interned copy of `text`, NUL-terminated: the same pointer for equal text, valid until the
// process ends. Thread-safe.
const char* InternKey(std::string_view text);

}  // namespace vmm::report
