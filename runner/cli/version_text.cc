#include "runner/cli/version_text.h"

#include <sstream>
#include <vector>

#include "version.h"

namespace vmm {

namespace {

std::string Join(const std::vector<std::string>& items, const char* separator) {
  std::string joined;
  for (const std::string& item : items) {
    if (!joined.empty()) joined += separator;
    joined += item;
  }
  return joined;
}

}  // namespace

std::string DescribeCudaArchitectures(const std::string& architectures) {
  std::vector<std::string> machine_code, ptx;
  std::stringstream list(architectures);
  std::string entry;
  while (std::getline(list, entry, ';')) {
    if (entry.empty()) continue;
    const size_t dash = entry.find('-');
    const std::string number = entry.substr(0, dash);
    const std::string kind = dash == std::string::npos ? "" : entry.substr(dash + 1);
    if (kind != "virtual") machine_code.push_back("sm_" + number);
    if (kind != "real") ptx.push_back("compute_" + number);
  }
  std::string text;
  if (!machine_code.empty()) text += Join(machine_code, ", ") + " machine code";
  if (!ptx.empty()) {
    if (!text.empty()) text += "; ";
    text += "PTX for " + Join(ptx, ", ") + " (JIT-compiled on other GPUs)";
  }
  return text.empty() ? "unknown" : text;
}

std::string VersionText(const std::string& version, const std::string& git_sha, bool cuda_backend,
                        const std::string& cuda_runtime, const std::string& architectures) {
  std::string text = "vmm-run " + version + " (" + git_sha + ")\n";
  if (!cuda_backend) return text + "CUDA backend: not built";
  text += "CUDA backend: built\n";
  text +=
      "CUDA runtime: " + cuda_runtime + " (linked statically; the driver is loaded at run time)\n";
  text += "GPU code: " + DescribeCudaArchitectures(architectures);
  return text;
}

std::string VersionText() {
  return VersionText(VMMRUN_VERSION, VMMRUN_GIT_SHA, VMMRUN_CUDA_BACKEND != 0,
                     VMMRUN_CUDA_RUNTIME_VERSION, VMMRUN_CUDA_ARCHITECTURES);
}

}  // namespace vmm
