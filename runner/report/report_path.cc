#include "runner/report/report_path.h"

#include "runner/base/sha256.h"

namespace vmm::report {
namespace {

bool IsSafe(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-' || c == '=' || c == ',';
}

}  // namespace

std::string SafeFileName(const std::string& name) {
  constexpr size_t kHashDigits = 8;
  const bool cut = name.size() > kMaxReportNameBytes;
  std::string out = name.substr(0, cut ? kMaxReportNameBytes - kHashDigits - 1 : name.size());
  for (char& c : out) {
    if (!IsSafe(c)) c = '_';
  }
  if (cut) out += "~" + Sha256Hex(name).substr(0, kHashDigits);
  if (out.empty()) return "_";
  if (out[0] == '.') out[0] = '_';
  return out;
}

std::string DefaultReportFileName(const std::string& scenario_name, const std::string& backend) {
  return SafeFileName(scenario_name) + "." + SafeFileName(backend) + ".json";
}

}  // namespace vmm::report
