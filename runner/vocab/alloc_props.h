// What a physical allocation is asked to be (CUmemAllocationProp), and the device capabilities a
// scenario may require. Words shared by the plan (which reads them from `create`,
// `check_properties`, `check_granularity` and `requires: {capabilities}`), the engines (which
// grant them) and the reports. Plain data; no engine here.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace vmm {

// Where a Create places physical memory (CUmemLocationType).
enum class MemLocation : uint8_t {
  kDevice,    // a GPU's memory; AllocProps::location_id is the device ordinal
  kHost,      // host memory (CUDA 13)
  kHostNuma,  // host memory on one NUMA node; location_id is the node
};
// "device", "host", "host_numa" (the scenario and report spelling).
const char* MemLocationName(MemLocation location);
// Inverse of MemLocationName; false when `name` is not one of them.
bool ParseMemLocation(const std::string& name, MemLocation* out);

// Shareable handle types a Create asks for, as bits (the values of CUmemAllocationHandleType).
inline constexpr uint32_t kHandleTypePosixFd = 0x1;
inline constexpr uint32_t kHandleTypeFabric = 0x8;

// What a Create asks for (CUmemAllocationProp), or what the driver granted (read back with
// cuMemGetAllocationPropertiesFromHandle). The defaults are the plain allocation every scenario
// made before properties existed: device memory on the engine's device, not shareable, not
// compressible, no RDMA flag. Compression and the RDMA flag are hints: a driver may create the
// allocation without them (the documentation says to read the properties back); a location or a
// handle type it cannot provide is refused with an error that names it.
struct AllocProps {
  uint64_t size = 0;
  MemLocation location = MemLocation::kDevice;
  int location_id = -1;       // -1: the engine's device for kDevice; node 0 for kHostNuma
  uint32_t handle_types = 0;  // kHandleType* bits
  bool compression = false;
  bool gpudirect_rdma = false;

  // True when nothing beyond the size and the engine's own device is asked for.
  bool IsPlain() const {
    return location == MemLocation::kDevice && location_id < 0 && handle_types == 0 &&
           !compression && !gpudirect_rdma;
  }
};

// cuMemGetAllocationGranularity's two answers.
enum class GranularityKind : uint8_t { kMinimum, kRecommended };
// "minimum", "recommended".
const char* GranularityKindName(GranularityKind kind);

// What `requires: {capabilities: [...]}` may name: each is decided before the run starts, the
// memory ones by a trial create of one granule with the property (plus the device attribute where
// one exists), checkpoint by asking the driver for this process's checkpoint state.
enum class Capability : uint8_t {
  kPosixFd,        // POSIX file descriptor handles (cuMemExportToShareableHandle)
  kFabric,         // fabric handles (IMEX channels across nodes)
  kHostLocation,   // physical memory in host RAM (CU_MEM_LOCATION_TYPE_HOST)
  kHostNuma,       // host RAM on NUMA node 0 (CU_MEM_LOCATION_TYPE_HOST_NUMA)
  kCompression,    // generic compression granted (read back, not just accepted)
  kGpuDirectRdma,  // the GPUDirect RDMA flag granted (read back)
  kCheckpoint,     // cuCheckpointProcess* (checkpoint / restore ops): the driver answers them
};
// Every capability, in declaration order.
std::span<const Capability> AllCapabilities();
// "posix_fd", "fabric", "host_location", "host_numa", "compression", "gpudirect_rdma",
// "checkpoint".
const char* CapabilityName(Capability capability);
// Inverse of CapabilityName; false when `name` is not one of them.
bool ParseCapability(const std::string& name, Capability* out);
// The properties of the trial allocation that decides `capability` (size left 0: the prober
// fills in the granularity of these properties); plain properties for kCheckpoint, which no
// allocation decides.
AllocProps TrialProps(Capability capability);
// Whether `granted` (read back from the trial allocation) has what `capability` asks for; when it
// does not, *missing says what is missing ("compression was not granted").
bool Granted(Capability capability, const AllocProps& granted, std::string* missing);

}  // namespace vmm
