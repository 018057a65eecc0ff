// FieldReader: typed, exception-free reads of report JSON fields for report_parse.cc, collecting
// one message per problem with the field's JSON pointer. Internal to runner/report.
#pragma once

#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace vmm::report {

using Json = nlohmann::ordered_json;

// "a string", "an object", "null": the JSON type of `j` for messages.
inline std::string TypeText(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::null:
      return "null";
    default:
      return "a number";
  }
}

// RFC 6901 escaping of one reference token.
inline std::string EscapePointerToken(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// Reads typed fields out of JSON objects, recording one message per problem. Every accessor takes
// the JSON pointer of the object it reads from; a missing or mistyped field leaves *out unchanged.
class FieldReader {
 public:
  explicit FieldReader(std::string name) : name_(std::move(name)) {}

  const std::vector<std::string>& errors() const { return errors_; }

  void Error(const std::string& pointer, const std::string& message) {
    errors_.push_back(name_ + ": " + (pointer.empty() ? "" : pointer + ": ") + message);
  }

  // The member `key` of `obj`, or nullptr (with a message when `required`).
  const Json* Member(const Json& obj, const std::string& ptr, const char* key, bool required) {
    auto it = obj.find(key);
    if (it != obj.end()) return &*it;
    if (required) Error(ptr, std::string("missing required key '") + key + "'");
    return nullptr;
  }

  // The member `key` when it has the expected type (checked by `ok`), else nullptr.
  template <typename Check>
  const Json* Typed(const Json& obj, const std::string& ptr, const char* key, bool required,
                    Check ok, const char* expected) {
    const Json* j = Member(obj, ptr, key, required);
    if (j == nullptr) return nullptr;
    if (!ok(*j)) {
      Error(Child(ptr, key), std::string("expected ") + expected + ", got " + TypeText(*j));
      return nullptr;
    }
    return j;
  }

  const Json* Object(const Json& obj, const std::string& ptr, const char* key, bool required) {
    return Typed(
        obj, ptr, key, required, [](const Json& j) { return j.is_object(); }, "an object");
  }
  const Json* Array(const Json& obj, const std::string& ptr, const char* key, bool required) {
    return Typed(
        obj, ptr, key, required, [](const Json& j) { return j.is_array(); }, "an array");
  }

  void String(const Json& obj, const std::string& ptr, const char* key, std::string* out) {
    auto is = [](const Json& j) { return j.is_string(); };
    if (const Json* j = Typed(obj, ptr, key, true, is, "a string")) *out = j->get<std::string>();
  }

  void Bool(const Json& obj, const std::string& ptr, const char* key, bool* out) {
    auto is = [](const Json& j) { return j.is_boolean(); };
    if (const Json* j = Typed(obj, ptr, key, true, is, "a boolean")) *out = j->get<bool>();
  }

  // A JSON number or null (a non-finite value, read as NaN).
  void Double(const Json& obj, const std::string& ptr, const char* key, double* out) {
    auto is = [](const Json& j) { return j.is_number() || j.is_null(); };
    if (const Json* j = Typed(obj, ptr, key, true, is, "a number")) {
      *out = j->is_null() ? std::numeric_limits<double>::quiet_NaN() : j->get<double>();
    }
  }

  // A JSON integer in [lo, hi].
  template <typename T>
  void Integer(const Json& obj, const std::string& ptr, const char* key, T* out,
               T lo = std::numeric_limits<T>::min(), T hi = std::numeric_limits<T>::max()) {
    const Json* j = Member(obj, ptr, key, true);
    if (j == nullptr) return;
    bool in_range = false;
    if (j->is_number_unsigned()) {  // JSON's non-negative integers: both bounds apply
      const uint64_t v = j->get<uint64_t>();
      if constexpr (std::is_signed_v<T>) {
        in_range = hi >= 0 && (lo <= 0 || v >= static_cast<uint64_t>(lo)) &&
                   v <= static_cast<uint64_t>(hi);
      } else {
        in_range = v >= lo && v <= hi;
      }
    } else if (j->is_number_integer()) {
      const int64_t v = j->get<int64_t>();
      in_range = v >= static_cast<int64_t>(lo) &&
                 (v < 0 || static_cast<uint64_t>(v) <= static_cast<uint64_t>(hi));
    } else {
      Error(Child(ptr, key),
            "expected an integer, got " + (j->is_number() ? j->dump() : TypeText(*j)));
      return;
    }
    if (!in_range) {
      Error(Child(ptr, key), "expected an integer in [" + std::to_string(lo) + ", " +
                                 std::to_string(hi) + "], got " + j->dump());
      return;
    }
    *out = j->get<T>();
  }

  // A 64-bit unsigned integer written as a decimal string ("2097152").
  void DecimalString(const Json& obj, const std::string& ptr, const char* key, uint64_t* out) {
    auto is = [](const Json& j) { return j.is_string(); };
    const Json* j = Typed(obj, ptr, key, true, is, "a decimal integer string");
    if (j == nullptr) return;
    const std::string& s = j->get_ref<const std::string&>();
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
      Error(Child(ptr, key), "expected a decimal integer string, got '" + s + "'");
      return;
    }
    *out = v;
  }

  // A string or null (null leaves *out empty).
  void NullableString(const Json& obj, const std::string& ptr, const char* key,
                      std::optional<std::string>* out) {
    auto is = [](const Json& j) { return j.is_string() || j.is_null(); };
    if (const Json* j = Typed(obj, ptr, key, true, is, "a string or null")) {
      if (j->is_string()) *out = j->get<std::string>();
    }
  }

  // A string that `parse` accepts; otherwise "expected one of <choices>, got '<s>'".
  template <typename T, typename Parse>
  void Enum(const Json& obj, const std::string& ptr, const char* key, T* out, Parse parse,
            const char* choices) {
    std::string s;
    const size_t before = errors_.size();
    String(obj, ptr, key, &s);
    if (errors_.size() != before) return;
    if (!parse(s, out))
      Error(Child(ptr, key), std::string("expected one of ") + choices + ", got '" + s + "'");
  }

  static std::string Child(const std::string& ptr, const std::string& key) {
    return ptr + "/" + EscapePointerToken(key);
  }

 private:
  std::string name_;
  std::vector<std::string> errors_;
};

}  // namespace vmm::report
