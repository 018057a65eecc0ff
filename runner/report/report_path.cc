#include "runner/report/report_path.h"

namespace vmm::report {
namespace {

bool IsSafe(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-' || c == '=' || c == ',';
}

}  // namespace

std::string SafeFileName(const std::string& name) {
  std::string out = name.substr(0, kMaxReportNameBytes);
  for (char& c : out) {
    if (!IsSafe(c)) c = '_';
  }
  if (out.empty()) return "_";
  if (out[0] == '.') out[0] = '_';
  return out;
}

std::string DefaultReportFileName(const std::string& scenario_name, const std::string& backend) {
  return SafeFileName(scenario_name) + "." + SafeFileName(backend) + ".json";
}

}  // namespace vmm::report
