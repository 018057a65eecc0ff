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

std::string UnmetCapability(const Requirements& r, Engine& engine) {
  for (const Located<std::string>& name : r.capabilities) {
    Capability capability;
    if (!ParseCapability(name.value, &capability)) continue;  // the schema allows only the names
    std::string why_not;
    Status probe = engine.ProbeCapability(capability, &why_not);
    if (!probe.ok()) why_not = "the probe failed: " + probe.message();
    if (!why_not.empty()) {
      return "requires capability '" + name.value + "'; " + engine.info().name +
             " lacks it: " + why_not;
    }
  }
  return "";
}

}  // namespace vmm
