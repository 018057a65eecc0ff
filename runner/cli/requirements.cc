#include "runner/cli/requirements.h"

#include "runner/base/format.h"

namespace vmm {

std::string UnmetRequirement(const Requirements& r, const DeviceInfo& info) {
  if (r.backend.set && r.backend.value != info.backend) {
    return "requires the " + r.backend.value + " backend; this run uses " + info.backend;
  }
  if (r.devices.set && static_cast<uint64_t>(info.device_count) < r.devices.value) {
    return "requires " + std::to_string(r.devices.value) + " devices; this " + info.backend +
           " backend has " + std::to_string(info.device_count);
  }
  if (r.device_memory.set && info.total_memory < r.device_memory.value) {
    return "requires " + FormatBytes(r.device_memory.value) + " of device memory; " + info.name +
           " has " + FormatBytes(info.total_memory);
  }
  return "";
}

}  // namespace vmm
