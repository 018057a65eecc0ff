#include "runner/pipeline/provenance.h"

#include <ctime>

#include "kernels/datagen.h"
#include "runner/base/sha256.h"
#include "version.h"

namespace vmm {

std::string UtcNowIso8601() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void FillProvenance(const ProvenanceInput& input, const DeviceInfo& device, report::Report* out) {
  out->tool_version = VMMRUN_VERSION;
  out->git_sha = VMMRUN_GIT_SHA;
  out->argv = input.argv;
  out->scenario_path = input.scenario_path;
  out->scenario_sha256 = Sha256Hex(input.scenario_text);
  out->scenario_name = input.scenario_name;
  out->backend = device.backend;
  out->backend_reason = input.backend_reason;
  out->granularity = input.granularity;
  out->data_hash_scheme = datagen::kHashScheme;
  out->started_at = UtcNowIso8601();
  report::DeviceRecord& d = out->device;
  d.name = device.name;
  d.compute_capability = device.compute_capability;
  d.driver_version = device.driver_version;
  d.runtime_version = device.runtime_version;
  d.ordinal = device.ordinal;
  d.vmm_supported = device.vmm_supported;
  d.granularity_min = device.granularity_min;
  d.granularity_recommended = device.granularity_recommended;
  d.total_memory = device.total_memory;
}

}  // namespace vmm
