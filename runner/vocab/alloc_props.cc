#include "runner/vocab/alloc_props.h"

#include <array>
#include <utility>

namespace vmm {
namespace {

constexpr std::array<std::pair<MemLocation, const char*>, 3> kLocationNames = {{
    {MemLocation::kDevice, "device"},
    {MemLocation::kHost, "host"},
    {MemLocation::kHostNuma, "host_numa"},
}};

constexpr std::array<Capability, 7> kCapabilities = {
    Capability::kPosixFd,    Capability::kFabric,      Capability::kHostLocation,
    Capability::kHostNuma,   Capability::kCompression, Capability::kGpuDirectRdma,
    Capability::kCheckpoint,
};

}  // namespace

const char* MemLocationName(MemLocation location) {
  for (const auto& [l, name] : kLocationNames)
    if (l == location) return name;
  return "device";
}

bool ParseMemLocation(const std::string& name, MemLocation* out) {
  for (const auto& [l, n] : kLocationNames) {
    if (name != n) continue;
    *out = l;
    return true;
  }
  return false;
}

const char* GranularityKindName(GranularityKind kind) {
  return kind == GranularityKind::kMinimum ? "minimum" : "recommended";
}

std::span<const Capability> AllCapabilities() { return kCapabilities; }

const char* CapabilityName(Capability capability) {
  switch (capability) {
    case Capability::kPosixFd:
      return "posix_fd";
    case Capability::kFabric:
      return "fabric";
    case Capability::kHostLocation:
      return "host_location";
    case Capability::kHostNuma:
      return "host_numa";
    case Capability::kCompression:
      return "compression";
    case Capability::kGpuDirectRdma:
      return "gpudirect_rdma";
    case Capability::kCheckpoint:
      return "checkpoint";
  }
  return "?";
}

bool ParseCapability(const std::string& name, Capability* out) {
  for (Capability c : kCapabilities) {
    if (name != CapabilityName(c)) continue;
    *out = c;
    return true;
  }
  return false;
}

AllocProps TrialProps(Capability capability) {
  AllocProps props;
  switch (capability) {
    case Capability::kPosixFd:
      props.handle_types = kHandleTypePosixFd;
      break;
    case Capability::kFabric:
      props.handle_types = kHandleTypeFabric;
      break;
    case Capability::kHostLocation:
      props.location = MemLocation::kHost;
      break;
    case Capability::kHostNuma:
      props.location = MemLocation::kHostNuma;
      props.location_id = 0;
      break;
    case Capability::kCompression:
      props.compression = true;
      break;
    case Capability::kGpuDirectRdma:
      props.gpudirect_rdma = true;
      break;
    case Capability::kCheckpoint:
      break;
  }
  return props;
}

bool Granted(Capability capability, const AllocProps& granted, std::string* missing) {
  const AllocProps asked = TrialProps(capability);
  std::string why;
  switch (capability) {
    case Capability::kPosixFd:
    case Capability::kFabric:
      if ((granted.handle_types & asked.handle_types) == 0)
        why = "the handle type is not among the granted ones";
      break;
    case Capability::kHostLocation:
    case Capability::kHostNuma:
      // Host memory is what was asked; driver 580 reads a HOST create back as HOST_NUMA node 0.
      if (granted.location != asked.location && !(capability == Capability::kHostLocation &&
                                                  granted.location == MemLocation::kHostNuma)) {
        why = std::string("the allocation was placed in ") + MemLocationName(granted.location) +
              " memory";
      }
      break;
    case Capability::kCompression:
      if (!granted.compression) why = "compression was not granted (read back uncompressed)";
      break;
    case Capability::kGpuDirectRdma:
      if (!granted.gpudirect_rdma) why = "the GPUDirect RDMA flag was not granted (read back 0)";
      break;
    case Capability::kCheckpoint:  // no allocation decides it (the engine asks the driver)
      break;
  }
  if (missing != nullptr) *missing = why;
  return why.empty();
}

}  // namespace vmm
