#include "runner/report/scalar_json.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace vmm::report {
namespace {

bool IsExactJsonInteger(int64_t v) {
  return v >= -kMaxExactJsonInteger && v <= kMaxExactJsonInteger;
}

// A string that ScalarToJson writes for an int64 outside the exact range: canonical decimal (no
// '+', no leading zeros), in int64 range, and outside [-2^53+1, 2^53-1].
bool ParseWideInteger(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  const size_t digits = s[0] == '-' ? 1 : 0;
  if (s.size() == digits || s[digits] == '0') return false;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || IsExactJsonInteger(v)) return false;
  *out = v;
  return true;
}

}  // namespace

nlohmann::ordered_json ScalarToJson(const Scalar& value) {
  if (const bool* b = std::get_if<bool>(&value)) return *b;
  if (const int64_t* i = std::get_if<int64_t>(&value)) {
    if (IsExactJsonInteger(*i)) return *i;
    return std::to_string(*i);
  }
  if (const double* d = std::get_if<double>(&value)) {
    if (!std::isfinite(*d)) return nullptr;
    return *d;
  }
  return std::get<std::string>(value);
}

bool JsonToScalar(const nlohmann::ordered_json& j, Scalar* out) {
  using Type = nlohmann::ordered_json::value_t;
  switch (j.type()) {
    case Type::boolean:
      *out = j.get<bool>();
      return true;
    case Type::number_integer:
      *out = j.get<int64_t>();
      return true;
    case Type::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        *out = j.get<double>();
      } else {
        *out = static_cast<int64_t>(u);
      }
      return true;
    }
    case Type::number_float:
      *out = j.get<double>();
      return true;
    case Type::null:
      *out = std::numeric_limits<double>::quiet_NaN();
      return true;
    case Type::string: {
      const std::string& s = j.get_ref<const std::string&>();
      int64_t wide = 0;
      if (ParseWideInteger(s, &wide)) {
        *out = wide;
      } else {
        *out = s;
      }
      return true;
    }
    default:
      return false;
  }
}

}  // namespace vmm::report
