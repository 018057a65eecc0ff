#include "runner/pipeline/requirements.h"

#include <algorithm>

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

report::DeviceRecord DeviceRecordOf(const DeviceInfo& info, int scenario_device) {
  report::DeviceRecord d;
  d.name = info.name;
  d.compute_capability = info.compute_capability;
  d.driver_version = info.driver_version;
  d.runtime_version = info.runtime_version;
  d.ordinal = info.ordinal;
  d.vmm_supported = info.vmm_supported;
  d.granularity_min = info.granularity_min;
  d.granularity_recommended = info.granularity_recommended;
  d.total_memory = info.total_memory;
  d.scenario_device = scenario_device;
  d.pci_bus_id = info.pci_bus_id;
  return d;
}

std::string DescribeDevices(const Plan& plan, Engine& engine,
                            std::vector<report::DeviceRecord>* devices) {
  std::vector<DeviceInfo> infos(static_cast<size_t>(plan.devices));
  auto name = [&](int d) {
    return "device " + std::to_string(d) + " (ordinal " + std::to_string(infos[d].ordinal) + ")";
  };
  for (int d : plan.used_devices) {
    const int ordinal = ScenarioDeviceOrdinal(engine.info(), d);
    Status s = engine.DescribeDevice(ordinal, &infos[d]);
    if (!s.ok())
      return "cannot describe the scenario's device " + std::to_string(d) + ": " + s.message();
    devices->push_back(DeviceRecordOf(infos[d], d));
    if (!infos[d].vmm_supported) return name(d) + " does not support virtual memory management";
  }
  for (const auto& [accessor, owner] : plan.peer_access) {
    const std::vector<int>& peers = infos[accessor].peers;
    if (std::find(peers.begin(), peers.end(), infos[owner].ordinal) == peers.end()) {
      return name(accessor) + " cannot access the memory of " + name(owner) +
             ": cuDeviceCanAccessPeer is 0";
    }
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
